"""``examples/loop.py`` (docs/train.md, "The loop in one program") runs end to end and the trained model wins.

simulate -> grade -> select -> train (the tiny local Llama, CPU) -> serve (transformers serve on 127.0.0.1)
-> simulate against the served endpoint -> prove against the base. The program stops its own server.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_core.serve import engines

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.train, pytest.mark.slow]


@pytest.mark.skipif(bool(engines.missing("transformers")), reason="needs transformers[serving] (fastapi, uvicorn)")
def test_the_loop_in_one_program_runs_and_the_served_model_beats_its_base(tmp_path):
    pytest.importorskip("trl")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "loop.py"), "--dir", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=400, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    url = re.search(r"serving at (http://127\.0\.0\.1:(\d+)/v1)", out)
    assert url, out
    assert re.search(r"^stand-in agent: pass@1 0\.\d\d ", out, re.MULTILINE)
    assert re.search(r"^train sft: 60 steps on \d+ examples", out, re.MULTILINE)
    assert re.search(r"^served model: pass@1 \d\.\d\d ", out, re.MULTILINE)
    prove = re.search(r"prove: endpoint:.*sft/final@http://127\.0\.0\.1:\d+/v1 vs local:base on (\d+) holdout tasks", out)
    assert prove and int(prove.group(1)) >= 8, out
    verdict = re.search(r"^(better|worse|inconclusive)\b.*delta ([+-]\d\.\d+) ", out, re.MULTILINE)
    assert verdict and verdict.group(1) == "better" and float(verdict.group(2)) > 0, out
    import socket

    with socket.socket() as s:  # the program's server is gone with it
        assert s.connect_ex(("127.0.0.1", int(url.group(2)))) != 0


def _anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_docs_block_is_the_example_verbatim():
    doc = (ROOT / "docs" / "train.md").read_text(encoding="utf-8")
    section = doc[doc.index("## The loop in one program"):]
    block = re.search(r"```python\n(.*?)\n```", section, re.DOTALL).group(1)
    assert block in (ROOT / "examples" / "loop.py").read_text(encoding="utf-8")
    assert "tests/serve/test_loop.py" in section  # the not-run marker names the test that runs it


def test_readme_loop_line_links_every_step_to_a_page_and_heading_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = readme[readme.index("The loop: **"):readme.index("**;", readme.index("The loop: **"))]
    links = re.findall(r"\[([^\]]+)\]\(([^)#]+)(?:#([^)]+))?\)", line)
    steps = [name for name, _, _ in links]
    assert steps == ["simulate", "grade", "measure with intervals", "select", "guard", "train", "prove on a holdout",
                     "serve", "feed traces back"]
    for name, page, anchor in links:
        text = (ROOT / page).read_text(encoding="utf-8")
        assert "```python" in text, f"{name}: {page} has no code"
        if anchor:
            headings = {_anchor(h.lstrip("#")) for h in text.splitlines() if h.startswith("#")}
            assert anchor in headings, f"{name}: no heading #{anchor} in {page}"
