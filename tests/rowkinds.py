"""A row that is a Mapping but not a dict: what the fast column paths (``map(dict.get)``, ``itemgetter``) must
read the same as a dict, through the row-by-row ``.get`` they fall back to."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class MappingRow(Mapping[str, Any]):
    """``d`` seen only through the Mapping protocol."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.d = d

    def __getitem__(self, k: str) -> Any:
        return self.d[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self.d)

    def __len__(self) -> int:
        return len(self.d)
