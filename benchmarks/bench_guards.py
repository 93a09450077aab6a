"""Decontamination speed on 100k rows: hashed numpy n-grams vs a pure-Python set-of-tuples baseline.

Run: python benchmarks/bench_guards.py [n_rows]. Prints wall times measured side by side in this run
and their ratio; the baseline runs on a subset and is scaled per row (it is linear in rows).
Also times hack_scan on the same scale of input.
"""

from __future__ import annotations

import re
import sys
import time

import numpy as np

from whileai_core.guard.contamination import decontaminate
from whileai_core.guard.hack import hack_scan

WORD = re.compile(r"[a-z0-9]+")


def make(n_rows: int, n_eval: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(5000)])
    evals = [{"prompt": " ".join(rng.choice(vocab, size=int(rng.integers(20, 60))))} for _ in range(n_eval)]
    rows = [{"task_id": f"t{i}", "prompt": " ".join(rng.choice(vocab, size=int(rng.integers(20, 60))))}
            for i in range(n_rows)]
    for i in rng.choice(n_rows, size=n_rows // 100, replace=False):  # 1% planted copies
        rows[i]["prompt"] = evals[int(rng.integers(n_eval))]["prompt"] + " extra"
    return rows, evals


def naive(rows, evals, n=8, overlap=0.8):
    grams = set()
    for e in evals:
        w = WORD.findall(e["prompt"].lower())
        grams.update(tuple(w[i:i + n]) for i in range(len(w) - n + 1))
    dirty = 0
    for r in rows:
        w = WORD.findall(r["prompt"].lower())
        cov = [False] * len(w)
        for i in range(len(w) - n + 1):
            if tuple(w[i:i + n]) in grams:
                cov[i:i + n] = [True] * n
        dirty += bool(w) and sum(cov) / len(w) >= overlap
    return dirty


def main() -> None:
    n_rows = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rows, evals = make(n_rows, 2000)
    t0 = time.perf_counter()
    rep = decontaminate(rows, evals)
    t_fast = time.perf_counter() - t0
    sub = rows[: max(1, n_rows // 10)]
    t0 = time.perf_counter()
    naive(sub, evals)
    t_naive = (time.perf_counter() - t0) * (n_rows / len(sub))
    print(f"decontaminate {n_rows} rows vs 2000 eval prompts: {t_fast:.2f} s "
          f"({n_rows / t_fast:,.0f} rows/s); found {rep.n_contaminated} (planted {n_rows // 100})")
    print(f"pure-Python set-of-tuples baseline (timed on {len(sub)} rows, scaled): {t_naive:.2f} s")
    print(f"ratio baseline / hashed: {t_naive / t_fast:.2f}x")

    rng = np.random.default_rng(1)
    scan_rows = [{"task_id": f"t{i // 8}", "final_text": "ok" + "!" * int(rng.integers(0, 3)) + " w" * int(
        rng.integers(0, 9)), "reward": int(rng.random() < 0.5)} for i in range(min(n_rows, 20_000))]
    t0 = time.perf_counter()
    hs = hack_scan(scan_rows, permutations=200)
    t_scan = time.perf_counter() - t0
    print(f"hack_scan {len(scan_rows)} rows, 200 shuffles: {t_scan:.2f} s ({hs.verdict}, floor {hs.floor:.3f})")

    # the shuffled floor alone, vectorised (one argsort per block) vs a Python loop over shuffles and tasks
    groups = np.repeat(np.arange(len(scan_rows) // 8), 8)
    r = np.array([row["reward"] for row in scan_rows], dtype=float)
    f = rng.random((len(r), 12))
    r_t = r - np.repeat(r.reshape(-1, 8).mean(1), 8)
    f_t = f - np.repeat(f.reshape(-1, 8, 12).mean(1), 8, axis=0)
    denom = np.sqrt((r_t @ r_t) * (f_t ** 2).sum(0))
    t0 = time.perf_counter()
    perm = np.argsort(groups[None, :] + rng.random((200, len(r))), axis=1)
    fast = np.abs((r_t[perm] @ f_t) / denom).max(1)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = []
    for _ in range(200):
        shuffled = np.concatenate([rng.permutation(r_t[i:i + 8]) for i in range(0, len(r), 8)])
        slow.append(np.abs((shuffled @ f_t) / denom).max())
    t_slow = time.perf_counter() - t0
    print(f"floor, 200 shuffles x {len(r)} rows x 12 features: vectorised {t_fast:.3f} s, loop {t_slow:.3f} s, "
          f"ratio {t_slow / t_fast:.1f}x (95th pct {np.quantile(fast, .95):.3f} vs {np.quantile(slow, .95):.3f})")


if __name__ == "__main__":
    main()
