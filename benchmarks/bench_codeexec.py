"""Benchmark: CodeExec's wall time per program, bubblewrap vs the built-in namespaces, side by side in one run.

Three programs graded ``--n`` times at each isolation level (interleaved, so load drifts hit both alike): a
correct function (pass), a wrong one (fail), and one importing numpy (the caller's packages). Also a bare
``run_sandboxed("pass")`` per level: the sandbox's own start-up cost. Prints median and p90 wall seconds per
program and level and the bwrap / namespaces ratio. Needs Linux; bubblewrap rows are skipped without it.
Usage: ``python benchmarks/bench_codeexec.py [--n 20]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whileai_core.grade.verify.code import CodeExec
from whileai_core.grade.verify.sandbox import find_bwrap, run_sandboxed

TESTS = "def test_add():\n    assert add(2, 3) == 5\n\ndef test_neg():\n    assert add(-1, 1) == 0\n"
PROGRAMS = {
    "pass": "```python\ndef add(a, b):\n    return a + b\n```",
    "fail": "```python\ndef add(a, b):\n    return a - b\n```",
    "numpy": "```python\nimport numpy as np\n\ndef add(a, b):\n    return int(np.add(a, b))\n```",
}


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20)
    args = ap.parse_args()
    levels = ["namespaces"] + (["bwrap"] if find_bwrap() else [])
    walls: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.n):
        for level in levels:
            walls.setdefault(("sandbox only", level), []).append(
                _time(lambda lv=level: run_sandboxed("pass", isolation=lv)))
            grader = CodeExec(tests=TESTS, isolation=level)
            for name, reply in PROGRAMS.items():
                walls.setdefault((name, level), []).append(_time(lambda r=reply, g=grader: g({"final_text": r})))
    print(f"CodeExec wall seconds per program, n={args.n} each, levels interleaved")
    print(f"{'program':<14}" + "".join(f"{lv + ' median':>20}{lv + ' p90':>16}" for lv in levels)
          + ("   bwrap/namespaces" if len(levels) == 2 else ""))
    for name in ["sandbox only", *PROGRAMS]:
        row = f"{name:<14}"
        med = {}
        for lv in levels:
            xs = sorted(walls[(name, lv)])
            med[lv] = statistics.median(xs)
            row += f"{med[lv]:>20.3f}{xs[int(0.9 * (len(xs) - 1))]:>16.3f}"
        if len(levels) == 2:
            row += f"{med['bwrap'] / med['namespaces']:>19.2f}x"
        print(row)


if __name__ == "__main__":
    main()
