"""The invariant fuzzer (issue 26 item 8): a seeded generator of fresh pytest projects that combines an agent
quality change, interrupts, -x/-k, sequential on/off, pooled, missing, corrupt and edited baselines, CI on/off,
saves during partial runs and a canary secret in the agent's errors, and checks on every case:

* I1 a true drop of >= 0.25 in pass rate over >= 20 scenarios never exits 0 (where a baseline is asked for and
  the run is not narrowed: outside CI a missing baseline is a documented warning, docs/gate.md);
* I2 no baseline on disk is ever partial or silently changed;
* I3 every artifact's verdict equals the exit code's (the JSON's ``outcome``, the scenario-level JUnit, pytest's
  JUnit);
* I4 a canary secret appears in no artifact;
* I5 an A/A pair with no faults is green.

A quick seeded sample runs in the normal suite (``QUICK_SEEDS``: the first seed of each hard kind, in-process,
a few seconds a case); ``WHILEAI_LONG=1`` runs seeds 0..``WHILEAI_FUZZ_CASES``-1 (default 100), a third of them
under ``-n 2``.

Dimensions not drawn yet, each waiting on the other half of issue 26 (branch gatea), never a weaker invariant:
judge faults (raise/NaN/None on a share correlated with bad replies) and infra faults (4xx/5xx on a share) need
unscored trials counted as failures (item 1); budgets need "over budget is INCOMPLETE" (item 5).
"""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from whileai_core.gate.document import load_document

LONG = os.environ.get("WHILEAI_LONG") == "1"
CASES = int(os.environ.get("WHILEAI_FUZZ_CASES", "100"))
FIRST = int(os.environ.get("WHILEAI_FUZZ_FIRST", "0"))  # long mode in slices: seeds FIRST..FIRST+CASES-1
N = 20  # scenarios: I1's premise
K = 8
CANARY = "sk-fuzzcanary-4c3b2a1d0e9f8a7b"

SUITE = '''
import os
import random

import pytest

ASKS = [f"please handle request number {{i}}" for i in range({n})]


@pytest.mark.wai_scenarios(ASKS)
def test_agent(wai_eval):
    index = int(wai_eval.key.split("number-")[1].split("-")[0])
    if os.environ.get("INTERRUPT_AT") == str(index):
        raise KeyboardInterrupt  # Ctrl-C in the middle of the run
    salt = os.environ.get("RUN_SALT", "0")
    rate = random.Random(wai_eval.key).uniform(0.85, 0.95) - float(os.environ.get("DROP", "0"))
    canary = float(os.environ.get("CANARY_SHARE", "0"))
    rewards = {{}}
    for i in wai_eval.trial_indices():
        r = random.Random(f"{{salt}}-{{wai_eval.key}}-{{i}}")
        rewards[i] = None if r.random() < canary else float(r.random() < rate)
    def agent(message):
        if rewards.get(message.rollout_index) is None:
            raise RuntimeError("upstream 401: key {canary} rejected at https://bob:hunter2pw@api.example/v1")
        return {{"steps": [], "final_text": "done"}}
    wai_eval.run(agent, "Hello", judge=lambda row: rewards[row["rollout_index"]])
'''


@dataclass(frozen=True)
class Case:
    seed: int
    drop: float  # 0 (A/A) or a true drop >= 0.25
    baseline: str  # named | pooled | missing | corrupt | edited
    sequential: bool
    narrow: str  # "" | "-k" | "-x"
    interrupt: bool
    ci: bool
    save_again: bool  # the current run also passes --wai-save=main (may be refused)
    canary: float
    xdist: bool

    @property
    def faults(self) -> bool:
        return bool(self.narrow or self.interrupt or self.baseline in ("missing", "corrupt", "edited"))


def draw(seed: int, *, allow_xdist: bool) -> Case:
    r = random.Random(seed)
    return Case(seed=seed, drop=r.choice([0.0, 0.0, 0.3, 0.4]),
                baseline=r.choice(["named", "named", "pooled", "missing", "corrupt", "edited"]),
                sequential=r.random() < 0.3, narrow=r.choice(["", "", "", "-k", "-x"]),
                interrupt=r.random() < 0.15, ci=r.random() < 0.5, save_again=r.random() < 0.4,
                canary=r.choice([0.0, 0.05]), xdist=allow_xdist and r.random() < 0.3)


def _run(pytester: pytest.Pytester, case: Case, *args: str, xdist: bool = False) -> pytest.RunResult:
    base = ("-p", "no:cacheprovider", f"--wai-trials={K}", "--wai-max-drop=0.1")
    if xdist:
        return pytester.runpytest_subprocess("-n", "2", *base, *args)
    return pytester.runpytest_inprocess(*base, *args, no_reraise_ctrlc=True)


