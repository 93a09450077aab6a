"""``RowList``: the list of rows every step returns, which can export itself.

It sits one floor above ``rows`` so that ``rows`` never reaches up to ``train.export``; ``export`` is imported
when it is called.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from whileai_core.rows import Row


class RowList(list):
    """A list of row dicts that can export itself and be called to get a plain copy."""

    system_prompt: str | None = None
    tools: Sequence[Any] = ()

    def __call__(self) -> list[Row]:
        return [dict(r) for r in self]

    def export(self, path: str | os.PathLike[str] | None = None, **kwargs: Any) -> Any:
        """Write trainer-ready JSONL (see ``whileai_core.train.export.export``)."""
        from whileai_core.train.export import export  # late: train sits above every step that returns rows

        kwargs.setdefault("system_prompt", self.system_prompt)
        kwargs.setdefault("tools", self.tools)
        return export(self, path, **kwargs)
