"""Real result files, written by each framework running offline: a baseline, its A/A twin (the same agent run
again) and a worse run, for inspect_ai (the mockllm provider; a solver that answers from the sample id and a
scorer that checks it), lm-evaluation-harness (a task from a local JSONL file, a deterministic LM subclass,
lm-eval's own EvaluationTracker writing the --log_samples files) and promptfoo (its CLI with a JS provider).

Each run holds ``N_SAMPLES`` samples; the worse agent misses every sample whose number is 0 mod ``MISS_EVERY``
(and, in inspect, one sample raises: an errored sample, an unscored trial)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

N_SAMPLES = 30
EPOCHS = 2  # inspect epochs: trials per sample
MISS_EVERY = 3  # the worse agent misses sample i when i % MISS_EVERY == 0 (10 of 30)
ERRORED = 4  # in the worse inspect run, sample s-4 raises (an errored sample, unscored)


def inspect_runs_in(root: Path) -> dict[str, Path]:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
    from inspect_ai.solver import solver

    @solver
    def answer(worse: bool):
        async def solve(state, generate):
            n = int(str(state.sample_id).split("-")[1])
            if worse and n == ERRORED:
                raise RuntimeError("tool crashed")
            state.output.completion = "no" if worse and n % MISS_EVERY == 0 else "yes"
            return state

        return solve

    @scorer(metrics=[accuracy()])
    def says_target():
        async def score(state, target):
            return Score(value=CORRECT if state.output.completion == target.text else INCORRECT)

        return score

    def task(worse: bool) -> Task:
        samples = [Sample(input=f"question {i}", target="yes", id=f"s-{i}",
                          metadata={"topic": ["billing", "orders", "returns"][i % 3], "hard": i >= 20})
                   for i in range(N_SAMPLES)]
        return Task(dataset=samples, solver=answer(worse), scorer=says_target(), epochs=EPOCHS, name="desk")

    out = {}
    for name, worse in (("base", False), ("twin", False), ("worse", True)):
        log = inspect_eval(task(worse), model="mockllm/model", log_dir=str(root / name), display="none",
                           fail_on_error=False)[0]  # errored samples are recorded, the run goes on
        out[name] = Path(log.location)
    return out



TASK_YAML = """task: arith
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Q: {{{{q}}}}\\nA:"
doc_to_target: "{{{{a}}}}"
generation_kwargs:
  until: ["\\n"]
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def lm_eval_runs_in(root: Path) -> dict[str, Path]:
    from lm_eval import evaluator
    from lm_eval.api.model import LM
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    data = root / "arith.jsonl"
    data.write_text("".join(json.dumps({"q": f"{i}+{i}", "a": str(2 * i), "op": ["add", "double"][i % 2]}) + "\n"
                            for i in range(N_SAMPLES)), encoding="utf-8")
    (root / "arith.yaml").write_text(TASK_YAML.format(data=data), encoding="utf-8")

    class Adder(LM):
        def __init__(self, worse: bool) -> None:
            super().__init__()
            self.worse = worse

        def loglikelihood(self, requests):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError

        def generate_until(self, requests):
            out = []
            for r in requests:
                a, _ = r.arguments[0].split("Q: ")[1].split("\n")[0].split("+")
                out.append("?" if self.worse and int(a) % MISS_EVERY == 0 else str(2 * int(a)))
            return out

    manager = TaskManager(include_path=str(root))
    out = {}
    for name, worse in (("base", False), ("twin", False), ("worse", True)):
        tracker = EvaluationTracker(output_path=str(root / name))
        res = evaluator.simple_evaluate(model=Adder(worse), tasks=["arith"], task_manager=manager, log_samples=True,
                                        evaluation_tracker=tracker, torch_random_seed=None)  # no torch import
        tracker.save_results_aggregated(results=res, samples=res["samples"])
        for task_name in res["configs"]:
            tracker.save_results_samples(task_name=task_name, samples=res["samples"][task_name])
        out[name] = root / name
    return out


PROMPTFOO_PROVIDER = """class Adder {
  constructor(options) { this.worse = (options.config || {}).worse; this.providerId = options.id || 'adder'; }
  id() { return this.providerId; }
  async callApi(prompt, context) {
    const n = Number(context.vars.n);
    if (this.worse && n === ERRORED) { return { error: 'tool crashed' }; }
    return { output: (this.worse && n % MISS === 0) ? '?' : String(2 * n) };
  }
}
module.exports = Adder;
""".replace("ERRORED", str(ERRORED)).replace("MISS", str(MISS_EVERY))


