"""Command-line options (``--wai-*``) and their ini twins (``wai_*``), resolved into one ``Settings``.

Precedence: the ``wai(...)`` marker (per test) > command line > ini > the constant in ``whileai_core.defaults``.
Every value is validated where it is read, and a bad value names the option and the fix.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import pytest

from whileai_core import defaults as D

GROUP = "whileai"
GITHUB_CHOICES = ("auto", "on", "off")
# the variables CI services set (issue 26 item 4: no baseline is not a pass in CI); CI is the common one
CI_ENV = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "JENKINS_URL", "TF_BUILD", "TRAVIS",
          "BITBUCKET_BUILD_NUMBER", "TEAMCITY_VERSION", "DRONE", "APPVEYOR", "CODEBUILD_BUILD_ID")


def ci_detected(env: Mapping[str, str] | None = None) -> str | None:
    """The CI variable that says this runs in CI (``CI=true``, ``GITHUB_ACTIONS=true``, ...), or None."""
    env = os.environ if env is None else env
    for var in CI_ENV:
        value = str(env.get(var, "")).strip().lower()
        if value and value not in ("0", "false", "no", "off"):
            return var
    return None
_SAVE_NAME = re.compile(r"^[A-Za-z0-9._\-]+$")


# --- value parsers (argparse ``type=`` and ini readers share them) -------------------------------------------
def _int_at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(str(text).strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an int >= {low}; got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an int >= {low}; got {value}")
        return value

    return parse


def _unit_float(*, allow_zero: bool = False) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(str(text).strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
        low_ok = value >= 0 if allow_zero else value > 0
        if not (low_ok and value < 1):
            bounds = "[0, 1)" if allow_zero else "(0, 1)"
            raise argparse.ArgumentTypeError(f"must be a number in {bounds}; got {value}")
        return value

    return parse


def _share(text: str) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a share in [0, 1]; got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a share in [0, 1]; got {value}")
    return value


def _save_name(text: str) -> str:
    name = str(text).strip()
    if not name or not _SAVE_NAME.match(name):
        raise argparse.ArgumentTypeError(
            f"must be a plain name of letters, digits, '.', '_' or '-' (it becomes a file name); got {text!r}"
        )
    return name


def _exit_code(text: str) -> int:
    value = _int_at_least(1)(text)
    if value > 255:
        raise argparse.ArgumentTypeError(f"must be an exit status in 1..255; got {value}")
    return value


def _github(text: str) -> str:
    value = str(text).strip().lower()
    if value not in GITHUB_CHOICES:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(GITHUB_CHOICES)}; got {text!r}")
    return value


def _budget(text: str) -> str:
    from whileai_core.errors import InvalidArgument
    from whileai_core.report.cost import parse_budget

    try:
        parse_budget(text)
    except InvalidArgument as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return str(text).strip()


def _unscored(text: str) -> str:
    from whileai_core.gate.ledger import POLICIES

    value = str(text).strip().lower()
    if value not in POLICIES:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(POLICIES)}; got {text!r}")
    return value


def _text(text: str) -> str:
    return str(text)


def _bool(text: Any) -> bool:
    if isinstance(text, bool):
        return text
    value = str(text).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise argparse.ArgumentTypeError(f"must be true or false; got {text!r}")


@dataclass(frozen=True)
class _Opt:
    name: str  # the part after --wai- / wai_
    parse: Callable[[str], Any]
    default: Any
    help: str
    flag: bool = False  # store_true on the command line
    metavar: str | None = None


OPTIONS: tuple[_Opt, ...] = (
    _Opt("trials", _int_at_least(1), D.DEFAULT_REPEATS, "trials (k) per scenario; the wai(trials=) marker wins", metavar="K"),
    _Opt("seed", _int_at_least(0), D.GATE_SEED, "base seed for trials and the gate's resampling", metavar="INT"),
    _Opt("level", _unit_float(), D.CI_LEVEL, "confidence level of every interval", metavar="LEVEL"),
    _Opt("alpha", _unit_float(), D.GATE_ALPHA, "test level of the gate (two-sided) and of the Holm family", metavar="A"),
    _Opt("max-drop", _unit_float(allow_zero=True), D.GATE_MAX_DROP,
         "smallest significant pass@1 drop that fails the run", metavar="D"),
    _Opt("draws", _int_at_least(100), D.BOOTSTRAP_DRAWS, "bootstrap draws behind the gate's interval", metavar="N"),
    _Opt("permutations", _int_at_least(100), D.GATE_PERMUTATIONS, "sign flips behind the gate's p-value",
         metavar="N"),
    _Opt("power", _unit_float(), D.GATE_POWER, "power for the 'trials needed to detect a drop' line", metavar="P"),
    _Opt("baseline", _text, None, "compare to a stored run: a saved NAME, a PATH, 'latest', or the latest run of "
         "branch NAME", metavar="NAME|PATH"),
    _Opt("require-baseline", _bool, False, "fail (instead of warn) when the baseline is missing", flag=True),
    _Opt("allow-missing-baseline", _bool, False, "in CI (CI, GITHUB_ACTIONS, GITLAB_CI... set), let a named "
         "baseline that is missing, pairs with nothing or has no scored scenario pass with a warning (a first "
         "run on purpose); without it that is red in CI", flag=True),
    _Opt("min-paired-share", _share, D.GATE_MIN_PAIRED_SHARE,
         "smallest share of the scenarios that could pair with the baseline that must pair; fewer is a loud "
         "warning, and red under --wai-require-baseline", metavar="S"),
    _Opt("storage", _text, D.STORE_DIR, "baseline store directory", metavar="DIR"),
    _Opt("save", _save_name, None, "save this run as baseline NAME in the store", metavar="NAME"),
    _Opt("autosave", _bool, False, "save this run under runs/ in the store (numbered, with commit and branch)",
         flag=True),
    _Opt("json", _text, None, "write the full run document (JSON) to PATH", metavar="PATH"),
    _Opt("markdown", _text, None, "write the markdown summary (the PR-comment/step-summary table) to PATH",
         metavar="PATH"),
    _Opt("junitxml", _text, None, "write a scenario-level JUnit XML report (xunit2) to PATH", metavar="PATH"),
    _Opt("github", _github, "auto", "GitHub annotations and step summary: auto (when GITHUB_ACTIONS=true), on, off",
         metavar="auto|on|off"),
    _Opt("regression-exit-code", _exit_code, D.GATE_REGRESSION_EXIT_CODE,
         "exit status when the gate finds a regression", metavar="N"),
    _Opt("fingerprint", _text, "", "a string naming the model/config under test; runs with different fingerprints "
         "are never compared", metavar="TEXT"),
    _Opt("record", _text, None, "record model calls to a cassette at PATH (whileai_core.models.cache)", metavar="PATH"),
    _Opt("replay", _text, None, "replay model calls from the cassette at PATH; a miss is an error", metavar="PATH"),
    _Opt("trial-index", _int_at_least(0), None, "run only trial I of each scenario (reproduce a failure); "
         "the gate and saving are off", metavar="I"),
    # issue 19: what people look at (HTML report, MLflow), and what a run may spend
    _Opt("html", _text, None, "write the self-contained HTML report (forest plot, transcripts) to PATH",
         metavar="PATH"),
    _Opt("html-plotlyjs", _text, D.REPORT_PLOTLYJS, "how --wai-html carries Plotly: inline (self-contained, ~4.8 MB), "
         "cdn, directory (one plotly.min.js beside the page) or a .js URL/path you host", metavar="HOW"),
    _Opt("mlflow", _bool, False, "log the run (pass@k with intervals, deltas, scenarios, the HTML report) to MLflow",
         flag=True),
    _Opt("mlflow-uri", _text, D.MLFLOW_TRACKING_URI, "MLflow tracking URI or folder for --wai-mlflow (a folder is "
         "MLflow's file store: open it with MLFLOW_ALLOW_FILE_STORE=true mlflow ui --backend-store-uri DIR; "
         "sqlite:///mlflow.db is one a plain `mlflow ui` opens)", metavar="URI"),
    _Opt("prices", _text, None, "JSON price table: model -> {input, output} dollars per 1M tokens (cost estimate)",
         metavar="FILE"),
    _Opt("budget", _budget, None, "stop the run once it spent more than TOKENS, or $X (needs --wai-prices)",
         metavar="TOKENS|$X"),
    _Opt("sequential", _bool, False, "run the trials in rounds and stop as soon as an always-valid test on the "
         "suite delta decides (red on a significant drop, green once a drop beyond --wai-max-drop is ruled out); "
         "--wai-trials is the most a scenario runs", flag=True),
    _Opt("unscored", _unscored, D.GATE_UNSCORED_POLICY, "what an unscored trial (judge error, NaN/None verdict, "
         "abstention, infra error, budget stop) does: fail counts it as a failed trial, incomplete makes any of them "
         "red INCOMPLETE, drop leaves it out (and prints the share dropped)", metavar="fail|incomplete|drop"),
    _Opt("max-unscored", _share, D.GATE_MAX_UNSCORED, "largest unscored share of the planned trials; above it the "
         "run is red INCOMPLETE with the counts by reason", metavar="S"),
    _Opt("round-trials", _int_at_least(1), D.SEQ_ROUND_TRIALS, "trials per scenario in each round of "
         "--wai-sequential", metavar="M"),
    # issue 33: another eval framework's results as this run's scenarios (docs/interop.md)
    _Opt("import", _text, None, "an inspect_ai log, lm-eval --log_samples output, promptfoo -o results.json, a "
         "deepeval test run (file or folder): each sample becomes a scenario, its epochs its trials, gated like any "
         "other", metavar="PATH"),
    _Opt("import-scorer", _text, None, "which score --wai-import reads (inspect scorer, lm-eval metric[,filter], "
         "promptfoo score or named metric, deepeval metric[:score]; default the framework's first/verdict)", metavar="NAME"),
)
FIELD_NAMES = {"import": "import_path"}  # an option whose Settings field is not its name (import is a keyword)


def dest(opt: _Opt) -> str:
    return "wai_" + opt.name.replace("-", "_")


def add_options(parser: pytest.Parser) -> None:
    """Register every ``--wai-*`` option in the ``whileai`` group, and its ``wai_*`` ini twin."""
    group = parser.getgroup(GROUP, "whileai: agent scenarios as tests and a paired regression gate")
    for opt in OPTIONS:
        ini = dest(opt)
        if opt.flag:
            group.addoption(f"--wai-{opt.name}", action="store_true", default=None, dest=ini, help=opt.help)
            parser.addini(ini, f"{opt.help} (ini twin of --wai-{opt.name})", type="bool", default=opt.default)
        else:
            group.addoption(f"--wai-{opt.name}", action="store", type=opt.parse, default=None, dest=ini,
                            metavar=opt.metavar, help=f"{opt.help} (default: {opt.default})")
            parser.addini(ini, f"{opt.help} (ini twin of --wai-{opt.name})", type="string",
                          default="" if opt.default is None else str(opt.default))


@dataclass(frozen=True)
class Settings:
    """The run-wide settings after command line > ini > default precedence."""

    trials: int
    seed: int
    level: float
    alpha: float
    max_drop: float
    draws: int
    permutations: int
    power: float
    baseline: str | None
    require_baseline: bool
    storage: str
    save: str | None
    autosave: bool
    json: str | None
    markdown: str | None
    junitxml: str | None
    github: str
    regression_exit_code: int
    fingerprint: str
    record: str | None
    replay: str | None
    trial_index: int | None
    min_paired_share: float = D.GATE_MIN_PAIRED_SHARE
    html: str | None = None
    html_plotlyjs: str = D.REPORT_PLOTLYJS
    mlflow: bool = False
    mlflow_uri: str = D.MLFLOW_TRACKING_URI
    prices: str | None = None
    budget: str | None = None
    sequential: bool = False
    round_trials: int = D.SEQ_ROUND_TRIALS
    unscored: str = D.GATE_UNSCORED_POLICY
    max_unscored: float = D.GATE_MAX_UNSCORED
    allow_missing_baseline: bool = False
    import_path: str | None = None
    import_scorer: str | None = None

    def strict_baseline(self, env: Mapping[str, str] | None = None) -> str | None:
        """Why a named baseline that cannot gate this run is red (None when it only warns): the flag
        --wai-require-baseline, or CI detected without --wai-allow-missing-baseline."""
        if self.require_baseline:
            return "--wai-require-baseline"
        ci = ci_detected(env)
        if self.baseline and ci and not self.allow_missing_baseline:
            return (f"CI detected ({ci} is set): no baseline is not a pass in CI; pass --wai-allow-missing-baseline "
                    "to let a first run through on purpose")
        return None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def gate_settings(self) -> dict[str, Any]:
        """The subset recorded in a run document (what a baseline was measured with)."""
        return {"trials": self.trials, "seed": self.seed, "level": self.level, "alpha": self.alpha,
                "max_drop": self.max_drop, "draws": self.draws, "permutations": self.permutations,
                "sequential": self.sequential, "round_trials": self.round_trials,
                "unscored": self.unscored, "max_unscored": self.max_unscored}


def resolve(config: pytest.Config) -> Settings:
    """Read every option with precedence command line > ini > default; a bad ini value is a UsageError."""
    values: dict[str, Any] = {}
    for opt in OPTIONS:
        key = dest(opt)
        cli = config.getoption(key, None)
        if cli is not None:
            values[key[4:]] = cli
            continue
        raw = config.getini(key)
        if opt.flag:
            values[key[4:]] = bool(raw)
            continue
        if raw in ("", None):
            values[key[4:]] = opt.default
            continue
        try:
            values[key[4:]] = opt.parse(raw)
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"ini option {key} {exc}; fix it in your pytest config") from None
    if values["record"] and values["replay"]:
        raise pytest.UsageError("--wai-record and --wai-replay exclude each other; pass one of them")
    if values["import"] and values["sequential"]:
        raise pytest.UsageError("--wai-import and --wai-sequential exclude each other: sequential stopping decides "
                                "how many trials to run, and an imported run has run all of its epochs already")
    return Settings(**{FIELD_NAMES.get(k, k): v for k, v in values.items()})
