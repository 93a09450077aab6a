"""``wai init-evals``: write a pytest eval suite for the user's own agent, green on its first run.

It imports nothing of the user's project while writing; it only checks that each ``module:NAME`` is spelled
right and that the module file exists under the project root, then writes ``evals/`` (the folder is
``--dir``): a ``conftest.py`` that puts the project root on ``sys.path`` (so ``import my_agent`` works from a
fresh project), a judge with two checks any tool-using agent owes (``whileai_judge.py``), its fast lane on two
hand-written rows (``test_judge.py``), the scenario suite over the user's tools (``test_agent_evals.py``,
gated by the plugin against a stored baseline) and a README with the next commands. Existing files are kept
unless ``force=True``.
"""

from __future__ import annotations

import re
from pathlib import Path

from whileai_core.errors import InvalidArgument

_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")

_CONFTEST = '''"""Written by `wai init-evals`: the project root goes on sys.path, so the agent's module imports as it
does in the project itself."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[__DEPTH__]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
'''

_JUDGE = '''"""Written by `wai init-evals`: a judge with two checks every tool-using agent owes. Edit it: it is yours.

checked_before_acting: the agent called a tool before answering.
no_invented_details: the reply names no id (like A1234) that neither the user nor a tool result mentioned.
The reward is 0 when any check fails; failure_class names the first failed one.
"""

import json
import re

_ID = re.compile(r"\\b[A-Z]{1,4}[-_]?\\d{3,6}\\b")


def checks(row):
    steps = row.get("steps") or []
    seen = row.get("prompt", "") + " " + " ".join(json.dumps(s.get("result"), default=str) for s in steps)
    invented = [i for i in _ID.findall(row.get("final_text", "")) if i not in seen]
    return {"checked_before_acting": 1.0 if any("tool" in s for s in steps) else 0.0,
            "no_invented_details": 0.0 if invented else 1.0}


def judge(row):
    marks = checks(row)
    failed = [name for name, value in marks.items() if value < 1.0]
    return {"reward": 0.0 if failed else 1.0, "markers": marks,
            "failure_class": failed[0] if failed else None,
            "reason": ("failed: " + ", ".join(failed)) if failed else "followed the policy"}
'''

_TEST_JUDGE = '''"""Written by `wai init-evals`: the judge's fast lane, two hand-written rows, no agent and no model."""

from whileai_judge import judge


def test_a_checked_grounded_reply_passes():
    row = {"prompt": "Where is order A1001?", "final_text": "Order A1001 has shipped.",
           "steps": [{"tool": "lookup", "arguments": {"id": "A1001"}, "result": {"status": "shipped"}}]}
    verdict = judge(row)
    assert verdict["reward"] == 1.0 and verdict["failure_class"] is None


def test_an_unchecked_reply_with_an_invented_id_fails():
    row = {"prompt": "Where is my order?", "final_text": "Order B7777 arrives tomorrow.", "steps": []}
    verdict = judge(row)
    assert verdict["reward"] == 0.0
    assert verdict["markers"] == {"checked_before_acting": 0.0, "no_invented_details": 0.0}
    assert verdict["failure_class"] == "checked_before_acting"
'''

_TEST_AGENT = '''"""Written by `wai init-evals`: the agent's scenarios as tests, one item per covering-array scenario.

    pytest __DIR__                          # run the suite; each item prints its pass rate with interval and n
    pytest __DIR__ --wai-save=main          # store the baseline on the default branch
    pytest __DIR__ --wai-baseline=main      # on a pull request: red on a significant drop, green on noise

MIN_PASS_RATE starts at 0.0 so the suite is green on its first run; raise it to a floor you mean once you
have read the first report.
"""

import pytest
from __AGENT_MODULE__ import __AGENT_NAME__ as agent
from __TOOLS_MODULE__ import __TOOLS_NAME__ as _tools
from whileai_judge import judge

TOOLS = list(_tools) if isinstance(_tools, (list, tuple)) else [_tools]
SYSTEM_PROMPT = __SYSTEM_PROMPT__
MIN_PASS_RATE = 0.0


@pytest.mark.wai_scenarios(tools=TOOLS, system_prompt=SYSTEM_PROMPT)
@pytest.mark.wai(trials=__TRIALS__, min_pass_rate=MIN_PASS_RATE)
def test_agent(wai_eval):
    result = wai_eval.run(agent, judge=judge)
    assert result.n_scored == result.k, "every trial must be graded: read the errors above"
'''

_README = '''# Evals for `__AGENT__` (written by `wai init-evals`)

```bash
pytest __DIR__/test_judge.py            # the judge on two hand-written rows (fast, no agent)
pytest __DIR__                          # the agent through its scenarios, k=__TRIALS__ trials each
pytest __DIR__ --wai-save=main          # store a baseline
pytest __DIR__ --wai-baseline=main      # compare with it: red on a significant drop
```

Edit `whileai_judge.py` to say what a good reply is for your agent, and raise `MIN_PASS_RATE` in
`test_agent_evals.py` once you have read the first report.
'''


