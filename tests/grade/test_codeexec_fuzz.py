"""A grader never crashes on a reply: arbitrary text through CodeExec's extraction, scan and grading."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whileai_core.grade.verify.code import CodeExec
from whileai_core.grade.verify.codetext import entry_points, extract_code, fenced_blocks, tamper_marks

# fragments that reach the parser's corners, mixed with arbitrary text (lone surrogates and NULs included)
_PIECES = st.sampled_from(["```", "```Python\n", "```py3 {.line-numbers}\n", "~~~\n", "````\n", "\n", "    ",
                           "def f(x):\n", "    return x\n", "class f:\n", "f = 1\n", "print(f(1))\n",
                           'if __name__ == "__main__":\n', "import sys\n", "sys.exit(0)\n", "\x00", "\ufeff",
                           "\ud800", "@dec\n", "lambda: (", "'''", "\\"])
_REPLIES = st.one_of(st.text(), st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=40).map("".join))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=_REPLIES, entry=st.one_of(st.none(), st.sampled_from(["f", "g"]), st.sets(st.sampled_from(["f", "g"]))))
def test_extraction_and_scans_never_raise(reply, entry):
    code = extract_code(reply, entry)
    assert isinstance(code, str)
    assert all(isinstance(b, str) for b in fenced_blocks(reply))
    assert isinstance(tamper_marks(code), list)
    assert isinstance(entry_points(reply), set)


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=_REPLIES)
def test_codeexec_scores_any_reply_with_a_reason(reply):
    v = CodeExec(tests="assert f(1) == 1\n", timeout=10)({"task_id": "t", "final_text": reply})
    assert v["reward"] in (0, 1) and isinstance(v["reason"], str) and v["reason"]
    assert v["markers"]["no_reward_hack"] in (0.0, 1.0)
