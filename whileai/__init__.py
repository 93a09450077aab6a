"""whileai: simulate, grade, measure with intervals, select, guard, train, prove.

``import whileai as wai`` is the public API. It is a thin, lazily loaded facade over ``whileai_core``
(PEP 562): importing it loads no numpy, scipy, httpx, torch or trl; each name is resolved from the table
below on first use and then cached.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "preflight": ("whileai_core.simulate.situations", "preflight"),
    "covering_array": ("whileai_core.simulate.covering", "covering_array"),
    "simulate": ("whileai_core.simulate.run", "simulate"),
    "Execution": ("whileai_core.options", "Execution"),
    "Harness": ("whileai_core.simulate.harness", "Harness"),
    "agent": ("whileai_core.adapters", "agent"),
    "AgentAdapter": ("whileai_core.adapters.base", "AgentAdapter"),
    "register_adapter": ("whileai_core.adapters", "register_adapter"),
    "mcp_tools": ("whileai_core.adapters.mcp", "mcp_tools"),
    "SimulationData": ("whileai_core.simulate.run", "SimulationData"),
    # grade
    "ScoredData": ("whileai_core.grade.run", "ScoredData"),
    "run_judge": ("whileai_core.grade.run", "run_judge"),
    "normalize_verdict": ("whileai_core.grade.run", "normalize_verdict"),
    "JudgeError": ("whileai_core.errors", "JudgeError"),
    # measure
    "pass_at": ("whileai_core.measure.pass_at", "pass_at"),
    "PassAt": ("whileai_core.measure.pass_at", "PassAt"),
    "delta_report": ("whileai_core.measure.delta", "delta_report"),
    "compare": ("whileai_core.measure.compare", "compare"),
    "Comparison": ("whileai_core.measure.compare", "Comparison"),
    "Stats": ("whileai_core.options", "Stats"),
    "DeltaReport": ("whileai_core.measure.delta", "DeltaReport"),
    "eval_variance": ("whileai_core.measure.between_runs", "eval_variance"),
    "holdout_size": ("whileai_core.measure.power", "holdout_size"),
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
    "judge_trust": ("whileai_core.grade.trust", "judge_trust"),
    "attach_labels": ("whileai_core.grade.labels", "attach_labels"),
    "judge_probes": ("whileai_core.grade.probes", "judge_probes"),
    "compare_judges": ("whileai_core.grade.ranking", "compare_judges"),
    "leak_report": ("whileai_core.grade.views", "leak_report"),
    "decontaminate": ("whileai_core.guard.contamination", "decontaminate"),
    "hack_scan": ("whileai_core.guard.hack", "hack_scan"),
    "hack_scan_diff": ("whileai_core.guard.hack", "hack_scan_diff"),
    "trace_markers": ("whileai_core.guard.trace", "trace_markers"),
    "HackMonitor": ("whileai_core.guard.monitor", "HackMonitor"),
    # export and train
    "export": ("whileai_core.export.writer", "export"),
    "RowList": ("whileai_core.rowlist", "RowList"),
    "rows": ("whileai_core.grade.lists", "make_rows"),
    "train": ("whileai_core.train.train", "train"),
    "Optim": ("whileai_core.options", "Optim"),
    "Generation": ("whileai_core.options", "Generation"),
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
    "OpenAI": ("whileai_core.models.openai", "OpenAI"),
    "Anthropic": ("whileai_core.models.anthropic", "Anthropic"),
    "Endpoint": ("whileai_core.models.endpoint", "Endpoint"),
    "Ollama": ("whileai_core.models.ollama", "Ollama"),
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
    "IsolationUnavailable": ("whileai_core.errors", "IsolationUnavailable"),
    "BackendError": ("whileai_core.errors", "BackendError"),
    "CassetteMiss": ("whileai_core.errors", "CassetteMiss"),
    "MissingKey": ("whileai_core.errors", "MissingKey"),
    "JudgeReplyError": ("whileai_core.errors", "JudgeReplyError"),
    "VerifierError": ("whileai_core.errors", "VerifierError"),
    "UnsupportedAnnotation": ("whileai_core.errors", "UnsupportedAnnotation"),
    "BaselineError": ("whileai_core.errors", "BaselineError"),
    "CorruptBaseline": ("whileai_core.errors", "CorruptBaseline"),
    "EditedBaseline": ("whileai_core.errors", "EditedBaseline"),
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
    # the Hugging Face Hub: wai.hub.push (a namespace)
    "hub": ("whileai_core.hub", None),
    # numbers
    "defaults": ("whileai_core.defaults", None),
}

__all__ = sorted([*_LAZY, "__version__"])

if TYPE_CHECKING:  # generated from _LAZY (tests/test_facade.py checks it): each public name's real type
    from pytest_whileai.markers import scenarios as scenarios
    from whileai import platform as platform
    from whileai_core import defaults as defaults, hub as hub, traces as traces
    from whileai_core.adapters import agent as agent, register_adapter as register_adapter
    from whileai_core.adapters.base import AgentAdapter as AgentAdapter
    from whileai_core.adapters.mcp import mcp_tools as mcp_tools
    from whileai_core.errors import (
        AnswerTooLarge as AnswerTooLarge,
        BackendError as BackendError,
        BaselineError as BaselineError,
        BudgetExceeded as BudgetExceeded,
        CassetteMiss as CassetteMiss,
        CorruptBaseline as CorruptBaseline,
        EditedBaseline as EditedBaseline,
        IncompatibleBaseline as IncompatibleBaseline,
        InvalidArgument as InvalidArgument,
        InvalidArgumentType as InvalidArgumentType,
        IsolationUnavailable as IsolationUnavailable,
        JudgeError as JudgeError,
        JudgeReplyError as JudgeReplyError,
        LoginError as LoginError,
        MissingBaseline as MissingBaseline,
        MissingExtra as MissingExtra,
        MissingKey as MissingKey,
        NonFiniteReward as NonFiniteReward,
        PlatformError as PlatformError,
        ScaleError as ScaleError,
        ServeError as ServeError,
        TrainingSelectionError as TrainingSelectionError,
        UnsupportedAnnotation as UnsupportedAnnotation,
        VerifierError as VerifierError,
        WaiError as WaiError,
    )
    from whileai_core.export.writer import export as export
    from whileai_core.grade import verify as verify
    from whileai_core.grade.judge import Judge as Judge
    from whileai_core.grade.labels import attach_labels as attach_labels
    from whileai_core.grade.lists import make_rows as rows
    from whileai_core.grade.probes import judge_probes as judge_probes
    from whileai_core.grade.ranking import compare_judges as compare_judges
    from whileai_core.grade.run import (
        normalize_verdict as normalize_verdict,
        run_judge as run_judge,
        ScoredData as ScoredData,
    )
    from whileai_core.grade.trust import judge_trust as judge_trust
    from whileai_core.grade.verify import Verifier as Verifier
    from whileai_core.grade.verify.basic import (
        ExactMatch as ExactMatch,
        Includes as Includes,
        JSONFields as JSONFields,
        JSONValid as JSONValid,
        MultipleChoice as MultipleChoice,
        Numeric as Numeric,
        Regex as Regex,
        verifier as verifier,
    )
    from whileai_core.grade.verify.math_equal import MathEqual as MathEqual
    from whileai_core.grade.verify.toolcalls import ToolCalls as ToolCalls
    from whileai_core.grade.views import leak_report as leak_report
    from whileai_core.guard.contamination import decontaminate as decontaminate
    from whileai_core.guard.hack import hack_scan as hack_scan, hack_scan_diff as hack_scan_diff
    from whileai_core.guard.monitor import HackMonitor as HackMonitor
    from whileai_core.guard.trace import trace_markers as trace_markers
    from whileai_core.init_evals import init_evals as init_evals
    from whileai_core.measure.between_runs import eval_variance as eval_variance
    from whileai_core.measure.compare import compare as compare, Comparison as Comparison
    from whileai_core.measure.config import run_config as run_config
    from whileai_core.measure.delta import delta_report as delta_report, DeltaReport as DeltaReport
    from whileai_core.measure.history import History as History, pool_runs as pool_runs
    from whileai_core.measure.pass_at import pass_at as pass_at, PassAt as PassAt
    from whileai_core.measure.power import holdout_size as holdout_size
    from whileai_core.measure.runs import (
        bootstrap_ci as bootstrap_ci,
        compare_runs as compare_runs,
        eval_power as eval_power,
        noise_band as noise_band,
    )
    from whileai_core.measure.sequential import (
        sequential_test as sequential_test,
        SequentialPlan as SequentialPlan,
        SequentialResult as SequentialResult,
    )
    from whileai_core.measure.stats import (
        cohen_kappa as cohen_kappa,
        cohen_kappa_interval as cohen_kappa_interval,
        newcombe_interval as newcombe_interval,
        wilson_interval as wilson_interval,
    )
    from whileai_core.models.anthropic import Anthropic as Anthropic
    from whileai_core.models.config import configure as configure, context as context, settings as settings
    from whileai_core.models.endpoint import Endpoint as Endpoint
    from whileai_core.models.local_model import LocalModel as LocalModel
    from whileai_core.models.ollama import Ollama as Ollama
    from whileai_core.models.openai import OpenAI as OpenAI
    from whileai_core.options import (
        Execution as Execution,
        Generation as Generation,
        Optim as Optim,
        Stats as Stats,
    )
    from whileai_core.progress import Progress as Progress
    from whileai_core.report.cost import usage as usage
    from whileai_core.report.html import report as report
    from whileai_core.report.tracking import log_mlflow as log_mlflow
    from whileai_core.rowlist import RowList as RowList
    from whileai_core.select.curriculum import curriculum as curriculum, retire_solved as retire_solved
    from whileai_core.select.preferences import build_preference_pairs as build_preference_pairs
    from whileai_core.select.rounds import group_signal as group_signal, next_round as next_round
    from whileai_core.select.rules import Rejection as Rejection
    from whileai_core.select.select import select as select, Selection as Selection
    from whileai_core.serve.server import serve as serve, Server as Server
    from whileai_core.simulate.agents import (
        seeded_agent as seeded_agent,
        SEEDED_BEHAVIORS as SEEDED_BEHAVIORS,
    )
    from whileai_core.simulate.covering import covering_array as covering_array
    from whileai_core.simulate.harness import Harness as Harness
    from whileai_core.simulate.run import simulate as simulate, SimulationData as SimulationData
    from whileai_core.simulate.situations import (
        preflight as preflight,
        rule_clauses as rule_clauses,
        Scenario as Scenario,
        situations as situations,
    )
    from whileai_core.simulate.world import World as World, world as world
    from whileai_core.tools import dispatch as dispatch, tool as tool, Tool as Tool
    from whileai_core.train.environment import (
        export_environment as export_environment,
        load_environment as load_environment,
    )
    from whileai_core.train.holdout import holdout as holdout
    from whileai_core.train.preferences import export_preference as export_preference
    from whileai_core.train.prove import prove as prove
    from whileai_core.train.recommend import recommend as recommend
    from whileai_core.train.train import train as train
    from whileai_core.train.trl_formats import export_trl as export_trl
# end of the generated block
# end of the generated block
# end of the generated block


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