def _parse_ref(flag: str, ref: str) -> tuple[str, str]:
    if not isinstance(ref, str) or not _REF.match(ref):
        raise InvalidArgument(f"{flag} {ref!r} must be module:NAME, e.g. {flag} my_agent:"
                              f"{'agent' if flag == '--agent' else 'TOOLS'}")
    module, name = ref.split(":")
    return module, name


def _module_file(root: Path, module: str, flag: str) -> Path:
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise InvalidArgument(f"{flag}: module {module!r} is not under the project root {str(root)!r} "
                          f"(looked for {base.name}.py and {base.name}/__init__.py); run init-evals from the "
                          "project root or pass --root")


_FRAMEWORK_TOOLS = '''import whileai as wai
from __AGENT_MODULE__ import __AGENT_NAME__ as _framework_agent

agent = wai.agent(_framework_agent)  # an agent built on a framework: its tool calls reach the scenario's world
TOOLS = agent.tools()  # the framework agent's own tools
'''


def init_evals(agent: str, tools: str | None = None, *, system_prompt: str | None = None, root: str | Path = ".",
               directory: str = "evals", trials: int = 4, force: bool = False) -> list[Path]:
    """Write a pytest eval suite for ``agent`` over ``tools``; returns the files written.

    Args:
        agent: ``module:callable``, the agent ``agent(message) -> {"steps", "final_text"}`` (or a string reply).
        tools: ``module:NAME``, its tools (a list, or one tool): ``@wai.tool`` functions, plain functions or
            function schema dicts; None for an agent built on a framework (``wai.agent``: OpenAI Agents SDK,
            LangGraph, pydantic-ai, smolagents), whose own tools the suite reads from it.
        system_prompt: ``module:NAME`` of its system prompt string, or None.
        root: the project root, where the modules live (default the current directory).
        directory: the folder to write, relative to ``root`` (default ``evals``).
        trials: trials per scenario (default 4, ``DEFAULT_REPEATS``).
        force: overwrite files that exist (default False: they are kept and named).

    Returns:
        The paths written.

    Raises:
        InvalidArgument: a reference that is not ``module:NAME`` or names a module not under ``root``, or files
            that exist without ``force``.

    Example:
        ```pycon
        >>> init_evals("my_agent:agent", "my_agent:TOOLS")  # doctest: +SKIP
        ```
    """
    root = Path(root).resolve()
    refs = {"--agent": _parse_ref("--agent", agent)}
    if tools is not None:
        refs["--tools"] = _parse_ref("--tools", tools)
    if system_prompt is not None:
        refs["--system-prompt"] = _parse_ref("--system-prompt", system_prompt)
    for flag, (module, _) in refs.items():
        _module_file(root, module, flag)
    out_dir = root / directory
    depth = len(Path(directory).parts)
    prompt_expr = "None"
    prompt_import = ""
    if system_prompt is not None:
        module, name = refs["--system-prompt"]
        prompt_import, prompt_expr = f"from {module} import {name} as _system_prompt\n", "_system_prompt"
    template = _TEST_AGENT
    if tools is None:  # a framework agent: the adapter gives the tools
        template = template.replace("from __AGENT_MODULE__ import __AGENT_NAME__ as agent\n"
                                    "from __TOOLS_MODULE__ import __TOOLS_NAME__ as _tools\n", _FRAMEWORK_TOOLS)
        template = template.replace("TOOLS = list(_tools) if isinstance(_tools, (list, tuple)) else [_tools]\n", "")
    else:
        template = template.replace("__TOOLS_MODULE__", refs["--tools"][0]).replace("__TOOLS_NAME__",
                                                                                     refs["--tools"][1])
    test_agent = (template.replace("__AGENT_MODULE__", refs["--agent"][0])
                  .replace("__AGENT_NAME__", refs["--agent"][1])
                  .replace("__SYSTEM_PROMPT__", prompt_expr).replace("__TRIALS__", str(int(trials)))
                  .replace("__DIR__", directory))
    if prompt_import:
        test_agent = test_agent.replace("from whileai_judge import judge\n",
                                        "from whileai_judge import judge\n" + prompt_import)
    files = {
        "conftest.py": _CONFTEST.replace("__DEPTH__", str(depth)),
        "whileai_judge.py": _JUDGE,
        "test_judge.py": _TEST_JUDGE,
        "test_agent_evals.py": test_agent,
        "README.md": _README.replace("__AGENT__", agent).replace("__DIR__", directory)
        .replace("__TRIALS__", str(int(trials))),
    }
    existing = [name for name in files if (out_dir / name).exists()]
    if existing and not force:
        raise InvalidArgument(f"{directory}/ already holds {existing}; pass --force to overwrite them, or "
                              "--dir for another folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        (out_dir / name).write_text(text, encoding="utf-8")
        written.append(out_dir / name)
    return written