def promptfoo_config(worse: bool) -> str:
    tests = "".join(f"  - vars: {{n: {i}, op: {['add', 'double'][i % 2]}}}\n"
                    f"    assert: [{{type: equals, value: \"{2 * i}\"}}]\n" for i in range(N_SAMPLES))
    return ("prompts: [\"What is {{n}}+{{n}}?\"]\nproviders:\n  - id: file://provider.js\n"
            f"    label: adder\n    config: {{worse: {str(worse).lower()}}}\ntests:\n{tests}")


def promptfoo_runs_in(root: Path) -> dict[str, Path]:
    """Three ``promptfoo eval -o`` runs through its CLI, offline (a JS provider, no telemetry, no update check)."""
    exe = shutil.which("promptfoo")
    assert exe is not None
    (root / "provider.js").write_text(PROMPTFOO_PROVIDER, encoding="utf-8")
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(root / "config"), "PROMPTFOO_DISABLE_SHARING": "1"}
    out = {}
    for name, worse in (("base", False), ("twin", False), ("worse", True)):
        config = root / f"{name}.yaml"
        config.write_text(promptfoo_config(worse), encoding="utf-8")
        out[name] = root / f"{name}.json"
        done = subprocess.run([exe, "eval", "-c", str(config), "-o", str(out[name]), "--no-cache",
                               "--no-progress-bar"], check=False, cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert out[name].is_file(), f"promptfoo eval wrote no {out[name].name}: {done.stderr[-2000:]}"
    return out


DEEPEVAL_SCRIPT = """import sys
from deepeval import evaluate
from deepeval.evaluate import DisplayConfig, ErrorConfig
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase


class Refund(BaseMetric):  # a custom metric: no model, no network
    def __init__(self, threshold=0.5):
        self.threshold = threshold

    def measure(self, test_case, *args, **kwargs):
        if test_case.input.startswith("crash"):
            raise RuntimeError("judge crashed")
        self.score = 1.0 if "refund" in (test_case.actual_output or "") else 0.0
        self.success = self.score >= self.threshold
        self.reason = "mentions a refund" if self.success else "no refund"
        return self.score

    async def a_measure(self, test_case, *args, **kwargs):
        return self.measure(test_case)

    def is_successful(self):
        return self.success

    @property
    def __name__(self):
        return "Refund"


worse = sys.argv[1] == "worse"
cases = [LLMTestCase(input=("crash " if worse and i == ERRORED else "") + f"order {i} arrived broken",
                     actual_output="sorry" if worse and i % MISS_EVERY == 0 else "refund issued", name=f"case-{i}",
                     additional_metadata={"channel": ["email", "chat"][i % 2]}) for i in range(N_SAMPLES)]
evaluate(test_cases=cases, metrics=[Refund()], error_config=ErrorConfig(ignore_errors=True),
         display_config=DisplayConfig(print_results=False, show_indicator=False))
""".replace("ERRORED", str(ERRORED)).replace("MISS_EVERY", str(MISS_EVERY)).replace("N_SAMPLES", str(N_SAMPLES))


def deepeval_python() -> str | None:
    """An interpreter that has deepeval: this one, or ``WHILEAI_DEEPEVAL_PYTHON`` (deepeval pins click<8.4, which
    huggingface_hub's click>=8.4.2 excludes, so .ci/run installs it in its own environment)."""
    import importlib.util
    import sys

    if importlib.util.find_spec("deepeval") is not None:
        return sys.executable
    return os.environ.get("WHILEAI_DEEPEVAL_PYTHON") or None


def deepeval_runs_in(root: Path, python: str) -> dict[str, Path]:
    """Three deepeval ``evaluate`` runs with a custom metric, offline; each writes its test_run_*.json into
    DEEPEVAL_RESULTS_FOLDER."""
    (root / "run.py").write_text(DEEPEVAL_SCRIPT, encoding="utf-8")
    out = {}
    for name in ("base", "twin", "worse"):
        folder = root / name
        env = {**os.environ, "DEEPEVAL_RESULTS_FOLDER": str(folder), "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
               "DEEPEVAL_DISABLE_PROGRESS_BAR": "1", "ERROR_REPORTING": "0"}
        done = subprocess.run([python, "run.py", "worse" if name == "worse" else "better"], cwd=root, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        found = sorted(folder.glob("test_run_*.json")) if folder.is_dir() else []
        assert found, f"deepeval wrote no test_run_*.json in {folder}: {done.stderr[-2000:]}"
        out[name] = found[-1]
    return out
