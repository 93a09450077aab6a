"""whileai: simulate, grade, measure with intervals, select, guard, train, prove.

``import whileai as wai`` is the public API. It is a thin, lazily loaded facade over ``whileai_core``
(PEP 562): importing it loads no numpy, scipy, httpx, torch or trl; each name is resolved from the table
below on first use and then cached.
"""

from __future__ import annotations

import importlib
from typing import Any

try:  # pragma: no cover - depends on how the package was installed
    from importlib.metadata import PackageNotFoundError, version as _dist_version

    try:
        __version__ = _dist_version("whileai")
    except PackageNotFoundError:
        __version__ = "0.0.0"
except ImportError:  # pragma: no cover
    __version__ = "0.0.0"

# public name -> (module, attribute); attribute None means the module itself (a namespace).
_LAZY: dict[str, tuple[str, str | None]] = {
    # simulate
    "tool": ("whileai_core.tools", "tool"),
    "Tool": ("whileai_core.tools", "Tool"),
    "World": ("whileai_core.world", "World"),
    "world": ("whileai_core.world", "world"),
    "seeded_agent": ("whileai_core.agents", "seeded_agent"),
    "SEEDED_BEHAVIORS": ("whileai_core.agents", "SEEDED_BEHAVIORS"),
    "Scenario": ("whileai_core.situations", "Scenario"),
    "situations": ("whileai_core.situations", "situations"),
    "covering_array": ("whileai_core.covering", "covering_array"),
    "simulate": ("whileai_core.simulate", "simulate"),
    "SimulationData": ("whileai_core.simulate", "SimulationData"),
    # grade
    "ScoredData": ("whileai_core.grade", "ScoredData"),
    "run_judge": ("whileai_core.grade", "run_judge"),
    "normalize_verdict": ("whileai_core.grade", "normalize_verdict"),
    "JudgeError": ("whileai_core.grade", "JudgeError"),
    # measure
    "pass_at": ("whileai_core.measure", "pass_at"),
    "PassAt": ("whileai_core.measure", "PassAt"),
    "delta_report": ("whileai_core.measure", "delta_report"),
    "compare": ("whileai_core.compare", "compare"),
    "Comparison": ("whileai_core.compare", "Comparison"),
    "DeltaReport": ("whileai_core.measure", "DeltaReport"),
    "eval_variance": ("whileai_core.measure", "eval_variance"),
    "holdout_size": ("whileai_core.measure", "holdout_size"),
    "wilson_interval": ("whileai_core.stats", "wilson_interval"),
    "cohen_kappa": ("whileai_core.stats", "cohen_kappa"),
    # select
    "select": ("whileai_core.select", "select"),
    "Selection": ("whileai_core.select", "Selection"),
    "build_preference_pairs": ("whileai_core.preferences", "build_preference_pairs"),
    "curriculum": ("whileai_core.curriculum", "curriculum"),
    # guard
    "verify": ("whileai_core.verify", None),
    "Verifier": ("whileai_core.verify", "Verifier"),
    "judge_trust": ("whileai_core.judge_trust", "judge_trust"),
    "attach_labels": ("whileai_core.judge_trust", "attach_labels"),
    "judge_probes": ("whileai_core.judge_trust", "judge_probes"),
    "decontaminate": ("whileai_core.guards", "decontaminate"),
    "hack_scan": ("whileai_core.guards", "hack_scan"),
    "trace_markers": ("whileai_core.guards", "trace_markers"),
    "HackMonitor": ("whileai_core.guards", "HackMonitor"),
    # export and train
    "export": ("whileai_core.export", "export"),
    "RowList": ("whileai_core.rows", "RowList"),
    "rows": ("whileai_core.rows", "make_rows"),
    "train": ("whileai_core.train", "train"),
    "prove": ("whileai_core.train", "prove"),
    "holdout": ("whileai_core.train", "holdout"),
    "LocalModel": ("whileai_core.local_model", "LocalModel"),
    "export_environment": ("whileai_core.environment", "export_environment"),
    "export_trl": ("whileai_core.trl_formats", "export_trl"),
    # models and configuration
    "OpenAI": ("whileai_core.backends", "OpenAI"),
    "Anthropic": ("whileai_core.backends", "Anthropic"),
    "Endpoint": ("whileai_core.backends", "Endpoint"),
    "Ollama": ("whileai_core.backends", "Ollama"),
    "Judge": ("whileai_core.judge", "Judge"),
    "configure": ("whileai_core.config", "configure"),
    "context": ("whileai_core.config", "context"),
    "settings": ("whileai_core.config", "settings"),
    # the pytest plugin's decorator (imports pytest only when used)
    "scenarios": ("pytest_whileai.markers", "scenarios"),
    # numbers
    "defaults": ("whileai_core.defaults", None),
}

__all__ = sorted([*_LAZY, "__version__"])


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'whileai' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
