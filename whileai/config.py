"""``whileai.config``: the SDK's module path for process-wide model settings (engine: ``whileai_core.models.config``).

The same objects as ``wai.configure``, ``wai.context`` and ``wai.settings``; ``reset()`` clears what
``configure``/``context`` set.
"""

from whileai_core.models.config import ROLES, Settings, configure, context, reset, settings

__all__ = ["ROLES", "Settings", "configure", "context", "reset", "settings"]
