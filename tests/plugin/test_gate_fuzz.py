"""The invariant fuzzer (issue 26 item 8): a seeded generator of fresh pytest projects that combines an agent
quality change (0, 0.3, 0.4); judge faults (raise / NaN / None on a share of the bad replies only: missing not at
random); infra faults (a share of trials failing through whileai's own OpenAI backend against a loopback server:
HTTP 400 over its body limit, HTTP 500 whose body carries the canary, timeouts on a listener that never answers,
or a mix), on the current run or on the baseline's runs too; budgets (``--wai-budget`` in tokens or dollars with
``--wai-prices`` keyed without the provider prefix: ample, spent a quarter of the way in, or a table that cannot
price the model); ``--wai-max-unscored=1`` (the INCOMPLETE opt-out: unscored trials still count as failures);
Ctrl-C, SIGTERM or a crash (``os._exit``) at a random scenario; -x/-k; sequential on/off; named, pooled
(``main~2``), missing, corrupt and hand-edited baselines; CI on/off; a ``--wai-save`` during the run; a canary
secret in the agent's and the judge's errors; ``-n 2`` (with a crashed or SIGTERMed worker) in long mode. On every
case it checks:

* I1 a true drop of >= 0.25 in pass rate over >= 20 scenarios never exits 0 (where a baseline is asked for and
  the run is not narrowed: outside CI a missing baseline is a documented warning, docs/gate.md); an INCOMPLETE
  run is red, so it holds;
* I2 no baseline on disk is ever partial or silently changed;
* I3 every artifact's verdict equals the exit code's (the JSON's ``outcome``, the scenario-level JUnit, pytest's
  JUnit);
* I4 a canary secret appears in no artifact and not in the terminal;
* I5 an A/A pair with no faults is green (an ample budget, priced or in tokens, is no fault);

B, that a run that spent more than its budget (counted from the run document at the fuzzer's prices; under
``-n 2`` the "tight" budget is one no single worker passes) never exits 0; and D, that the faults the case drew
reached the run (a drawn judge or infra fault is in the ledger under its
reason, no undrawn reason is, a SIGTERM or crash ended pytest or a worker as one does), so no case passes
vacuously.

A quick seeded sample runs in the normal suite (``QUICK_SEEDS``: the first seed of each hard kind, -n 0, a few
seconds a case; SIGTERM in a child pytest); ``WHILEAI_LONG=1`` runs seeds ``WHILEAI_FUZZ_FIRST``..+
``WHILEAI_FUZZ_CASES``-1 (default 0..99), about a third of them under ``-n 2``, crashes included.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakeserver import FakeServer

from whileai_core.gate.document import load_document

LONG = os.environ.get("WHILEAI_LONG") == "1"
CASES = int(os.environ.get("WHILEAI_FUZZ_CASES", "100"))
FIRST = int(os.environ.get("WHILEAI_FUZZ_FIRST", "0"))  # long mode in slices: seeds FIRST..FIRST+CASES-1
N = 20  # scenarios: I1's premise
K = 8
CANARY = "sk-fuzzcanary-4c3b2a1d0e9f8a7b"
SUBPROCESS_TIMEOUT_S = 300  # a child pytest (-n 2, SIGTERM, crash) that hangs is a failure, not a stuck suite

SUITE = """
import os
import random
import signal

import pytest

ASKS = [f"please handle request number {{i}}" for i in range({n})]
MODEL = "openai:gpt-fuzz"  # priced as "gpt-fuzz" in the fuzzer's price table: the provider prefix must not matter


def _env(name, default="0"):
    return os.environ.get(name, default)


def _stop(index):
    if _env("STOP_AT", "-1") != str(index):
        return
    kind = _env("STOP_KIND", "")
    if kind == "ctrl-c":
        raise KeyboardInterrupt  # Ctrl-C in the middle of the run
    flag = os.path.join(os.path.dirname(__file__), "stopped.flag")
    if os.path.exists(flag):
        return  # one crash or signal per run (a restarted xdist worker does not crash again)
    open(flag, "w").write(kind)
    if kind == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)  # what a CI runner sends on a cancelled job
    elif kind == "crash":
        os._exit(3)  # a worker (or pytest itself) killed outright, e.g. out of memory


