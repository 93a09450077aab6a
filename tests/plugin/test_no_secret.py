"""No secret in any artifact (issue 26 item 7): a canary key in the environment, a backend's configured key,
Bearer and Basic credentials, a ``user:pw@`` URL and a key-like query parameter, raised by an agent, a judge and
a tool, appear in none of run.json, both JUnit files, the HTML report, the terminal and .whileai/runs/."""

from __future__ import annotations

import base64

import pytest

from whileai_core.redact import redact

CANARY = "sk-canary-9f8e7d6c5b4a39281706"  # in OPENAI_API_KEY
CONFIGURED = "cfg-canary-0a1b2c3d4e5f67890"  # only a backend's api_key=
PASSWORD = "pw-canary-5e6f7a8b9c0d"

SUITE = f'''
import pytest
import whileai as wai
from whileai_core.tools import dispatch


@wai.tool
def lookup(order_id: str) -> dict:
    """Look up an order."""
    raise ConnectionError("db at postgres://admin:{PASSWORD}@10.0.0.5/orders refused")


BACKEND = wai.OpenAI("gpt-test", api_key="{CONFIGURED}")


def agent(message):
    i = message.rollout_index
    if i % 4 == 0:
        raise RuntimeError("upstream said: invalid key sk-canary-9f8e7d6c5b4a39281706 for https://api.example/v1")
    if i % 4 == 1:
        raise ValueError("GET https://h/v1?api_key={CANARY}&x=1 with Authorization: Bearer {CONFIGURED}")
    result = dispatch([lookup])("lookup", {{"order_id": "1"}})  # the tool's error is a result the agent reads
    return {{"steps": [{{"tool": "lookup", "arguments": {{"order_id": "1"}}, "result": result}}],
             "final_text": "done"}}


def judge(row):
    if row["rollout_index"] % 4 == 2:
        raise PermissionError("judge backend: Basic " + "{base64.b64encode(f'user:{PASSWORD}'.encode()).decode()}")
    return 1.0


@pytest.mark.wai_scenarios(["one ask", "two asks", "three asks"])
@pytest.mark.wai(trials=8)
def test_desk(wai_eval):
    BACKEND._key()  # the configured backend's key is known to the redaction from here on
    wai_eval.run(agent, judge=judge)


@pytest.mark.wai(trials=4)
def test_crash(wai_eval):
    BACKEND._key()
    raise RuntimeError("crashed holding {CONFIGURED} and {CANARY}")
'''


def test_redact_covers_every_form():
    text = redact(f"http://bob:{PASSWORD}@h/x?token=abcdef12&k=1 Authorization: Bearer abc.def-123 "
                  f"Basic dXNlcjpwYXNz api_key={CANARY}", [PASSWORD])
    assert PASSWORD not in text and CANARY not in text and "abcdef12" not in text and "abc.def-123" not in text
    assert "dXNlcjpwYXNz" not in text and "<redacted>" in text


def test_a_canary_secret_reaches_no_artifact(pytester: pytest.Pytester, monkeypatch):
    pytest.importorskip("jinja2")
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    pytester.makepyfile(test_desk=SUITE)
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", "--wai-json=run.json",
                                        "--wai-junitxml=wai.xml", "--junitxml=pytest.xml", "--wai-html=report.html",
                                        "--wai-autosave", "--wai-markdown=summary.md",
                                        "--wai-max-unscored=1")  # the judge's errors would make it INCOMPLETE,
    # which refuses the autosave: this test wants every artifact written
    out = res.stdout.str() + res.stderr.str()
    assert "RuntimeError" in out and "<redacted>" in out  # the errors are shown, their secrets are not
    files = [pytester.path / n for n in ("run.json", "wai.xml", "pytest.xml", "report.html", "summary.md")]
    files += list((pytester.path / ".whileai").rglob("*.json"))
    assert all(f.is_file() for f in files) and len(files) >= 6, files
    basic = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    for secret in (CANARY, CONFIGURED, PASSWORD, basic):
        assert secret not in out, secret
        for f in files:
            assert secret not in f.read_text(encoding="utf-8"), (secret, f)
    doc = (pytester.path / "run.json").read_text()
    assert "<redacted>" in doc and "ConnectionError" in doc and "PermissionError" in doc
