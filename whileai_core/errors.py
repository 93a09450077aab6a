"""One exception tree: every error the engine raises is a ``WaiError``.

Each subclass also derives from the built-in a caller would already catch (as Hypothesis does with
``InvalidArgument``), so ``except ValueError`` around a call keeps working and ``except wai.WaiError`` catches
everything the engine raises on purpose::

    WaiError
    ├── InvalidArgument (ValueError)      a bad argument or input row; the message names the field and the fix
    │   └── AnswerTooLarge                a number in an answer too large to evaluate (scored 0, never raised out)
    ├── InvalidArgumentType (TypeError)   an argument of the wrong type
    ├── BackendError (RuntimeError)       a model call failed for infrastructure reasons
    ├── CassetteMiss (LookupError)        a replay found no recording for a request
    ├── JudgeError (ValueError)           the judge raised or broke the judge contract on a named row
    ├── JudgeReplyError (ValueError)      an LLM judge's reply could not be read as {"reason", "score"}
    ├── VerifierError                     a row cannot be checked by a verifier (its reward is None)
    ├── IsolationUnavailable (RuntimeError)  nothing on this host can sandbox model-written code (names the fix)
    ├── PlatformError (RuntimeError)      the While service refused or failed a call: ``status`` and its message
    │   └── LoginError                    the device login was denied, expired or never finished
    ├── TrainingSelectionError (ValueError)  platform.train's pre-flight: the dataset cannot train that method
    ├── ServeError (RuntimeError)         a model server could not start, answer its health check, or its engine is missing
    ├── UnsupportedAnnotation             a tool's type annotation has no JSON schema
    ├── ScaleError (RuntimeError)         a scaled-out run (executor="ray") lost a shard on every try, or has no Ray
    ├── BaselineError                     a stored run document cannot serve as the gate's baseline
    │   ├── CorruptBaseline (ValueError)      the file is not a valid run document
    │   │   └── NonFiniteReward               a NaN or infinite reward (never counted as a pass or a failure)
    │   ├── MissingBaseline (LookupError)     no stored run matches the requested baseline
    │   └── IncompatibleBaseline (ValueError) measured under other conditions (schema, k, judge, config)
    ├── BudgetExceeded (RuntimeError)     a run spent more tokens or dollars than its budget (rows so far kept)
    └── MissingExtra (ImportError)        an optional extra (report, mlflow) is not installed; names the pip line
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AnswerTooLarge",
    "BackendError",
    "BaselineError",
    "BudgetExceeded",
    "CassetteMiss",
    "CorruptBaseline",
    "EditedBaseline",
    "IncompatibleBaseline",
    "InvalidArgument",
    "InvalidArgumentType",
    "IsolationUnavailable",
    "JudgeError",
    "JudgeReplyError",
    "LoginError",
    "MissingExtra",
    "PlatformError",
    "ScaleError",
    "ServeError",
    "TrainingSelectionError",
    "MissingBaseline",
    "MissingKey",
    "NonFiniteReward",
    "UnsupportedAnnotation",
    "VerifierError",
    "WaiError",
]


class WaiError(Exception):
    """The root of every error whileai raises on purpose."""


class InvalidArgument(WaiError, ValueError):
    """A bad argument or input row; the message names the field and the fix."""


class InvalidArgumentType(WaiError, TypeError):
    """An argument of the wrong type; the message names the field and the type it takes."""


class BackendError(WaiError, RuntimeError):
    """A model call failed for infrastructure reasons (HTTP status, timeout, connection, malformed body).

    Kept apart from wrong answers: a rollout that raises this is an infra failure, not a failed task.
    ``status`` is the last HTTP status (None for transport errors), ``attempts`` the tries made.
    """

    def __init__(self, message: str, *, status: int | None = None, url: str | None = None,
                 attempts: int = 0, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.url = url
        self.attempts = attempts
        self.retryable = retryable


class MissingKey(WaiError, LookupError):
    """A model backend has no API key (none given and its environment variable unset); raised before the first
    call, naming the variable to set."""


class CassetteMiss(WaiError, LookupError):
    """A replay found no recording for a request. The message carries a diff against the nearest one."""


class JudgeError(WaiError, ValueError):
    """The judge raised, or returned something outside the judge contract, on a named row.

    ``err.partial`` holds the rows graded before that row (in input order; under a judge awaited on the event loop,
    every row that finished before it), so paid-for verdicts are not lost."""

    partial: Any = None  # a RowList, set when run_judge raises it


class JudgeReplyError(WaiError, ValueError):
    """The judge model's reply could not be read as ``{"reason", "score"}``."""