def _infra(kind, key):
    # one trial's infrastructure fault, delivered over HTTP by whileai's own OpenAI backend (a BackendError)
    from whileai_core.models.openai import OpenAI

    url = os.environ["SILENT_URL"] if kind == "timeout" else os.environ["FAKE_URL"]
    model = OpenAI("gpt-fuzz", url=url, api_key="{canary}", timeout=0.05, max_attempts=2, backoff_s=0.001,
                   backoff_cap_s=0.002)
    text = ("x" * 5000) if kind == "400" else ("FAIL500 " if kind == "500" else "") + key
    model.complete([{{"role": "user", "content": text}}])  # 400: over the body limit; 500/timeout: retried, then raises
    raise AssertionError("the fake server answered a faulted trial")


@pytest.mark.wai_scenarios(ASKS)
def test_agent(wai_eval):
    index = int(wai_eval.key.split("number-")[1].split("-")[0])
    _stop(index)
    salt = _env("RUN_SALT")
    rate = random.Random(wai_eval.key).uniform(0.85, 0.95) - float(_env("DROP"))
    canary = float(_env("CANARY_SHARE"))
    infra, infra_share = _env("INFRA", ""), float(_env("INFRA_SHARE"))
    judge_fault, judge_share = _env("JUDGE_FAULT", ""), float(_env("JUDGE_SHARE"))
    rewards, infra_kind = {{}}, {{}}
    for i in wai_eval.trial_indices():
        r = random.Random(f"{{salt}}-{{wai_eval.key}}-{{i}}")
        rewards[i] = None if r.random() < canary else float(r.random() < rate)
        if infra and r.random() < infra_share:
            infra_kind[i] = r.choice(["400", "500", "timeout"]) if infra == "mix" else infra

    def agent(message):
        i = message.rollout_index
        if i in infra_kind:
            _infra(infra_kind[i], wai_eval.key)
        if rewards.get(i) is None:
            raise RuntimeError("upstream 401: key {canary} rejected at https://bob:hunter2pw@api.example/v1")
        return {{"steps": [], "final_text": "good" if rewards[i] else "bad", "model": MODEL,
                "usage": {{"input_tokens": 40, "output_tokens": 10}}}}

    def judge(row):
        i = row["rollout_index"]
        # the judge breaks on a share of the bad replies only: missing-not-at-random, the common case
        if judge_fault and not rewards[i] and random.Random(f"judge-{{salt}}-{{wai_eval.key}}-{{i}}").random() < judge_share:
            if judge_fault == "raise":
                raise RuntimeError("judge backend 500 for key {canary} at https://bob:hunter2pw@judge.example/v1")
            return {{"reward": float("nan")}} if judge_fault == "nan" else None
        return rewards[i]

    wai_eval.run(agent, "Hello", judge=judge)
