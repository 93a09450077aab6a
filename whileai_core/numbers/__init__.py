"""How the engine prints numbers: one formatter (``format``: ``number``, ``interval``), on the ground floor so every
step prints an interval the same way (issue 31)."""

from whileai_core.numbers.format import interval, is_number, number

__all__ = ["interval", "is_number", "number"]
