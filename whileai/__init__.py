"""whileai: simulate, grade, measure with intervals, select, guard, train, prove.

``import whileai as wai`` is the public API. It is a thin, lazily loaded facade over ``whileai_core``
(PEP 562): importing it loads no numpy, scipy, httpx, torch or trl; each name is resolved from the table
below on first use and then cached.
"""

from __future__ import annotations

import importlib
from typing import Any

# ``__version__`` (of the pytest-whileai distribution) is resolved on first use, not at import: reading installed
# metadata costs ~20 ms of importlib.metadata, most of ``import whileai`` (issue 34).

# public name -> (module, attribute); attribute None means the module itself (a namespace).
_LAZY: dict[str, tuple[str, str | None]] = {
    # simulate
    "tool": ("whileai_core.tools", "tool"),
    "Tool": ("whileai_core.tools", "Tool"),
    "dispatch": ("whileai_core.tools", "dispatch"),
    "World": ("whileai_core.simulate.world", "World"),
    "world": ("whileai_core.simulate.world", "world"),
    "seeded_agent": ("whileai_core.simulate.agents", "seeded_agent"),
    "SEEDED_BEHAVIORS": ("whileai_core.simulate.agents", "SEEDED_BEHAVIORS"),
    "rule_clauses": ("whileai_core.simulate.situations", "rule_clauses"),
    "init_evals": ("whileai_core.init_evals", "init_evals"),
    "Scenario": ("whileai_core.simulate.situations", "Scenario"),
    "situations": ("whileai_core.simulate.situations", "situations"),
    "covering_array": ("whileai_core.simulate.covering", "covering_array"),
    "simulate": ("whileai_core.simulate.run", "simulate"),
    "SimulationData": ("whileai_core.simulate.run", "SimulationData"),
    # grade
    "ScoredData": ("whileai_core.grade.run", "ScoredData"),
    "run_judge": ("whileai_core.grade.run", "run_judge"),
    "normalize_verdict": ("whileai_core.grade.run", "normalize_verdict"),
    "JudgeError": ("whileai_core.errors", "JudgeError"),
    # measure
    "pass_at": ("whileai_core.measure.measure", "pass_at"),
    "PassAt": ("whileai_core.measure.measure", "PassAt"),
    "delta_report": ("whileai_core.measure.measure", "delta_report"),
    "compare": ("whileai_core.measure.compare", "compare"),
    "Comparison": ("whileai_core.measure.compare", "Comparison"),
    "DeltaReport": ("whileai_core.measure.measure", "DeltaReport"),
    "eval_variance": ("whileai_core.measure.measure", "eval_variance"),
    "holdout_size": ("whileai_core.measure.measure", "holdout_size"),
    "compare_runs": ("whileai_core.measure.runs", "compare_runs"),
    "eval_power": ("whileai_core.measure.runs", "eval_power"),
    "noise_band": ("whileai_core.measure.runs", "noise_band"),
    "bootstrap_ci": ("whileai_core.measure.runs", "bootstrap_ci"),
    "run_config": ("whileai_core.measure.config", "run_config"),
    "wilson_interval": ("whileai_core.measure.stats", "wilson_interval"),
    "cohen_kappa": ("whileai_core.measure.stats", "cohen_kappa"),
    "cohen_kappa_interval": ("whileai_core.measure.stats", "cohen_kappa_interval"),
    "newcombe_interval": ("whileai_core.measure.stats", "newcombe_interval"),
    "SequentialPlan": ("whileai_core.measure.sequential", "SequentialPlan"),
    "SequentialResult": ("whileai_core.measure.sequential", "SequentialResult"),
    "sequential_test": ("whileai_core.measure.sequential", "sequential_test"),
    "pool_runs": ("whileai_core.measure.history", "pool_runs"),
    "History": ("whileai_core.measure.history", "History"),
    # select
    "select": ("whileai_core.select.select", "select"),
    "Selection": ("whileai_core.select.select", "Selection"),
    "build_preference_pairs": ("whileai_core.select.preferences", "build_preference_pairs"),
    "curriculum": ("whileai_core.select.curriculum", "curriculum"),
    "retire_solved": ("whileai_core.select.curriculum", "retire_solved"),
    "Rejection": ("whileai_core.select.rules", "Rejection"),
    "next_round": ("whileai_core.select.rounds", "next_round"),
    "group_signal": ("whileai_core.select.rounds", "group_signal"),
    "recommend": ("whileai_core.train.recommend", "recommend"),
    # guard
    "verify": ("whileai_core.grade.verify", None),
    "Verifier": ("whileai_core.grade.verify", "Verifier"),
    "verifier": ("whileai_core.grade.verify.basic", "verifier"),
    "MathEqual": ("whileai_core.grade.verify.math_equal", "MathEqual"),
    "ExactMatch": ("whileai_core.grade.verify.basic", "ExactMatch"),
    "Includes": ("whileai_core.grade.verify.basic", "Includes"),
    "Regex": ("whileai_core.grade.verify.basic", "Regex"),
    "MultipleChoice": ("whileai_core.grade.verify.basic", "MultipleChoice"),
    "Numeric": ("whileai_core.grade.verify.basic", "Numeric"),
    "JSONValid": ("whileai_core.grade.verify.basic", "JSONValid"),
    "JSONFields": ("whileai_core.grade.verify.basic", "JSONFields"),
    "ToolCalls": ("whileai_core.grade.verify.toolcalls", "ToolCalls"),
    "judge_trust": ("whileai_core.grade.judge_trust", "judge_trust"),
    "attach_labels": ("whileai_core.grade.judge_trust", "attach_labels"),
    "judge_probes": ("whileai_core.grade.judge_trust", "judge_probes"),
    "compare_judges": ("whileai_core.grade.judge_trust", "compare_judges"),
    "leak_report": ("whileai_core.grade.views", "leak_report"),
    "decontaminate": ("whileai_core.guard.contamination", "decontaminate"),
    "hack_scan": ("whileai_core.guard.hack", "hack_scan"),
    "hack_scan_diff": ("whileai_core.guard.hack", "hack_scan_diff"),
    "trace_markers": ("whileai_core.guard.trace", "trace_markers"),
    "HackMonitor": ("whileai_core.guard.monitor", "HackMonitor"),
    # export and train
    "export": ("whileai_core.train.export", "export"),
    "RowList": ("whileai_core.rowlist", "RowList"),
    "rows": ("whileai_core.grade.lists", "make_rows"),
    "train": ("whileai_core.train.train", "train"),
    "prove": ("whileai_core.train.prove", "prove"),
    "holdout": ("whileai_core.train.holdout", "holdout"),
    "LocalModel": ("whileai_core.models.local_model", "LocalModel"),
    "export_environment": ("whileai_core.train.environment", "export_environment"),
    "export_trl": ("whileai_core.train.trl_formats", "export_trl"),
    "load_environment": ("whileai_core.train.environment", "load_environment"),
    "export_preference": ("whileai_core.train.preferences", "export_preference"),
    # serve a checkpoint behind an OpenAI-compatible server
    "serve": ("whileai_core.serve.server", "serve"),
    "Server": ("whileai_core.serve.server", "Server"),
    # feed traces back (a namespace: wai.traces.load, .situations, .redact_strings)
    "traces": ("whileai_core.traces", None),
    # models and configuration
    "OpenAI": ("whileai_core.models.backends", "OpenAI"),
    "Anthropic": ("whileai_core.models.backends", "Anthropic"),
    "Endpoint": ("whileai_core.models.backends", "Endpoint"),
    "Ollama": ("whileai_core.models.backends", "Ollama"),
    "Judge": ("whileai_core.grade.judge", "Judge"),
    "configure": ("whileai_core.models.config", "configure"),
    "context": ("whileai_core.models.config", "context"),
    "settings": ("whileai_core.models.config", "settings"),
    # look at a run: the HTML report, experiment tracking, progress, cost
    "report": ("whileai_core.report.html", "report"),
    "log_mlflow": ("whileai_core.report.tracking", "log_mlflow"),
    "Progress": ("whileai_core.progress", "Progress"),
    "usage": ("whileai_core.report.cost", "usage"),
    # the pytest plugin's decorator (imports pytest only when used)
    "scenarios": ("pytest_whileai.markers", "scenarios"),
    # errors: one tree, each also the built-in a caller catches (whileai_core/errors.py)
    "WaiError": ("whileai_core.errors", "WaiError"),
    "InvalidArgument": ("whileai_core.errors", "InvalidArgument"),
    "AnswerTooLarge": ("whileai_core.errors", "AnswerTooLarge"),
    "InvalidArgumentType": ("whileai_core.errors", "InvalidArgumentType"),
    "BackendError": ("whileai_core.errors", "BackendError"),
    "CassetteMiss": ("whileai_core.errors", "CassetteMiss"),
    "MissingKey": ("whileai_core.errors", "MissingKey"),
    "JudgeReplyError": ("whileai_core.errors", "JudgeReplyError"),
    "VerifierError": ("whileai_core.errors", "VerifierError"),
    "UnsupportedAnnotation": ("whileai_core.errors", "UnsupportedAnnotation"),
    "BaselineError": ("whileai_core.errors", "BaselineError"),
    "CorruptBaseline": ("whileai_core.errors", "CorruptBaseline"),
    "MissingBaseline": ("whileai_core.errors", "MissingBaseline"),
    "NonFiniteReward": ("whileai_core.errors", "NonFiniteReward"),
    "IncompatibleBaseline": ("whileai_core.errors", "IncompatibleBaseline"),
    "PlatformError": ("whileai_core.errors", "PlatformError"),
    "LoginError": ("whileai_core.errors", "LoginError"),
    "TrainingSelectionError": ("whileai_core.errors", "TrainingSelectionError"),
    "ServeError": ("whileai_core.errors", "ServeError"),
    "BudgetExceeded": ("whileai_core.errors", "BudgetExceeded"),
    "MissingExtra": ("whileai_core.errors", "MissingExtra"),
    "ScaleError": ("whileai_core.errors", "ScaleError"),
    # the hosted While service (a namespace, loaded only when used)
    "platform": ("whileai.platform", None),
    # numbers
    "defaults": ("whileai_core.defaults", None),
}

__all__ = sorted([*_LAZY, "__version__"])


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from whileai_core import distribution_version

        globals()["__version__"] = version = distribution_version()
        return version
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'whileai' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})