"""

# --wai-budget per kind (a run spends 160 trials x 50 tokens = 8000 tokens, $0.0096 at the table's prices);
# "-short" ones are spent a quarter of the way in, "$-unpriced" gives a table without the fuzzer's model
BUDGETS = {"tokens": "100000", "tokens-short": "2000", "tokens-tight": "6000", "$": "$1", "$-short": "$0.002",
           "$-unpriced": "$1"}  # tight: 3/4 of a run, which under -n 2 no single worker spends
SPENT = ("-short", "-tight", "-unpriced")  # budgets a whole run passes
PRICES = {"gpt-fuzz": {"input": 1.0, "output": 2.0}}  # keyed without the provider prefix the usage carries
UNPRICED = {"other-model": {"input": 1.0, "output": 2.0}}


@dataclass(frozen=True)
class Case:
    seed: int
    drop: float  # 0 (A/A) or a true drop >= 0.25
    baseline: str  # named | pooled | missing | corrupt | edited
    sequential: bool
    narrow: str  # "" | "-k" | "-x"
    stop: str  # "" | "ctrl-c" | "sigterm" | "crash" (at a random scenario)
    ci: bool
    save_again: bool  # the current run also passes --wai-save=main (may be refused)
    canary: float
    xdist: bool
    judge: str  # "" | "raise" | "nan" | "none": the judge's fault on a share of the bad replies
    judge_share: float
    infra: str  # "" | "400" | "500" | "timeout" | "mix": an infra fault on a share of the trials
    infra_share: float
    faults_in_baseline: bool  # the judge and infra faults hit the baseline's run(s) too
    budget: str  # "" or a BUDGETS key
    max_unscored: float | None  # None: the default; 1.0: the opt-out (unscored trials still count as failures)

    @property
    def faults(self) -> bool:
        return bool(self.narrow or self.stop or self.baseline in ("missing", "corrupt", "edited") or self.judge
                    or self.infra or self.budget.endswith(SPENT))

    @property
    def subprocess(self) -> bool:
        """Runs in a child pytest: -n 2, or a signal or crash that would take the test runner down with it."""
        return self.xdist or self.stop in ("sigterm", "crash")


def draw(seed: int, *, allow_xdist: bool) -> Case:
    r = random.Random(seed)
    judge = r.choice(["", "", "", "raise", "nan", "none"])
    infra = r.choice(["", "", "", "", "400", "500", "timeout", "mix"])
    xdist = allow_xdist and r.random() < 0.3
    stops = ["", "ctrl-c", "sigterm"] + (["crash"] if xdist or allow_xdist else [])
    return Case(seed=seed, drop=r.choice([0.0, 0.0, 0.3, 0.4]),
                baseline=r.choice(["named", "named", "pooled", "missing", "corrupt", "edited"]),
                sequential=r.random() < 0.3, narrow=r.choice(["", "", "", "-k", "-x"]),
                stop=r.choice(stops) if r.random() < 0.25 else "", ci=r.random() < 0.5,
                save_again=r.random() < 0.4, canary=r.choice([0.0, 0.05]), xdist=xdist,
                judge=judge, judge_share=r.choice([0.5, 1.0]), infra=infra, infra_share=r.choice([0.05, 0.2]),
                faults_in_baseline=r.random() < 0.3, budget=r.choice(["", "", "", *BUDGETS]),
                max_unscored=r.choice([None, None, 1.0]))


def _run(pytester: pytest.Pytester, case: Case, *args: str, sub: bool = False, xdist: bool = False,
         ) -> pytest.RunResult:
    base = ("-p", "no:cacheprovider", f"--wai-trials={K}", "--wai-max-drop=0.1")
    if xdist:
        return pytester.runpytest_subprocess("-n", "2", *base, *args, timeout=SUBPROCESS_TIMEOUT_S)
    if sub:
        return pytester.runpytest_subprocess(*base, *args, timeout=SUBPROCESS_TIMEOUT_S)
    return pytester.runpytest_inprocess(*base, *args, no_reraise_ctrlc=True)


def _faults_env(case: Case, monkeypatch: pytest.MonkeyPatch, on: bool) -> None:
    """Turn the judge and infra faults on or off for the next run."""
    monkeypatch.setenv("JUDGE_FAULT", case.judge if on else "")
    monkeypatch.setenv("JUDGE_SHARE", str(case.judge_share))
    monkeypatch.setenv("INFRA", case.infra if on else "")
    monkeypatch.setenv("INFRA_SHARE", str(case.infra_share))


def _make_baseline(pytester: pytest.Pytester, case: Case, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Build the baseline the case asks for; return the --wai-baseline spec (None: none is asked for)."""
    monkeypatch.setenv("CANARY_SHARE", str(case.canary))
    _faults_env(case, monkeypatch, case.faults_in_baseline)
    opt_out = ("--wai-max-unscored=1",)  # a baseline with unscored trials (counted as failures) is still saved
    store = pytester.path / ".whileai"
    if case.baseline == "pooled":
        monkeypatch.setenv("BRANCH_NAME", "main")
        for salt in ("1", "2"):
            monkeypatch.setenv("RUN_SALT", salt)
            assert _run(pytester, case, "--wai-autosave", *opt_out).ret == 0
        return "main~2"
    if case.baseline == "missing":
        return "main"
    monkeypatch.setenv("RUN_SALT", "1")
    assert _run(pytester, case, "--wai-save=main", *opt_out).ret == 0
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


def _responder(request: Mapping[str, Any], protocol: str) -> dict[str, Any]:
    """The fake model: a 500 on a trial the suite marked, its error body carrying the canary (a server's text)."""
    text = str((request.get("messages") or [{}])[-1].get("content", ""))
    if "FAIL500" in text:
        raise RuntimeError(f"overloaded; your key {CANARY} is rate limited at https://bob:hunter2pw@api.example")
    return {"text": "ok"}


