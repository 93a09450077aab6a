"""MathEqual, old rule vs new (math-verify): agreement with the labelled answer pairs and time per pair.

Run: PYTHONPATH=. python benchmarks/bench_math_equal.py. The table is tests/math_pairs.py (written by hand,
labels are the mathematical truth). Columns: the old string-and-number MathEqual (whileai_core.verify), the new
one (whileai_core.verifiers_math) and bare math-verify (parse the reply, parse "$reference$", verify) for
reference. Agreement carries its Wilson 95% interval and n; time per pair is one cold pass (each pair checked
once, after one warm-up row that pays the imports), as mean / median / max milliseconds.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from math_pairs import MATH_PAIRS

from whileai_core.stats import wilson_interval
from whileai_core.verifiers_math import MathEqual as NewMathEqual
from whileai_core.verify import MathEqual as OldMathEqual


def bare_math_verify(reply: str, reference: str) -> int:
    from math_verify import parse, verify

    gold = parse(f"${reference}$")
    return int(bool(gold) and verify(gold, parse(reply)))


def run(name: str, check: Callable[[str, str], Any]) -> dict[str, Any]:
    check("\\boxed{1}", "1")  # warm-up: imports
    verdicts, times = [], []
    for _, reply, reference, _ in MATH_PAIRS:
        t0 = time.perf_counter()
        verdicts.append(check(reply, reference))
        times.append(time.perf_counter() - t0)
    return {"name": name, "verdicts": verdicts, "times": times}


def summary(res: dict[str, Any]) -> str:
    labels = [int(lab) for *_, lab in MATH_PAIRS]
    agree = sum(v == lab for v, lab in zip(res["verdicts"], labels))
    n = len(labels)
    ci = wilson_interval(agree, n)
    ms = [t * 1000 for t in res["times"]]
    wrong_pass = sum(v == 1 and lab == 0 for v, lab in zip(res["verdicts"], labels))
    wrong_fail = sum(v != 1 and lab == 1 for v, lab in zip(res["verdicts"], labels))
    return (f"{res['name']:<18} {agree:>3}/{n} = {agree / n:6.1%}  95% CI [{ci[0]:.1%}, {ci[1]:.1%}]   "
            f"passes wrong: {wrong_pass:>2}  fails right: {wrong_fail:>2}   ms/pair mean {statistics.mean(ms):6.1f}"
            f"  median {statistics.median(ms):6.1f}  max {max(ms):7.1f}")


def main() -> None:
    old, new = OldMathEqual(), NewMathEqual()

    def as_reward(v: Any) -> Callable[[str, str], Any]:
        return lambda reply, reference: v({"final_text": reply, "answer": reference})["reward"]

    results = [run("old MathEqual", as_reward(old)), run("new MathEqual", as_reward(new)),
               run("bare math-verify", bare_math_verify)]
    print(f"MathEqual on {len(MATH_PAIRS)} labelled answer pairs (tests/math_pairs.py)\n")
    for res in results:
        print(summary(res))
    print("\nper category (agreement, n):")
    by_cat: dict[str, list[int]] = defaultdict(list)
    for i, (cat, *_) in enumerate(MATH_PAIRS):
        by_cat[cat].append(i)
    print(f"  {'category':<12}" + "".join(f"{r['name']:>18}" for r in results))
    for cat, idx in by_cat.items():
        cells = []
        for r in results:
            k = sum(r["verdicts"][i] == int(MATH_PAIRS[i][3]) for i in idx)
            cells.append(f"{k}/{len(idx)}")
        print(f"  {cat:<12}" + "".join(f"{c:>18}" for c in cells))
    print("\npairs the old rule gets wrong:")
    for i, (cat, reply, reference, lab) in enumerate(MATH_PAIRS):
        if results[0]["verdicts"][i] != int(lab):
            print(f"  [{cat}] {reply[:50]!r} vs {reference[:30]!r}: label {int(lab)}, old {results[0]['verdicts'][i]}, "
                  f"new {results[1]['verdicts'][i]}")


if __name__ == "__main__":
    main()
