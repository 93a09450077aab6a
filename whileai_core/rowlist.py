"""``RowList``: the list of rows every step returns, which can export itself.

It sits one floor above ``rows`` and reaches only down: the writer it calls (``whileai_core.export``) reads only the
ground floor, so every step that returns rows (``train.holdout`` among them) stays above both.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from whileai_core.export.writer import export
from whileai_core.rows import Row


class RowList(list):
    """A list of row dicts that can export itself and be called to get a plain copy."""

    system_prompt: str | None = None
    tools: Sequence[Any] = ()

    def __call__(self) -> list[Row]:
        return [dict(r) for r in self]

    def export(self, path: str | os.PathLike[str] | None = None, **kwargs: Any) -> Any:
        """Write trainer-ready JSONL (see ``whileai_core.export.writer.export``)."""
        kwargs.setdefault("system_prompt", self.system_prompt)
        kwargs.setdefault("tools", self.tools)
        return export(self, path, **kwargs)