@contextlib.contextmanager
def _servers(case: Case, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The loopback model server (400 over its body limit, 500 on marked trials) and a listener that accepts
    and never answers (timeouts), for a case that draws infra faults."""
    if not case.infra:
        yield
        return
    with FakeServer(max_body=4000, responder=_responder) as srv, socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(256)
        monkeypatch.setenv("FAKE_URL", srv.openai_url)
        monkeypatch.setenv("SILENT_URL", f"http://127.0.0.1:{silent.getsockname()[1]}/v1")
        yield


def _current_args(case: Case, spec: str | None) -> list[str]:
    args = [f"--wai-baseline={spec}", "--wai-json=run.json", "--wai-junitxml=wai.xml", "--junitxml=pytest.xml"]
    if case.sequential:
        args += ["--wai-sequential", "--wai-round-trials=4"]
    if case.narrow == "-k":
        args += ["-k", "number-1"]
    elif case.narrow == "-x":
        args += ["-x"]
    if case.save_again:
        args += ["--wai-save=main"]
    if case.max_unscored is not None:
        args += [f"--wai-max-unscored={case.max_unscored:g}"]
    return args


def _budget_args(case: Case, root: Path) -> list[str]:
    if not case.budget:
        return []
    prices = root / "prices.json"
    prices.write_text(json.dumps(UNPRICED if case.budget == "$-unpriced" else PRICES))
    return [f"--wai-budget={BUDGETS[case.budget]}", f"--wai-prices={prices}"]


def over_budget(case: Case, artifacts: dict[str, str], code: int) -> list[str]:
    """B: a run that spent more than its --wai-budget (counted here from the run document's usage, at the
    fuzzer's own prices) never exits 0 (over budget is red INCOMPLETE and saves nothing, however many workers)."""
    if not case.budget or code != 0 or "run.json" not in artifacts:
        return []
    usage = [u for sc in json.loads(artifacts["run.json"]).get("scenarios", []) for u in (sc.get("usage") or {}).values()]
    tokens = sum(int(u.get("input_tokens", 0)) + int(u.get("output_tokens", 0)) for u in usage)
    price = PRICES["gpt-fuzz"]
    dollars = sum(u.get("input_tokens", 0) * price["input"] + u.get("output_tokens", 0) * price["output"]
                  for u in usage) / 1e6
    limit = float(BUDGETS[case.budget].lstrip("$"))
    spent = (tokens > 0 if case.budget == "$-unpriced" else
             dollars > limit if case.budget.startswith("$") else tokens > limit)
    what = f"B: the run spent {tokens} tokens (${dollars:.4f}) over --wai-budget={BUDGETS[case.budget]}, exit 0"
    return [what] if spent else []


JUDGE_REASON = {"raise": "judge_error", "nan": "nan_verdict", "none": "none_verdict"}


def delivered(case: Case, res: pytest.RunResult, artifacts: dict[str, str]) -> list[str]:
    """D: the faults the case drew reached the run (else the case proved nothing): a judge or infra fault is in
    the ledger under its reason, and only drawn reasons are; a SIGTERM or a crash ended the run as one does."""
    bad = []
    code, out = int(res.ret), res.stdout.str()
    reached = not (case.narrow or case.budget.endswith(SPENT)  # the stop's scenario runs
                   or case.baseline in ("corrupt", "edited"))  # (these are usage errors before any test)
    whole = reached and not case.stop
    if reached and case.stop in ("sigterm", "crash"):
        if case.xdist and "crashed" not in out:  # the signal or the crash took a worker down
            bad.append(f"D: a worker {case.stop} was drawn but no worker crashed (exit {code})")
        expected = -signal.SIGTERM if case.stop == "sigterm" else 3
        if not case.xdist and code != expected:
            bad.append(f"D: {case.stop} was drawn but pytest exited {code}")
    doc = json.loads(artifacts["run.json"]) if "run.json" in artifacts else None
    if doc is None:
        return bad
    seen = {s for sc in doc.get("scenarios", []) for s in sc.get("trial_states") or [] if s}
    allowed = {"agent_error", "budget_stop", "not_run"} | ({JUDGE_REASON[case.judge]} if case.judge else set())
    allowed |= {"infra_error"} if case.infra else set()
    if seen - allowed:
        bad.append(f"D: the ledger holds {sorted(seen - allowed)}, which the case did not draw")
    if whole and not case.sequential:  # a full run: >= 8 expected of each drawn fault (P(none) < 0.1%)
        for want in ({JUDGE_REASON[case.judge]} if case.judge else set()) | ({"infra_error"} if case.infra else set()):
            if want not in seen:
                bad.append(f"D: {want} was drawn but no trial is in the ledger with it")
    return bad


def run_case(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, case: Case) -> list[str]:
    pytester.makepyfile(test_agent=SUITE.format(n=N, canary=CANARY))
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("STOP_AT", "-1")
    with _servers(case, monkeypatch):
        spec = _make_baseline(pytester, case, monkeypatch)
        store = pytester.path / ".whileai"
        before = _snapshot(store)
        monkeypatch.setenv("RUN_SALT", "7")
        monkeypatch.setenv("DROP", str(case.drop))
        _faults_env(case, monkeypatch, True)
        if case.ci:
            monkeypatch.setenv("CI", "true")
        if case.stop:
            monkeypatch.setenv("STOP_KIND", case.stop)
            monkeypatch.setenv("STOP_AT", str(random.Random(case.seed).randrange(N)))
        args = _current_args(case, spec) + _budget_args(case, pytester.path)
        xdist = case.xdist and case.stop != "ctrl-c"
        res = _run(pytester, case, *args, sub=case.subprocess, xdist=xdist)
    artifacts = _artifacts(pytester)
    return (check(case, res, before, _snapshot(store), artifacts, store, spec) + delivered(case, res, artifacts)
            + over_budget(case, artifacts, int(res.ret)))


# the quick sample: the first seed that exercises each invariant's hard case (the generator decides the rest)
def _plain(c: Case) -> bool:
    return not (c.narrow or c.stop or c.judge or c.infra or c.budget)


def _runs_out(c: Case) -> bool:
    return c.budget.endswith(SPENT)


QUICK = (
    lambda c: c.drop and c.baseline == "named" and not c.faults,  # I1 against a saved baseline
    lambda c: c.drop and c.baseline == "pooled" and not c.faults,  # I1 against main~2
    lambda c: not c.drop and not c.faults and c.canary,  # I5, with the canary in the agent's errors (I4)
    lambda c: c.stop == "ctrl-c" and c.save_again and c.baseline == "named",  # I2 under Ctrl-C
    lambda c: c.narrow and c.save_again and c.baseline == "named" and not c.stop,  # I2 under -k / -x
    lambda c: c.baseline == "missing" and c.ci and c.drop and _plain(c),  # CI: not a pass
    # I1 with a judge that breaks on the bad replies, its INCOMPLETE opted out: unscored trials count as failures
    lambda c: (c.drop and c.judge and c.max_unscored == 1 and c.baseline == "named" and not c.infra
               and not (c.narrow or c.stop or _runs_out(c))),
    # infra faults of every kind over HTTP (400, 500 with the canary in the server's body, timeouts), both sides
    lambda c: (c.infra == "mix" and c.faults_in_baseline and c.baseline == "named" and not c.judge
               and not (c.narrow or c.stop or _runs_out(c))),
    lambda c: c.budget == "$" and not c.drop and not c.faults,  # I5 under a $ budget priced without the prefix
    lambda c: c.budget == "$-unpriced" and c.save_again and c.baseline == "named" and not c.stop,  # I2, I3
    lambda c: c.budget == "$-short" and c.drop and c.baseline == "named" and not (c.stop or c.narrow),  # spent
    lambda c: c.stop == "sigterm" and c.save_again and c.baseline == "named" and not _runs_out(c),  # I2 under SIGTERM
)
QUICK_SEEDS = sorted({next(s for s in range(10_000) if want(draw(s, allow_xdist=False))) for want in QUICK})
SEEDS = list(range(FIRST, FIRST + CASES)) if LONG else QUICK_SEEDS


@pytest.mark.parametrize("seed", SEEDS)
def test_gate_invariants_hold_on_a_generated_case(pytester: pytest.Pytester, monkeypatch, seed: int):
    case = draw(seed, allow_xdist=LONG)
    violations = run_case(pytester, monkeypatch, case)
    assert not violations, f"{case}: {violations}"
