"""The Learn lessons run: each ``docs/learn/NN_name.py`` exits 0 offline and prints exactly the text its page
``docs/learn/NN-name.md`` shows in the ``<!-- output -->`` block; the page includes that very file.

Measured on the shared 2-core dev box (one run each): lessons 1-4, 6 and 7 take 0.3-0.6 s, lesson 5 1.8 s.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_docs import fenced_blocks, run_block

ROOT = Path(__file__).resolve().parents[1]
LEARN = ROOT / "docs" / "learn"
PAGES = sorted(p for p in LEARN.glob("[0-9][0-9]-*.md"))
SNIPPET = re.compile(r'^--8<--\s+"(?P<path>[^"]+)"\s*$')


def lesson(page: Path) -> tuple[Path, str]:
    """The file a lesson page includes and the output it shows."""
    blocks = fenced_blocks(str(page.relative_to(ROOT)))
    code = [b for b in blocks if b.lang == "python"]
    assert len(code) == 1, f"{page.name}: one python block (the lesson file), found {len(code)}"
    included = SNIPPET.match(code[0].code.strip())
    assert included, f"{page.name}: the python block must include the lesson file with --8<-- \"docs/learn/...\""
    assert code[0].output is not None, f"{page.name}: no <!-- output --> text block after the code"
    return ROOT / included.group("path"), code[0].output


def test_seven_lessons_each_a_file_and_a_page():
    assert len(PAGES) == 7, [p.name for p in PAGES]
    for number, page in enumerate(PAGES, start=1):
        path, _ = lesson(page)
        assert path.parent == LEARN and path.name.startswith(f"{number:02d}_"), f"{page.name} includes {path}"


def test_lessons_use_only_the_public_facade():
    for path in sorted(LEARN.glob("[0-9][0-9]_*.py")):
        text = path.read_text(encoding="utf-8")
        assert "whileai_core" not in text and "pytest_whileai" not in text, f"{path.name} reaches past the facade"
        assert "import whileai as wai" in text


def test_lesson_7_is_the_quickstart_verbatim():
    quickstart = (ROOT / "examples" / "quickstart.py").read_text(encoding="utf-8")
    assert (LEARN / "07_quickstart.py").read_text(encoding="utf-8").startswith(quickstart)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_lesson_prints_what_its_page_shows(page: Path, tmp_path: Path):
    path, shown = lesson(page)
    done = run_block(path.read_text(encoding="utf-8"), tmp_path)
    assert done.returncode == 0, f"{path.name} exited {done.returncode}\n{done.stderr[-4000:]}"
    assert done.stdout == shown, f"{path.name} printed something other than {page.name} shows:\n{done.stdout}"
