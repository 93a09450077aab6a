"""Verifiers: judges that check an answer by program instead of by opinion (``wai.verify``).

``contract`` holds the one verifier contract and its combinators; ``checks`` ``JSONSchema``; ``math_equal``
``MathEqual`` (math-verify); ``basic`` the everyday checks; ``toolcalls`` ``ToolCalls``; ``sandbox`` the process
sandbox (bubblewrap or built-in namespaces); ``codetext`` the program in a chat reply and its tampering marks;
``split`` the tests run in the parent against the candidate in the sandbox, ``plaindata`` the tagged plain data
that crosses between them (``harness`` keeps the report type); ``code`` ``CodeExec``, model-written code run in it.
"""

from whileai_core.grade.verify.answers import extract_answer, parse_number
from whileai_core.grade.verify.checks import JSONSchema, extract_json
from whileai_core.grade.verify.code import CodeExec, extract_code
from whileai_core.grade.verify.contract import AllOf, AnyOf, Verifier, VerifierError
from whileai_core.grade.verify.math_equal import MathEqual
from whileai_core.grade.verify.sandbox import SandboxResult, run_sandboxed

__all__ = ["AllOf", "AnyOf", "CodeExec", "JSONSchema", "MathEqual", "SandboxResult", "Verifier", "VerifierError",
           "extract_answer", "extract_code", "extract_json", "parse_number", "run_sandboxed"]

# helpers wai.verify offered before it was split, kept where users found them (not part of __all__)
from whileai_core.grade.verify.checks import minimal_schema_error  # noqa: F401
from whileai_core.grade.verify.contract import redact  # noqa: F401
from whileai_core.grade.verify.sandbox import sandbox_python  # noqa: F401
from whileai_core.messages import reply_text as candidate_text  # noqa: F401
