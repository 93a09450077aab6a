"""``whileai.simulations.defaults``: the SDK's path to the defaults; the same module as ``whileai_core.defaults``."""

import sys

import whileai_core.defaults as _defaults

sys.modules[__name__] = _defaults
