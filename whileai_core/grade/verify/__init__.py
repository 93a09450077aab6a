"""Verifiers: judges that check an answer by program instead of by opinion (``wai.verify``).

``contract`` holds the one verifier contract and its combinators; ``checks`` ``JSONSchema``; ``math_equal``
``MathEqual`` (math-verify); ``basic`` the everyday checks (and ``as_verifier``, ``JSONField``); ``toolcalls`` ``ToolCalls``; ``sandbox`` the process
sandbox (bubblewrap or built-in namespaces); ``codetext`` the program in a chat reply and its tampering marks;
``split`` the tests run in the parent against the candidate in the sandbox, ``plaindata`` the tagged plain data
that crosses between them (``harness`` keeps the report type); ``code`` ``CodeExec``, model-written code run in it.
"""

from whileai_core.grade.verify.answers import extract_answer, parse_number
from whileai_core.grade.verify.basic import (
    ANY,
    ExactMatch,
    Includes,
    JSONField,
    JSONFields,
    JSONValid,
    MultipleChoice,
    Numeric,
    Regex,
    as_verifier,
    verifier,
)
from whileai_core.grade.verify.checks import JSONSchema, extract_json
from whileai_core.grade.verify.code import CodeExec, extract_code
from whileai_core.grade.verify.contract import AllOf, AnyOf, Verifier, VerifierError, Weighted
from whileai_core.grade.verify.math_equal import MathEqual
from whileai_core.grade.verify.sandbox import SandboxResult, run_sandboxed
from whileai_core.grade.verify.toolcalls import ToolCalls, tool_calls

# the SDK's names for the combinators (``wai.verify.All``/``Any``/``Weighted``): the same classes
All = AllOf
Any = AnyOf

__all__ = ["ANY", "All", "AllOf", "Any", "AnyOf", "CodeExec", "ExactMatch", "Includes", "JSONField", "JSONFields",
           "JSONSchema", "JSONValid", "MathEqual", "MultipleChoice", "Numeric", "Regex", "SandboxResult", "ToolCalls",
           "Verifier", "VerifierError", "Weighted", "as_verifier", "extract_answer", "extract_code", "extract_json",
           "parse_number", "run_sandboxed", "tool_calls", "verifier"]

# helpers wai.verify offered before it was split, kept where users found them (not part of __all__)
from whileai_core.grade.verify.checks import minimal_schema_error  # noqa: F401
from whileai_core.grade.verify.contract import redact  # noqa: F401
from whileai_core.grade.verify.sandbox import sandbox_python  # noqa: F401
from whileai_core.messages import reply_text as candidate_text  # noqa: F401