def _make_baseline(pytester: pytest.Pytester, case: Case, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Build the baseline the case asks for; return the --wai-baseline spec (None: none is asked for)."""
    monkeypatch.setenv("CANARY_SHARE", str(case.canary))
    store = pytester.path / ".whileai"
    if case.baseline == "pooled":
        monkeypatch.setenv("BRANCH_NAME", "main")
        for salt in ("1", "2"):
            monkeypatch.setenv("RUN_SALT", salt)
            assert _run(pytester, case, "--wai-autosave").ret == 0
        return "main~2"
    if case.baseline == "missing":
        return "main"
    monkeypatch.setenv("RUN_SALT", "1")
    assert _run(pytester, case, "--wai-save=main").ret == 0
    path = store / "baselines" / "main.json"
    if case.baseline == "corrupt":
        path.write_text(path.read_text()[:500])
    elif case.baseline == "edited":
        doc = json.loads(path.read_text())
        doc["scenarios"][0]["rewards"] = [0.0] * len(doc["scenarios"][0]["rewards"])
        path.write_text(json.dumps(doc, indent=1))
    return "main"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.json")} if root.is_dir() else {}


def _artifacts(pytester: pytest.Pytester) -> dict[str, str]:
    out = {}
    for name in ("run.json", "wai.xml", "pytest.xml"):
        p = pytester.path / name
        if p.is_file():
            out[name] = p.read_text(encoding="utf-8")
    runs = pytester.path / ".whileai" / "runs"
    for p in runs.glob("*.json") if runs.is_dir() else []:
        out[f"runs/{p.name}"] = p.read_text(encoding="utf-8")
    return out


def check(case: Case, res: pytest.RunResult, before: dict[str, bytes], after: dict[str, bytes],
          artifacts: dict[str, str], store: Path, spec: str | None) -> list[str]:
    """Every invariant on one case; the violations, each named."""
    bad = []
    out = res.stdout.str() + res.stderr.str()
    code = int(res.ret)
    measured = spec is not None and not case.narrow and (case.baseline != "missing" or case.ci)
    if case.drop >= 0.25 and measured and code == 0:
        bad.append(f"I1: a true drop of {case.drop} over {N} scenarios exited 0")
    for rel, data in after.items():  # I2
        if rel.startswith(("baselines/", "runs/")):
            if case.baseline in ("corrupt", "edited") and rel == "baselines/main.json" and before.get(rel) == data:
                continue  # the fault the case planted, left as it was
            try:
                doc = load_document(store / rel)
            except Exception as exc:  # noqa: BLE001 - any failure to load is the violation
                bad.append(f"I2: {rel} does not load: {exc}")
                continue
            if len(doc["scenarios"]) != N:
                bad.append(f"I2: {rel} holds {len(doc['scenarios'])} of {N} scenarios")
            if before.get(rel) not in (None, data) and f"wrote {store / rel}" not in out:
                bad.append(f"I2: {rel} changed without the run saying so")
    for rel in before:
        if rel not in after:
            bad.append(f"I2: {rel} disappeared")
    if code in (0, 1):  # I3: a run that finished writes its artifacts
        doc = json.loads(artifacts["run.json"]) if "run.json" in artifacts else None
        if doc is not None and doc.get("outcome") and doc["outcome"]["green"] != (code == 0):
            bad.append(f"I3: run.json outcome.green={doc['outcome']['green']} but exit {code}")
        for name in ("wai.xml", "pytest.xml"):
            if name in artifacts:
                failed = bool(re.search(r'(failures|errors)="[1-9]', artifacts[name]))
                if failed != (code == 1):
                    bad.append(f"I3: {name} says failed={failed} but exit {code}")
    for name, text in artifacts.items():  # I4
        if CANARY in text or "hunter2pw" in text:
            bad.append(f"I4: the canary secret is in {name}")
    if CANARY in out or "hunter2pw" in out:
        bad.append("I4: the canary secret is in the terminal output")
    if case.drop == 0 and not case.faults and spec is not None and code != 0:
        bad.append(f"I5: an A/A pair with no faults exited {code}")
    return bad


def run_case(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, case: Case) -> list[str]:
    pytester.makepyfile(test_agent=SUITE.format(n=N, canary=CANARY))
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    spec = _make_baseline(pytester, case, monkeypatch)
    store = pytester.path / ".whileai"
    before = _snapshot(store)
    monkeypatch.setenv("RUN_SALT", "7")
    monkeypatch.setenv("DROP", str(case.drop))
    if case.ci:
        monkeypatch.setenv("CI", "true")
    if case.interrupt:
        monkeypatch.setenv("INTERRUPT_AT", str(random.Random(case.seed).randrange(N)))
    args = [f"--wai-baseline={spec}", "--wai-json=run.json", "--wai-junitxml=wai.xml", "--junitxml=pytest.xml"]
    if case.sequential:
        args += ["--wai-sequential", "--wai-round-trials=4"]
    if case.narrow == "-k":
        args += ["-k", "number-1"]
    elif case.narrow == "-x":
        args += ["-x"]
    if case.save_again:
        args += ["--wai-save=main"]
    res = _run(pytester, case, *args, xdist=case.xdist and not case.interrupt)
    return check(case, res, before, _snapshot(store), _artifacts(pytester), store, spec)


# the quick sample: the first seed that exercises each invariant's hard case (the generator decides the rest)
QUICK = (
    lambda c: c.drop and c.baseline == "named" and not c.faults,  # I1 against a saved baseline
    lambda c: c.drop and c.baseline == "pooled" and not c.faults,  # I1 against main~2
    lambda c: not c.drop and not c.faults and c.canary,  # I5, with the canary in the agent's errors (I4)
    lambda c: c.interrupt and c.save_again and c.baseline == "named",  # I2 under Ctrl-C
    lambda c: c.narrow and c.save_again and c.baseline == "named" and not c.interrupt,  # I2 under -k / -x
    lambda c: c.baseline == "missing" and c.ci and c.drop and not c.narrow and not c.interrupt,  # CI: not a pass
)
QUICK_SEEDS = sorted({next(s for s in range(10_000) if want(draw(s, allow_xdist=False))) for want in QUICK})
SEEDS = list(range(FIRST, FIRST + CASES)) if LONG else QUICK_SEEDS


@pytest.mark.parametrize("seed", SEEDS)
def test_gate_invariants_hold_on_a_generated_case(pytester: pytest.Pytester, monkeypatch, seed: int):
    case = draw(seed, allow_xdist=LONG)
    violations = run_case(pytester, monkeypatch, case)
    assert not violations, f"{case}: {violations}"