class VerifierError(WaiError):
    """Raised by ``check`` when the row cannot be checked (bad reference, sandbox failure): reward None."""


class IsolationUnavailable(WaiError, RuntimeError):
    """Neither bubblewrap nor namespaces can isolate model-written code here (or the backend asked for is missing):
    CodeExec refuses to run it instead of running it unsandboxed. Raised, not a row's abstention: the host needs
    fixing (the message names how), or the caller passes ``isolation="none"`` to accept rlimits only."""


class PlatformError(WaiError, RuntimeError):
    """The While service refused or failed a call.

    ``status`` is the HTTP status (None when no answer came, or no key was found), ``message`` the service's own
    message (cut to PLATFORM_ERROR_DETAIL_CHARS), ``code`` its error code when it sent one. Keys never appear here.
    """

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None,
                 route: str | None = None) -> None:
        prefix = f"While platform {route}: " if route else "While platform: "
        where = f" (HTTP {status})" if status is not None else ""
        super().__init__(f"{prefix}{message}{where}")
        self.status = status
        self.message = message
        self.code = code
        self.route = route


class LoginError(PlatformError):
    """The device login was denied (``access_denied``), expired (``expired_token``) or timed out."""


class TrainingSelectionError(WaiError, ValueError):
    """``platform.train``'s pre-flight found the dataset cannot train that method (e.g. RL with no mixed group).

    ``report`` is the select step's report the decision was read from."""

    def __init__(self, message: str, *, report: Any = None) -> None:
        super().__init__(message)
        self.report = report


class ServeError(WaiError, RuntimeError):
    """A model server (``wai.serve``) could not start: its engine or a package it needs is not installed, the
    checkpoint cannot be served, or the process exited or missed its health check.

    ``engine`` names the engine, ``log_tail`` holds the last lines of the server's own log (also in the message)
    and ``returncode`` the exit status when the process died."""

    def __init__(self, message: str, *, engine: str | None = None, log_tail: str = "",
                 returncode: int | None = None) -> None:
        text = f"{message}\n--- last lines of the server log ---\n{log_tail}" if log_tail else message
        super().__init__(text)
        self.engine = engine
        self.log_tail = log_tail
        self.returncode = returncode


class ScaleError(WaiError, RuntimeError):
    """A scaled-out run (``executor="ray"``) could not finish: a shard's worker died on every try, the cluster
    could not be reached, or the ``ray`` extra is not installed. Rows already written to ``output=`` stay."""


class UnsupportedAnnotation(WaiError):
    """A tool parameter's annotation has no JSON schema (internal: ``tools`` turns it into a clear error)."""


class AnswerTooLarge(InvalidArgument):
    """A number in an answer whose value would be too large to evaluate in bounded time (``MATH_MAX_DIGITS``)."""


class BaselineError(WaiError):
    """Base class of the run-document and baseline-store errors (each message names the file and the fix)."""


class CorruptBaseline(BaselineError, ValueError):
    """A baseline file that is not a valid run document."""


class EditedBaseline(CorruptBaseline):
    """A run document whose contents no longer match the content hash written with it (edited by hand)."""


class NonFiniteReward(CorruptBaseline):
    """A run document with a NaN or infinite reward: not a score, so never counted as a pass or a failure."""


class MissingBaseline(BaselineError, LookupError):
    """No stored run matches the requested baseline; ``names`` lists what the store does hold (empty when the
    store is empty: a first run)."""

    def __init__(self, message: str, names: list[str] | None = None) -> None:
        super().__init__(message)
        self.names = list(names or [])


class IncompatibleBaseline(BaselineError, ValueError):
    """A baseline measured under different conditions (schema, k, judge or config fingerprint)."""


class BudgetExceeded(WaiError, RuntimeError):
    """A run spent more tokens or dollars than its budget; the rows so far are kept, the run is not green."""


class MissingExtra(WaiError, ImportError):
    """An optional extra is not installed: the message names the package and the ``pip install`` line."""
