"""Benchmark: read a 100k-sample inspect_ai log and gate it (issue 33), beside inspect's own ``read_eval_log``.

Two inspect logs (``--format json`` by default, or ``eval``) of ``--samples`` samples (default 100,000, one epoch) are written with inspect's own API: a
real 4-sample run on the ``mockllm`` model is the template, its samples copied under new ids and scores
(the worse log misses every ``--miss-every``-th sample) and written with ``write_eval_log``. Each measurement
then runs in a fresh child process (benchmarks/harness.py), so its wall time and peak RSS are its own:

* ``inspect read_eval_log``: inspect reading one whole log (every sample, messages included);
* ``whileai import``: ``whileai_core.interop.load.load_results`` on one log (header + sample summaries) and its
  run document;
* ``whileai gate``: both logs imported and ``compare_documents`` (the paired suite gate, Holm over every
  sample), what ``whileai gate BEFORE AFTER`` does.

Usage: ``python benchmarks/bench_import.py [--samples 100000] [--format json|eval] [--miss-every 20] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from harness import ROOT, child

sys.path.insert(0, str(ROOT))


def _template(directory: Path) -> object:
    """A real inspect log (4 samples on mockllm, a solver that answers itself) read back whole: the header and
    sample shape to copy."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
    from inspect_ai.solver import solver

    @solver
    def answer():  # answers without calling the model: mockllm's generate counts tokens with tiktoken,
        async def solve(state, generate):  # which downloads its encoding (a network call)
            state.output.completion = "Default"
            return state

        return solve

    @scorer(metrics=[accuracy()])
    def says_yes():
        async def score(state, target):
            return Score(value=CORRECT if target.text in state.output.completion else INCORRECT)

        return score

    task = Task(dataset=[Sample(input=f"q{i}", target="Default", id=f"s-{i}") for i in range(4)], solver=answer(),
                scorer=says_yes(), name="bench")
    log = inspect_eval(task, model="mockllm/model", log_dir=str(directory), display="none")[0]
    return read_eval_log(log.location)


def write_logs(directory: Path, n: int, miss_every: int, fmt: str) -> tuple[Path, Path]:
    """The baseline and the worse log, ``n`` samples each, written by inspect's ``write_eval_log`` in ``fmt``."""
    from inspect_ai.log import write_eval_log
    from inspect_ai.scorer import Score

    template = _template(directory / "template")
    proto = template.samples[0]
    name = next(iter(proto.scores))
    paths = []
    for label, worse in (("before", False), ("after", True)):
        samples = [proto.model_copy(update={
            "id": f"s-{i}", "metadata": {"topic": f"t{i % 10}"},
            "scores": {name: Score(value="I" if worse and i % miss_every == 0 else "C")}}) for i in range(n)]
        log = template.model_copy(update={"samples": samples})
        log.eval.dataset.samples = n
        log.eval.dataset.sample_ids = [s.id for s in samples]
        path = directory / f"{label}.{fmt}"
        write_eval_log(log, str(path), format=fmt)
        paths.append(path)
    return paths[0], paths[1]


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(spec: dict) -> dict:
    """One measurement in this (fresh) process: the imports first, then the timed work."""
    from inspect_ai.log import read_eval_log

    from whileai_core.gate.compare import compare_documents
    from whileai_core.interop.load import load_results

    if spec["kind"] == "write":
        t0 = time.perf_counter()
        before, after = write_logs(Path(spec["directory"]), spec["samples"], spec["miss_every"], spec["format"])
        return {"before": str(before), "after": str(after), "wall_s": time.perf_counter() - t0}
    before_work = _peak_mb()
    t0 = time.perf_counter()
    out: dict = {}
    if spec["kind"] == "inspect_read":
        log = read_eval_log(spec["before"])
        out["samples"] = len(log.samples)
    elif spec["kind"] == "whileai_import":
        imported = load_results(spec["before"])
        doc = imported.document()
        out["samples"] = imported.report.n_samples
        out["scenarios"] = len(doc["scenarios"])
    else:
        docs = [load_results(spec[side]).document() for side in ("before", "after")]
        t_read = time.perf_counter() - t0
        gate = compare_documents(docs[0], docs[1], baseline_name="before")
        out.update(read_s=t_read, gate_s=time.perf_counter() - t0 - t_read, n_paired=gate.n_paired,
                   red=gate.red, line=str(gate)[:240])
    out.update(wall_s=time.perf_counter() - t0, peak_mb=_peak_mb(), imports_mb=before_work)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--miss-every", type=int, default=20)
    parser.add_argument("--format", default="json", choices=("json", "eval"),
                        help="the log format inspect writes (default json: inspect's .eval writer compresses each "
                        "sample; it took 577 s for two 10k-sample logs on a loaded 2-core box, hours for 100k)")
    parser.add_argument("--keep", default=None, help="write the logs here and keep them (logs already there of "
                        "this format are read again, not rewritten)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(json.loads(args.child))))
        return
    directory = Path(args.keep or tempfile.mkdtemp(prefix="whileai-bench-import-"))
    directory.mkdir(parents=True, exist_ok=True)
    script = str(Path(__file__).resolve())
    before, after = directory / f"before.{args.format}", directory / f"after.{args.format}"
    if not (before.is_file() and after.is_file()):  # written in a child too: Linux keeps a process's peak RSS
        # across fork+exec, so a parent that held the logs' samples would inflate every child's figure
        w = child(script, "write", directory=str(directory), samples=args.samples, miss_every=args.miss_every,
                  format=args.format)
        print(f"wrote 2 .{args.format} logs of {args.samples} samples with inspect's write_eval_log in "
              f"{w['wall_s']:.1f} s")
    print(f"logs: {before} ({before.stat().st_size / 1e6:.1f} MB), {after} ({after.stat().st_size / 1e6:.1f} MB)")
    paths = {"before": str(before), "after": str(after)}
    for kind, what in (("inspect_read", "inspect read_eval_log (one log, whole)"),
                       ("whileai_import", "whileai load_results + run document (one log)"),
                       ("whileai_gate", "whileai gate (both logs imported + compare_documents)")):
        r = child(script, kind, **paths)
        extra = (f"; read {r['read_s']:.1f} s + gate {r['gate_s']:.1f} s, n_paired={r['n_paired']}, "
                 f"red={r['red']}\n    {r['line']}" if kind == "whileai_gate" else f"; {r.get('samples')} samples")
        print(f"{what}: {r['wall_s']:.1f} s, peak RSS {r['peak_mb']:.0f} MB (after imports "
              f"{r['imports_mb']:.0f} MB){extra}")


if __name__ == "__main__":
    main()
