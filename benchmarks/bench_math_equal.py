"""MathEqual (on math-verify) vs bare math-verify: agreement with the labelled answer pairs and time per pair.

Run: PYTHONPATH=. python benchmarks/bench_math_equal.py. The table is tests/grade/math_pairs.py (written by hand,
labels are the mathematical truth). Columns: MathEqual
(whileai_core.grade.verify.math_equal) and bare math-verify (parse the reply, parse "$reference$", verify) for
reference. (The string-and-number MathEqual it replaced agreed on 52/69 = 75.4% [64.0%, 84.0%] before its removal.)
Agreement carries its Wilson 95% interval and n; time per pair is one cold pass (each pair checked
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "grade"))

from math_pairs import MATH_PAIRS as _OLD_PAIRS
from math_pairs import MATH_PAIRS_28

MATH_PAIRS = _OLD_PAIRS + MATH_PAIRS_28  # the first table and issue 28's (scientific, tiny/huge, hedges, bare LaTeX...)

from whileai_core.grade.verify.math_equal import MathEqual
from whileai_core.measure.stats import wilson_interval


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
    new = MathEqual()

    def as_reward(v: Any) -> Callable[[str, str], Any]:
        return lambda reply, reference: v({"final_text": reply, "answer": reference})["reward"]

    results = [run("MathEqual", as_reward(new)), run("bare math-verify", bare_math_verify)]
    print(f"MathEqual on {len(MATH_PAIRS)} labelled answer pairs (tests/grade/math_pairs.py)\n")
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
    same = sum(a == b for a, b in zip(results[0]["verdicts"], results[1]["verdicts"]))
    print(f"\nagreement of MathEqual with math-verify's own verdict: {same}/{len(MATH_PAIRS)} "
          f"= {same / len(MATH_PAIRS):.1%}")
    print("\npairs bare math-verify gets wrong:")
    for i, (cat, reply, reference, lab) in enumerate(MATH_PAIRS):
        if results[1]["verdicts"][i] != int(lab):
            print(f"  [{cat}] {reply[:50]!r} vs {reference[:30]!r}: label {int(lab)}, bare {results[1]['verdicts'][i]}, "
                  f"MathEqual {results[0]['verdicts'][i]}")


if __name__ == "__main__":
    main()
