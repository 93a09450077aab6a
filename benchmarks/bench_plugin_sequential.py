"""``--wai-sequential`` through the plugin: wall time against the fixed design on the same suite (issue 34: "costs
wall time in proportion to the trials it runs"), measured side by side in one run.

A 500-scenario suite (``@pytest.mark.wai_scenarios``, k=8, each scenario its own seeded pass rate in [0.6, 1],
every trial sleeping ``--trial-ms`` so a trial costs what a cheap agent call would) is saved once as the
baseline, then run fixed (``--wai-baseline``) and sequential (``--wai-sequential``, rounds of 2 trials) in fresh
``pytest`` subprocesses, interleaved A,B,C,A,B,C ``--repeats`` times after one warm-up of each; the third arm
is the sequential run with every skipped item sent through pytest's own protocol (the path before issue 34:
``unneeded.skip_unneeded`` patched to step aside by the suite's conftest). Printed per
``--trial-ms``: each arm's wall times, the median wall ratio sequential / fixed next to the trials ratio
(trials run / trials of the fixed design, from the sequential summary line) and the load average; the goal is
a wall ratio near the trials ratio. ``--clean`` runs the children with ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` and
only whileai loaded, so other installed plugins' start-up does not dilute the ratio.

    python benchmarks/bench_plugin_sequential.py [--scenarios 500] [--trial-ms 0 2] [--repeats 3] [--clean]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = """
import random
import time

import pytest

ASKS = [f"please handle request number {{i}}" for i in range({n})]
TRIAL_S = {trial_s!r}


def reward(key, i, salt):
    rate = random.Random(key).uniform(0.6, 1.0)
    return float(random.Random(f"{{salt}}-{{key}}-{{i}}").random() < rate)


@pytest.mark.wai_scenarios(ASKS)
def test_agent(wai_eval):
    import os

    salt = os.environ.get("RUN_SALT", "0")
    rewards = []
    for i in wai_eval.trial_indices():
        if TRIAL_S:
            time.sleep(TRIAL_S)
        rewards.append(reward(wai_eval.key, i, salt))
    wai_eval.record(rewards)
"""

CONFTEST = """
import os

import pytest

_PATCH = pytest.MonkeyPatch()


def pytest_configure(config):
    if os.environ.get("WAI_BENCH_PROTOCOL_SKIPS"):  # the third arm: every skipped item through pytest's protocol
        try:
            import pytest_whileai.unneeded as unneeded
        except ImportError:  # a whileai before issue 34: its protocol is the only path
            return
        _PATCH.setattr(unneeded, "skip_unneeded", lambda *args, **kwargs: None)


def pytest_unconfigure(config):
    _PATCH.undo()
"""

TRIALS = 8  # k of the fixed design and the sequential design's most trials (4 rounds of 2)
MAX_DROP = 0.1  # the drop the sequential gate must rule out to stop green early
CHILD_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "GITHUB_ACTIONS")}
SUMMARY = re.compile(r"sequential: (\d+) of (\d+) round\(s\).*?; (\d+) of (\d+) trials")


def _pytest(folder: Path, clean: bool, *args: str, salt: str = "1", protocol_skips: bool = False) -> tuple[float, str]:
    """(wall seconds, stdout) of one fresh pytest subprocess in ``folder``."""
    env = dict(CHILD_ENV, RUN_SALT=salt, WAI_BENCH_PROTOCOL_SKIPS="1" if protocol_skips else "")
    plugins: tuple[str, ...] = ()
    if clean:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        plugins = ("-p", "pytest_whileai.plugin")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugins, *args]
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed (rc={out.returncode}):\n{out.stdout[-3000:]}\n"
                         f"{out.stderr[-2000:]}")
    return elapsed, out.stdout


def one_cost(root: Path, scenarios: int, trial_ms: float, repeats: int, clean: bool) -> None:
    folder = root / f"suite_{trial_ms:g}ms"
    folder.mkdir()
    (folder / "test_agent.py").write_text(SUITE.format(n=scenarios, trial_s=trial_ms / 1000.0))
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "conftest.py").write_text(CONFTEST)
    _pytest(folder, clean, f"--wai-trials={TRIALS}", "--wai-save=main", salt="0")
    fixed_args = (f"--wai-trials={TRIALS}", "--wai-baseline=main", f"--wai-max-drop={MAX_DROP}")
    seq_args = (*fixed_args, "--wai-sequential")
    arms = {"fixed": (fixed_args, False), "sequential": (seq_args, False), "seq, skips via protocol": (seq_args, True)}
    for args, protocol in arms.values():  # warm-up: bytecode written and files cached before any timing
        _pytest(folder, clean, *args, protocol_skips=protocol)
    wall: dict[str, list[float]] = {name: [] for name in arms}
    summary = ""
    for _ in range(repeats):  # interleaved so machine load hits both arms alike
        for name, (args, protocol) in arms.items():
            w, stdout = _pytest(folder, clean, *args, protocol_skips=protocol)
            wall[name].append(w)
            if name == "sequential":
                summary = next((line for line in stdout.splitlines() if line.startswith("sequential:")), "")
    match = SUMMARY.search(summary)
    if match is None:
        raise SystemExit(f"no sequential summary line in the run's output: {summary!r}")
    rounds, of_rounds, run_trials, fixed_trials = (int(g) for g in match.groups())
    ratios = [s / f for s, f in zip(wall["sequential"], wall["fixed"])]
    old = [s / f for s, f in zip(wall["seq, skips via protocol"], wall["fixed"])]
    trials_ratio = run_trials / fixed_trials
    print(f"--trial-ms {trial_ms:g}: {scenarios} scenarios x k={TRIALS}; sequential ran {rounds} of {of_rounds} "
          f"rounds ({run_trials} of {fixed_trials} trials); load {os.getloadavg()[0]:.2f}")
    for name in arms:
        print(f"  {name:<24} wall s: {', '.join(f'{x:.2f}' for x in wall[name])} "
              f"(median {statistics.median(wall[name]):.2f})")
    print(f"  wall ratio sequential / fixed {statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]"
          f"   trials ratio {trials_ratio:.2f}x   (skips through pytest's protocol: {statistics.median(old):.2f}x "
          f"[{min(old):.2f}-{max(old):.2f}])")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", type=int, default=500)
    ap.add_argument("--trial-ms", type=float, nargs="+", default=[0.0, 2.0], help="sleep per trial (ms)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--clean", action="store_true", help="children load whileai only (no plugin autoload)")
    args = ap.parse_args()
    print(f"plugins: {'whileai only (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1)' if args.clean else 'as installed'}; "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        for trial_ms in args.trial_ms:
            one_cost(Path(tmp), args.scenarios, trial_ms, args.repeats, args.clean)


if __name__ == "__main__":
    main()
