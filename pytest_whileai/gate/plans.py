"""The power line's plans kept between runs in pytest's cache (``.pytest_cache``; issue 34).

A plan (``whileai_core.gate.compare.trials_needed``) simulates the gate's rule at each candidate suite size,
which takes seconds at k > 1. A plan is keyed by every input (drop, base rate, k, power, alpha, the simulation's
defaults) and a digest of the code that computes it, so a cached plan is exactly the plan that code would
compute; ``-p no:cacheprovider`` or ``--cache-clear`` computes it afresh. The newest
``POWER_PLAN_CACHE_ENTRIES`` are kept.
"""

from __future__ import annotations

from typing import Any

import pytest

from whileai_core import defaults as D

CACHE_KEY = "whileai/power_plans"


def load(config: pytest.Config) -> dict[str, Any] | None:
    """The cached plans (a dict to pass as ``compute_gate(plan_cache=)``), or None without pytest's cache."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return None
    plans = cache.get(CACHE_KEY, {})
    return dict(plans) if isinstance(plans, dict) else {}


def store(config: pytest.Config, plans: dict[str, Any] | None, before: int) -> None:
    """Write ``plans`` back when the gate added one (``before``: how many were loaded), the newest kept."""
    cache = getattr(config, "cache", None)
    if cache is None or plans is None or len(plans) == before:
        return
    keep = list(plans.items())[-D.POWER_PLAN_CACHE_ENTRIES:]
    cache.set(CACHE_KEY, dict(keep))
