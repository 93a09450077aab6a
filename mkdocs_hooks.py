"""MkDocs hooks: the API page of ``wai.defaults`` gets a table of every constant with its value and its source,
read from the comments beside them in ``whileai_core/defaults.py`` (mkdocstrings shows values, not comments);
and a Returns section, read as one item (``returns_multiple_items: false`` in mkdocs.yml, so its wrapped lines
stay one paragraph), drops the leading ``Type:`` its docstring repeats from the annotation in the Type column."""

from __future__ import annotations

import re
from pathlib import Path

DEFAULTS = Path(__file__).resolve().parent / "whileai_core" / "defaults.py"
MARKER = "<!-- defaults-table -->"
CONSTANT = re.compile(r"^(?P<name>[A-Z][A-Z0-9_]*)\s*(?::[^=]+)?=\s*(?P<value>.*?)\s*(?:#\s*(?P<source>.*))?$")


def defaults_table() -> str:
    """A Markdown table per section of defaults.py: constant, value, source."""
    out: list[str] = []
    last: list[str] | None = None
    lines = DEFAULTS.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# ---") and i + 1 < len(lines) and lines[i + 1].startswith("# ") \
                and not lines[i + 1].startswith("# ---"):
            title = lines[i + 1].lstrip("# ").strip()
            if title:
                out += ["", f"### {title}", "", "| constant | value | source |", "| --- | --- | --- |"]
            last = None
            continue
        hit = CONSTANT.match(line)
        if hit and out:
            last = [hit["name"], hit["value"], hit["source"] or "(no source given)"]
            out.append(last)  # type: ignore[arg-type]
        elif last is not None and line.lstrip().startswith("#") and not line.startswith("# ---"):
            last[2] += " " + line.strip().lstrip("# ")
        else:
            last = None
    cell = lambda text: text.replace("|", "\\|").replace("<", "&lt;")  # "<type>: <message>" is text, not tags
    return "\n".join(x if isinstance(x, str) else f"| `{x[0]}` | `{cell(x[1])}` | {cell(x[2])} |" for x in out)


def on_page_markdown(markdown: str, page, **kwargs) -> str:
    if page.file.src_uri.startswith("learn/"):  # no section headings: the empty table-of-contents column
        page.meta["hide"] = [*page.meta.get("hide", []), "toc"]  # goes, and the code gets its width
    if MARKER in markdown:
        return markdown.replace(MARKER, defaults_table())
    return markdown


RETURNS = re.compile(r'(<span class="doc-section-title">Returns:</span></p>\s*<table>.*?</table>)', re.DOTALL)
TYPE_PREFIX = re.compile(r'(<div class="doc-md-description">\s*<p>)'
                         r'[A-Za-z_][\w.]*(?:\[[^\]:<]*\])?(?: \| [A-Za-z_][\w.]*(?:\[[^\]:<]*\])?)*: ')


def on_page_content(html: str, page, **kwargs) -> str:
    if not page.file.src_uri.startswith("api/"):
        return html
    return RETURNS.sub(lambda m: TYPE_PREFIX.sub(r"\1", m.group(1), count=1), html)
