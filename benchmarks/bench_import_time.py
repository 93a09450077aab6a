"""``import whileai`` against ``python -c pass``, measured side by side in one run (issue 34: <= 25 ms).

Each round starts three fresh interpreters, interleaved: ``python -c pass``, ``python -c "import whileai"`` and
``python -X importtime -c "import whileai"``. Printed: the median wall time of the first two and their
difference (what a user waits for), and the median cumulative microseconds ``-X importtime`` gives the
``whileai`` package itself (Python's own accounting of the import, free of start-up noise); then, once, the
five heaviest modules that import brings in. Bytecode is written by a warm-up round first.

    python benchmarks/bench_import_time.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_MS = 25.0


def wall(code: str) -> float:
    """Seconds one fresh interpreter takes to run ``code``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(ROOT))
    return time.perf_counter() - start


def importtime() -> list[tuple[int, str]]:
    """``-X importtime``'s (cumulative microseconds, module) for every module ``import whileai`` imports."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import whileai"], capture_output=True,
                         text=True, check=True, cwd=str(ROOT))
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
        rows.append((int(cumulative), name.strip()))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    wall("import whileai")
    bare, imported, own = [], [], []
    for _ in range(args.rounds):
        bare.append(wall("pass"))
        imported.append(wall("import whileai"))
        own.append(next(us for us, name in importtime() if name == "whileai"))
    heavy = sorted(importtime(), reverse=True)[:6]
    b, i = statistics.median(bare) * 1e3, statistics.median(imported) * 1e3
    mine = statistics.median(own) / 1e3
    print(f"python {sys.version.split()[0]}; {args.rounds} interleaved rounds (medians)")
    print(f"  python -c pass                 {b:7.1f} ms")
    print(f"  python -c 'import whileai'     {i:7.1f} ms   (+{i - b:.1f} ms over bare)")
    print(f"  -X importtime, whileai itself  {mine:7.1f} ms [{min(own) / 1e3:.1f}-{max(own) / 1e3:.1f}]   "
          f"goal <= {GOAL_MS:.0f} ms  {'MET' if mine <= GOAL_MS else 'not met'}")
    print("  heaviest imports (cumulative us): " + ", ".join(f"{name} {us}" for us, name in heavy))


if __name__ == "__main__":
    main()
