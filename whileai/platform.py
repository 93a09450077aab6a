"""``whileai.platform``: the client of the hosted While service (``whileai_core.platform``).

Imported on its own (``from whileai import platform``), so ``import whileai`` never loads httpx for it.
"""

from whileai_core.errors import LoginError, PlatformError, TrainingSelectionError
from whileai_core.platform import *  # noqa: F403
from whileai_core.platform import __all__ as _core_all

__all__ = [*_core_all, "LoginError", "PlatformError", "TrainingSelectionError"]
