"""Verifiers: judges that check an answer by program instead of by opinion.

Each verifier is a judge under the one contract (docs/rows.md, whileai-sdk-behaviour.md §2.1):
``verifier(row) -> {"reward": 0..1 or None, "reason": str, ...}``. The candidate is ``row["final_text"]``
(else the last assistant message); the answer comes from the constructor, else ``field=`` (a dotted path),
else ``row["privileged"]["reference"]``, else a flat ``reference``/``answer``/``target``/``solution``/``label``/
``expected`` field. A verifier with nothing to check against returns ``reward=None`` and says so. When the
answer came from the privileged block, its spellings are redacted from the reason so the answer key never
reaches a training export.

``MathEqual`` (numbers, fractions, LaTeX-ish and boxed answers, with a tolerance), ``JSONSchema`` (the
``jsonschema`` package) and ``CodeExec`` (model-written code run against hidden tests in a sandbox; see
``run_sandboxed`` for what the sandbox enforces and how it degrades) are built in.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from whileai_core.defaults import (
    CODE_CPU_S,
    CODE_FSIZE_MB,
    CODE_KILL_ROUNDS,
    CODE_MEM_MB,
    CODE_NOFILE,
    CODE_NPROC,
    CODE_OUTPUT_CAP,
    CODE_STDOUT_TAIL,
    CODE_TIMEOUT_S,
    CODE_TMPFS_MB,
    CODE_UID_BASE,
    CODE_UID_SPAN,
    MATH_ABS_TOL,
    MATH_MAX_BASE,
    MATH_MAX_EXPONENT,
    MATH_REL_TOL,
    VERIFY_REASON_CHARS,
)

__all__ = [
    "AllOf",
    "AnyOf",
    "CodeExec",
    "JSONSchema",
    "MathEqual",
    "SandboxResult",
    "Verifier",
    "VerifierError",
    "extract_answer",
    "extract_code",
    "extract_json",
    "parse_number",
    "run_sandboxed",
]

Row = Mapping[str, Any]
_REFERENCE_FIELDS = ("reference", "answer", "target", "solution", "label", "expected")
_MISSING = object()


class VerifierError(Exception):
    """Raised by ``check`` when the row cannot be checked (bad reference, sandbox failure): reward None."""


def _get_path(row: Any, path: str) -> Any:
    value = row
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


def candidate_text(row: Row) -> str:
    """The reply to check: ``final_text``, else the last assistant message's content, else ""."""
    text = row.get("final_text")
    if isinstance(text, str):
        return text
    for m in reversed(row.get("messages") or []):
        if isinstance(m, Mapping) and m.get("role") == "assistant" and isinstance(m.get("content"), str):
            return m["content"]
    return ""


class Verifier:
    """Base class: subclasses implement ``check(candidate, reference, row)``.

    ``check`` returns a number in [0, 1], a bool, a ``(score, reason)`` pair, or None (nothing to check).
    Calling the verifier on a row returns the judge-contract dict.
    """

    kind = "rule"

    def __init__(self, *, field: str | None = None, name: str | None = None) -> None:
        if field is not None and (not isinstance(field, str) or not field):
            raise ValueError(f"field= must be a dotted path into the row such as 'privileged.reference'; got {field!r}")
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"name= must be a non-empty string; got {name!r}")
        self.field = field
        self.name: str = name or str(type(self).__name__)

    @property  # type: ignore[misc]
    def __name__(self) -> str:  # type: ignore[override]  # so run_judge stamps judge_name
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    # the answer, and whether it came from the privileged block (then it is redacted from reasons)
    def reference(self, row: Row) -> tuple[Any, bool]:
        if self.field is not None:
            value = _get_path(row, self.field)
            return (None if value is _MISSING else value), self.field.startswith("privileged")
        priv = row.get("privileged")
        if isinstance(priv, Mapping) and priv.get("reference") is not None:
            return priv["reference"], True
        for f in _REFERENCE_FIELDS:
            if row.get(f) is not None:
                return row[f], False
        for outer in ("info", "metadata", "privileged"):
            inner = row.get(outer)
            if isinstance(inner, Mapping):
                for f in _REFERENCE_FIELDS:
                    if inner.get(f) is not None:
                        return inner[f], outer == "privileged"
        return None, False

    def check(self, candidate: str, reference: Any, row: Row) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__}.check(candidate, reference, row) is not implemented")

    def score(self, row: Row) -> dict[str, Any]:
        """The contract dict for one row, with the reason unredacted (internal; ``__call__`` redacts)."""
        ref, _ = self.reference(row)
        return self._finish(self.check(candidate_text(row), ref, row))

    def _finish(self, result: Any) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if isinstance(result, Mapping):
            extra = {k: v for k, v in result.items() if k not in ("reward", "reason")}
            result = (result.get("reward"), result.get("reason"))
        reason = None
        if isinstance(result, tuple):
            result, reason = result
        if result is None:
            return {"reward": None, "reason": reason or f"{self.name}: no reference to check against",
                    "verifier": self.name, **extra}
        if isinstance(result, bool):
            value: float = float(result)
        elif isinstance(result, (int, float)) and math.isfinite(result):
            value = min(1.0, max(0.0, float(result)))
        else:
            raise TypeError(f"{self.name}.check returned {result!r}; return a number in [0, 1], a bool, "
                            "(score, reason) or None")
        reward: float | int = int(value) if value in (0.0, 1.0) else round(value, 6)
        if reason is None:
            reason = f"{self.name}: " + ("pass" if reward == 1 else "fail" if reward == 0 else f"{reward:.2f}")
        return {"reward": reward, "reason": reason, "verifier": self.name, **extra}

    def __call__(self, row: Row) -> dict[str, Any]:
        if not isinstance(row, Mapping):
            raise TypeError(f"{self.name} takes a row dict; got {type(row).__name__}")
        ref, privileged = self.reference(row)
        try:
            out = self._finish(self.check(candidate_text(row), ref, row))
        except VerifierError as exc:
            out = {"reward": None, "reason": f"{self.name}: could not check ({exc})", "verifier": self.name,
                   "error": f"VerifierError: {exc}"}
        reason = str(out.get("reason") or "")
        if privileged and ref is not None:
            reason = redact(reason, ref)
        out["reason"] = reason[:VERIFY_REASON_CHARS]
        out["scorer_kind"] = self.kind
        return out


def redact(text: str, reference: Any) -> str:
    """Replace the spellings of ``reference`` in ``text`` with ``<reference>`` (verbatim, JSON, float form)."""
    spellings: set[str] = set()
    values = reference if isinstance(reference, (list, tuple)) else [reference]
    for v in values:
        if v is None:
            continue
        s = v if isinstance(v, str) else json.dumps(v, default=str)
        spellings.update({s.strip(), json.dumps(s)[1:-1]})
        num = parse_number(s) if isinstance(s, str) else None
        if num is not None and isinstance(num, float):
            spellings.update({repr(num), f"{num:g}"})
            if num == int(num):
                spellings.add(str(int(num)))
        spellings.update(line.strip() for line in s.splitlines() if len(line.strip()) >= 8)
    for sp in sorted((x for x in spellings if x), key=len, reverse=True):
        if re.fullmatch(r"[\w.\-]+", sp):
            text = re.sub(rf"(?<![\w.]){re.escape(sp)}(?![\w])", "<reference>", text)
        else:
            text = text.replace(sp, "<reference>")
    return text


# --------------------------------------------------------------------------------------------------
# MathEqual
# --------------------------------------------------------------------------------------------------


def _balanced(text: str, start: int) -> tuple[str, int] | None:
    """The content of the brace group opening at ``text[start] == '{'`` and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    return None


_ANSWER_LINE = re.compile(r"(?:final answer|answer|result|solution)\s*(?:is|=|:)\s*(.+)$", re.IGNORECASE)


def extract_answer(text: str) -> str | None:
    """The final answer in a reply: the last ``\\boxed{}`` (braces balanced), else "answer is/=/: X", else the last line."""
    if not isinstance(text, str) or not text.strip():
        return None
    last = None
    for m in re.finditer(r"\\(?:boxed|fbox)\s*", text):
        got = _balanced(text, m.end())
        if got is not None:
            last = got[0]
    if last is not None:
        return last.strip()
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    for ln in reversed(lines):
        found = _ANSWER_LINE.search(ln)
        if found:
            return found.group(1).strip().rstrip(".")
    tail = lines[-1] if lines else ""
    if "=" in tail:
        tail = tail.rsplit("=", 1)[1]
    return tail.strip().rstrip(".") or None


def _latex_to_expr(s: str) -> str:
    s = s.strip().strip("$").strip()
    for a, b in (("\\left", ""), ("\\right", ""), ("\\!", ""), ("\\,", ""), ("\\;", ""), ("\\ ", ""),
                 ("\\displaystyle", ""), ("\\dfrac", "\\frac"), ("\\tfrac", "\\frac"), ("\\cdot", "*"),
                 ("\\times", "*"), ("\\div", "/"), ("\\pi", " pi "), ("−", "-"), ("\\%", "%")):
        s = s.replace(a, b)
    s = re.sub(r"\\text\s*\{([^{}]*)\}|\\mathrm\s*\{([^{}]*)\}", lambda m: m.group(1) or m.group(2) or "", s)
    # \frac{a}{b} -> ((a)/(b)) and \sqrt{a} -> sqrt(a), innermost first
    for _ in range(20):
        m = re.search(r"\\frac\s*(?=\{)", s)
        if m:
            num = _balanced(s, m.end())
            den = _balanced(s, num[1]) if num else None
            if not (num and den):
                break
            s = s[:m.start()] + f"(({num[0]})/({den[0]}))" + s[den[1]:]
            continue
        m = re.search(r"\\sqrt\s*(?=\{)", s)
        if m:
            arg = _balanced(s, m.end())
            if not arg:
                break
            s = s[:m.start()] + f"sqrt({arg[0]})" + s[arg[1]:]
            continue
        break
    s = s.replace("{", "(").replace("}", ")").replace("^", "**")
    s = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", s)  # thousands separators
    s = s.rstrip(".").strip()
    s = s.removesuffix("%")
    s = re.sub(r"(\d|\))\s*(?=pi\b|sqrt\(|\()", r"\1*", s)  # implicit products: 2pi, 2(3), )(
    return s


_ALLOWED_BIN = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
                ast.Div: lambda a, b: a / b}


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            if abs(b) > MATH_MAX_EXPONENT or abs(a) > MATH_MAX_BASE:
                raise ValueError("exponent too large")
            return float(a ** b)
        op = _ALLOWED_BIN.get(type(node.op))
        if op is None:
            raise ValueError("operator not allowed")
        return float(op(a, b))
    if isinstance(node, ast.Name) and node.id in ("pi", "e"):
        return math.pi if node.id == "pi" else math.e
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt" and len(node.args) == 1:
        return math.sqrt(_eval(node.args[0]))
    raise ValueError("not arithmetic")


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\s*/\s*-?\d+(?:\.\d+)?)?")


def parse_number(text: Any) -> float | list[float] | None:
    """A number (or a tuple of numbers) from an answer string: ``1,000``, ``3/4``, ``\\frac{3}{4}``, ``50%``,
    ``2\\sqrt{2}``, ``1.5e3``. Falls back to the last number in the text; None when there is none."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text) if math.isfinite(text) else None
    if not isinstance(text, str) or not text.strip():
        return None
    expr = _latex_to_expr(text)
    parts = _split_top(expr)
    if len(parts) > 1:
        values = [_arith(p) for p in parts]
        if all(v is not None for v in values):
            return values  # type: ignore[return-value]
    v = _arith(expr)
    if v is not None:
        return v
    found = _NUMBER.findall(expr)
    return _arith(found[-1]) if found else None


def _split_top(expr: str) -> list[str]:
    inner = expr.strip()
    if len(inner) >= 2 and inner[0] in "([" and inner[-1] in ")]":
        inner = inner[1:-1]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def _arith(expr: str) -> float | None:
    try:
        value = _eval(ast.parse(expr.strip(), mode="eval"))
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError):
        return None
    return value if math.isfinite(value) else None


def _norm_text(s: str) -> str:
    s = re.sub(r"\\text\s*\{([^{}]*)\}", r"\1", s)
    s = re.sub(r"[\s$]", "", s).strip(".").lower()
    s = s.replace("{", "").replace("}", "")
    m = re.fullmatch(r"\(?([a-z])\)?", s)  # (C) == C for multiple choice
    return m.group(1) if m else s


class MathEqual(Verifier):
    """Numeric/mathematical equality of the final answer with the reference.

    Extracts the answer (last ``\\boxed{}``, else "answer is X", else the last line), reads numbers, fractions,
    LaTeX ``\\frac``/``\\sqrt``/``\\pi``, thousands separators and percentages, tuples elementwise, and passes
    within ``max(tol, rel * |want|)``. Non-numeric answers compare as normalised text.
    """

    def __init__(self, answer: Any = None, *, tol: float = MATH_ABS_TOL, rel: float = MATH_REL_TOL,
                 field: str | None = None, name: str | None = None) -> None:
        super().__init__(field=field, name=name or "math_equal")
        for arg, v in (("tol", tol), ("rel", rel)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or not math.isfinite(v):
                raise ValueError(f"{arg}= must be a number >= 0; got {v!r}")
        self.answer = answer
        self.tol = float(tol)
        self.rel = float(rel)

    def reference(self, row: Row) -> tuple[Any, bool]:
        if self.answer is not None:
            return self.answer, False
        return super().reference(row)

    def _close(self, got: float, want: float) -> bool:
        return abs(got - want) <= max(self.tol, self.rel * abs(want))

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        ref_text = reference if isinstance(reference, str) else json.dumps(reference)
        want_raw = extract_answer(ref_text) if "\\boxed" in ref_text else ref_text
        want = parse_number(reference if isinstance(reference, (int, float)) else want_raw)
        got_text = extract_answer(candidate)
        if got_text is None:
            return 0, "math: no answer found in the reply"
        if want is None:
            ok = _norm_text(got_text) == _norm_text(str(want_raw))
            return (1, "math: equal (as text)") if ok else (0, f"math: not equal (answer {got_text[:80]!r})")
        got = parse_number(got_text)
        if got is None:
            return 0, f"math: no number in the answer ({got_text[:80]!r})"
        if isinstance(want, list) or isinstance(got, list):
            w = want if isinstance(want, list) else [want]
            g = got if isinstance(got, list) else [got]
            ok = len(w) == len(g) and all(self._close(a, b) for a, b in zip(g, w))
        else:
            ok = self._close(got, want)
        if ok:
            return 1, "math: equal"
        shown = got if isinstance(got, list) else f"{got:.6g}"
        return 0, f"math: not equal (answer read as {shown})"


# --------------------------------------------------------------------------------------------------
# JSONSchema
# --------------------------------------------------------------------------------------------------


def extract_json(text: str) -> Any:
    """The JSON value in a reply: a fenced ```json block, else the whole text, else the first ``{...}``/``[...]``.

    Raises ValueError when none parses.
    """
    if not isinstance(text, str):
        raise ValueError("the reply is not text")  # noqa: TRY004 - callers treat every unparseable reply alike
    too_deep = ValueError("the JSON in the reply is nested deeper than Python's recursion limit")
    for m in re.finditer(r"```(?:json)?\s*\n(.*?)```", text, re.DOTALL):
        try:
            return json.loads(m.group(1))
        except json.JSONDecodeError:
            pass
        except RecursionError:  # a reply can be adversarial: fail it, never crash the grading run
            raise too_deep from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise too_deep from None
    decoder = json.JSONDecoder()
    for m in re.finditer(r"[\[{]", text):
        try:
            return decoder.raw_decode(text, m.start())[0]
        except json.JSONDecodeError:
            continue
        except RecursionError:
            raise too_deep from None
    raise ValueError("no JSON object or array found in the reply")


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)
    or isinstance(v, float) and v.is_integer(),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def minimal_schema_error(schema: Mapping[str, Any], value: Any, path: tuple[Any, ...] = ()) -> tuple[str, str] | None:
    """The first violation of a JSON Schema subset (type, enum, const, required, properties,
    additionalProperties: false, items, minimum/maximum, min/maxLength, min/maxItems) as ``(path, message)``.

    The fallback when the ``jsonschema`` package is not installed; other keywords are not checked.
    """
    where = "/".join(map(str, path)) or "(root)"
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_JSON_TYPES.get(x, lambda v: True)(value) for x in types):
            return where, f"{json.dumps(value)[:60]} is not of type {' or '.join(map(repr, types))}"
    if "enum" in schema and value not in schema["enum"]:
        return where, f"{json.dumps(value)[:60]} is not one of {schema['enum']}"
    if "const" in schema and value != schema["const"]:
        return where, f"{json.dumps(value)[:60]} was expected to be {schema['const']!r}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return where, f"{key!r} is a required property"
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key in value and isinstance(sub, Mapping):
                err = minimal_schema_error(sub, value[key], (*path, key))
                if err:
                    return err
        if schema.get("additionalProperties") is False:
            extra = [k for k in value if k not in props]
            if extra:
                return where, f"additional properties are not allowed ({extra[0]!r} was unexpected)"
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                err = minimal_schema_error(items, item, (*path, i))
                if err:
                    return err
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            return where, f"array length {len(value)} is outside minItems/maxItems"
    if isinstance(value, str) and not (schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value))):
        return where, f"string length {len(value)} is outside minLength/maxLength"
    if _JSON_TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            return where, f"{value} is less than the minimum of {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return where, f"{value} is greater than the maximum of {schema['maximum']}"
    return None


class JSONSchema(Verifier):
    """The reply's JSON validates against a JSON Schema (``jsonschema`` package, the schema's own draft).

    The schema comes from ``schema=``, else the row's reference. A bad schema is an error at construction.
    Without the ``jsonschema`` package (a dev extra) a documented subset is checked (``minimal_schema_error``)
    and the reason says "(minimal check)".
    """

    def __init__(self, schema: Mapping[str, Any] | None = None, *, field: str | None = None,
                 name: str | None = None) -> None:
        super().__init__(field=field, name=name or "json_schema")
        if schema is not None:
            if not isinstance(schema, Mapping):
                raise TypeError(f"schema= must be a JSON Schema dict; got {type(schema).__name__}")
            self._validator(schema, "schema=")
        self.schema = schema

    @staticmethod
    def _validator(schema: Any, where: str) -> tuple[Callable[[Any], tuple[str, str] | None], bool]:
        """(first_error(value) -> (path, message) | None, full): the package's validator, else the subset."""
        if isinstance(schema, str):
            try:
                schema = json.loads(schema)
            except json.JSONDecodeError:
                raise ValueError(f"{where} is not valid JSON; pass the schema as a dict") from None
        if not isinstance(schema, Mapping):
            raise ValueError(f"{where} must be a JSON Schema object; got {type(schema).__name__}")  # noqa: TRY004
        try:
            import jsonschema
        except ImportError:
            frozen = dict(schema)
            return (lambda value: minimal_schema_error(frozen, value)), False
        cls = jsonschema.validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except jsonschema.exceptions.SchemaError as exc:
            raise ValueError(f"{where} is not a valid JSON Schema: {exc.message}") from None
        validator = cls(schema)

        def first_error(value: Any) -> tuple[str, str] | None:
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
            if error is None:
                return None
            return "/".join(str(p) for p in error.absolute_path) or "(root)", error.message

        return first_error, True

    def reference(self, row: Row) -> tuple[Any, bool]:
        if self.schema is not None:
            return self.schema, False
        return super().reference(row)

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        try:
            first_error, full = self._validator(reference, "the row's schema")
        except ValueError as exc:
            raise VerifierError(str(exc)) from None
        try:
            value = extract_json(candidate)
        except ValueError as exc:
            return 0, f"json: {exc}"
        note = "" if full else " (minimal check: install jsonschema for full validation)"
        error = first_error(value)
        if error is None:
            return 1, "json: valid against the schema" + note
        return 0, f"json: invalid at {error[0]}: {error[1]}" + note


# --------------------------------------------------------------------------------------------------
# Combinators
# --------------------------------------------------------------------------------------------------


class AllOf(Verifier):
    """Every part must pass: the minimum score, with the reason of the first worst part; None if any is None."""

    def __init__(self, parts: Sequence[Callable[[Row], Any]], *, name: str | None = None) -> None:
        super().__init__(name=name or "all_of")
        self.parts = list(parts)
        if not self.parts or not all(callable(p) for p in self.parts):
            raise ValueError("parts= must be a non-empty list of verifiers (callables row -> verdict)")

    def _scores(self, row: Row) -> list[tuple[float | None, str]]:
        out = []
        for p in self.parts:
            v = p(row)
            if isinstance(v, Mapping):
                out.append((v.get("reward"), str(v.get("reason") or "")))
            else:
                out.append((None if v is None else float(v), ""))
        return out

    def __call__(self, row: Row) -> dict[str, Any]:
        scores = self._scores(row)
        if any(s is None for s, _ in scores):
            reason = next(r for s, r in scores if s is None)
            return {"reward": None, "reason": reason or f"{self.name}: a part could not check", "verifier": self.name}
        worst = min(range(len(scores)), key=lambda i: scores[i][0])  # type: ignore[arg-type,return-value]
        return {**self._finish((scores[worst][0], scores[worst][1] or None)), "scorer_kind": self.kind}


class AnyOf(AllOf):
    """Any part may pass: the maximum score over the parts that could check."""

    def __init__(self, parts: Sequence[Callable[[Row], Any]], *, name: str | None = None) -> None:
        super().__init__(parts, name=name or "any_of")

    def __call__(self, row: Row) -> dict[str, Any]:
        scores = [(s, r) for s, r in self._scores(row) if s is not None]
        if not scores:
            return {"reward": None, "reason": f"{self.name}: no part could check", "verifier": self.name}
        best = max(range(len(scores)), key=lambda i: scores[i][0])  # type: ignore[arg-type,return-value]
        return {**self._finish((scores[best][0], scores[best][1] or None)), "scorer_kind": self.kind}


# --------------------------------------------------------------------------------------------------
# The sandbox
# --------------------------------------------------------------------------------------------------

# The launcher runs as the caller (root when available) in a fresh interpreter, isolates itself, drops to the
# sandbox uid and execs the sandbox interpreter, which reads the program from stdin (a pipe: once read it is
# gone, so the code cannot re-read its hidden tests from disk or fd 0). A fresh interpreter, not preexec_fn,
# so this is safe to call from judge worker threads.
_LAUNCHER = r'''
import ctypes, json, os, resource, sys
cfg = json.loads(sys.argv[1])
st = {"uid": None, "user_dropped": False, "net_namespace": False, "mount_namespace": False,
      "private_tmp": False, "notes": []}
libc = ctypes.CDLL(None, use_errno=True)
NEWNS, NEWNET, NEWUSER = 0x00020000, 0x40000000, 0x10000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 16384, 1 << 18
root = os.geteuid() == 0
work = cfg["workdir"]
if cfg["isolate"]:
    if root and libc.unshare(NEWNET | NEWNS) == 0:
        st["net_namespace"] = st["mount_namespace"] = True
    elif root and libc.unshare(NEWNET) == 0:
        st["net_namespace"] = True
        st["notes"].append("no mount namespace: /tmp is shared (uid drop still blocks other users' files)")
    elif not root and libc.unshare(NEWUSER | NEWNET) == 0:
        st["net_namespace"] = True
        st["notes"].append("unprivileged user namespace: network isolated, no uid drop")
    else:
        st["notes"].append("no network namespace available (errno %d): network is NOT blocked" % ctypes.get_errno())
    if st["mount_namespace"]:
        # private propagation first, or the tmpfs mounts below would appear on the host
        if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0:
            opts = ("size=%dm,mode=1777" % cfg["tmpfs_mb"]).encode()
            done = []
            for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
                if os.path.isdir(d) and libc.mount(b"tmpfs", d.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts) == 0:
                    done.append(d)
            st["private_tmp"] = "/tmp" in done
            st["private_dirs"] = done
            if st["private_tmp"]:
                work = "/tmp/sandbox"
                os.mkdir(work, 0o700)
        else:
            st["notes"].append("could not make mounts private; no private /tmp")
uid = cfg["uid"]
if root:
    os.chown(work, uid, uid)
os.chdir(work)
lim = cfg["limits"]
for name, value in (("RLIMIT_CPU", (lim["cpu"], lim["cpu"] + 1)), ("RLIMIT_AS", (lim["as"], lim["as"])),
                    ("RLIMIT_FSIZE", (lim["fsize"], lim["fsize"])), ("RLIMIT_NOFILE", (lim["nofile"], lim["nofile"])),
                    ("RLIMIT_NPROC", (lim["nproc"], lim["nproc"])), ("RLIMIT_CORE", (0, 0))):
    resource.setrlimit(getattr(resource, name), value)
if root:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    st["uid"] = uid
    st["user_dropped"] = os.getuid() == uid and os.geteuid() == uid
else:
    st["uid"] = os.getuid()
    st["notes"].append("not root: no uid drop, so RLIMIT_NPROC counts all of this user's processes")
st["workdir"] = work
env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": work, "TMPDIR": work, "PYTHONDONTWRITEBYTECODE": "1",
       "PYTHONIOENCODING": "utf-8"}
os.write(cfg["status_fd"], json.dumps(st).encode())
os.close(cfg["status_fd"])
os.execve(cfg["python"], [cfg["python"], "-I", "-"], env)
'''


@dataclass
class SandboxResult:
    """What a sandboxed run did. ``isolation`` says which protections were in force."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    wall_s: float
    stdout_bytes: int
    stderr_bytes: int
    signal: str | None = None
    isolation: dict[str, Any] = field(default_factory=dict)
    survivors_killed: int = 0

    @property
    def output_truncated(self) -> bool:
        return self.stdout_bytes > len(self.stdout.encode()) or self.stderr_bytes > len(self.stderr.encode())

    def __str__(self) -> str:
        how = "timed out" if self.timed_out else (f"killed by {self.signal}" if self.signal else f"exit {self.returncode}")
        return (f"sandbox run: {how} after {self.wall_s:.2f} s, stdout {self.stdout_bytes} B, stderr "
                f"{self.stderr_bytes} B, uid {self.isolation.get('uid')}, network "
                f"{'blocked' if self.isolation.get('net_namespace') else 'NOT blocked'}")

    def to_dict(self) -> dict[str, Any]:
        return {"returncode": self.returncode, "stdout": self.stdout, "stderr": self.stderr,
                "timed_out": self.timed_out, "wall_s": self.wall_s, "stdout_bytes": self.stdout_bytes,
                "stderr_bytes": self.stderr_bytes, "signal": self.signal, "isolation": dict(self.isolation),
                "survivors_killed": self.survivors_killed, "output_truncated": self.output_truncated}


def _world_usable(path: str) -> bool:
    """True when every directory on the path is world-searchable and the file world-executable."""
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        return False
    parts = real.split(os.sep)
    for i in range(2, len(parts)):
        d = os.sep.join(parts[:i]) or os.sep
        try:
            if not os.stat(d).st_mode & 0o001:
                return False
        except OSError:
            return False
    return bool(os.stat(real).st_mode & 0o001)


def _searchable(directory: str) -> bool:
    parts = os.path.realpath(directory).split(os.sep)
    for i in range(2, len(parts) + 1):
        try:
            if not os.stat(os.sep.join(parts[:i])).st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


def sandbox_python() -> str:
    """An interpreter the unprivileged sandbox uid can run (its binary and its lib dir world-searchable)."""
    if os.geteuid() != 0:
        return sys.executable
    for c in (sys.executable, shutil.which("python3") or "", "/usr/bin/python3", "/usr/local/bin/python3"):
        if c and _world_usable(c):
            lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(c))), "lib")
            if _searchable(lib):
                return c
    raise VerifierError("no Python interpreter is reachable by an unprivileged uid (the current one lives under a "
                        "private directory); pass python='/usr/bin/python3' or install one world-readable")


def _pids_of_uid(uid: int) -> list[int]:
    """Live (non-zombie) processes whose /proc entry belongs to ``uid``."""
    out: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for e in entries:
        if not e.isdigit():
            continue
        try:
            if os.stat(f"/proc/{e}").st_uid != uid:
                continue
            with open(f"/proc/{e}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            out.append(int(e))
    return out


def _kill_uid(uid: int, rounds: int = CODE_KILL_ROUNDS) -> int:
    """SIGKILL every process of the (per-run, otherwise unused) sandbox uid until none is left."""
    killed: set[int] = set()
    for _ in range(rounds):
        pids = _pids_of_uid(uid)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.005)
    return len(killed)


def _fresh_uid() -> int:
    for _ in range(100):
        uid = CODE_UID_BASE + secrets.randbelow(CODE_UID_SPAN)
        if not _pids_of_uid(uid):
            return uid
    raise RuntimeError("could not find an unused sandbox uid")


def _read_capped(fh: Any, cap: int) -> tuple[str, int]:
    fh.flush()
    size = os.fstat(fh.fileno()).st_size
    fh.seek(0)
    head = fh.read(cap)
    return head.decode("utf-8", "replace"), size


def _tail(fh: Any, n: int) -> str:
    size = os.fstat(fh.fileno()).st_size
    fh.seek(max(0, size - n))
    return fh.read(n).decode("utf-8", "replace")


def run_sandboxed(
    program: str,
    *,
    timeout: float = CODE_TIMEOUT_S,
    cpu_seconds: int = CODE_CPU_S,
    mem_mb: int = CODE_MEM_MB,
    nproc: int = CODE_NPROC,
    fsize_mb: int = CODE_FSIZE_MB,
    nofile: int = CODE_NOFILE,
    output_cap: int = CODE_OUTPUT_CAP,
    tmpfs_mb: int = CODE_TMPFS_MB,
    python: str | None = None,
    isolate: bool = True,
    require_isolation: bool = False,
) -> SandboxResult:
    """Run a Python program in a sandbox and return what it did.

    Enforced on Linux as root: a new network namespace (no interfaces: no network, loopback included) and mount
    namespace with private tmpfs over /tmp, /var/tmp, /dev/shm and /run/lock; an empty private working dir;
    a fresh unused uid (so RLIMIT_NPROC binds and no other user's files are writable); RLIMIT_CPU/AS/FSIZE/
    NOFILE/NPROC and no core files; a minimal environment; a wall-clock ``timeout`` after which the process
    group and every process of the sandbox uid is killed; stdout/stderr go to files capped by RLIMIT_FSIZE and
    are read back up to ``output_cap`` bytes. Weaker fallbacks (recorded in ``isolation["notes"]``): without
    root there is no uid drop and no mount namespace (an unprivileged user namespace may still cut the
    network); without namespaces the network is not blocked. ``require_isolation=True`` refuses to run then.
    This contains the host; it does not make the reward tamper-proof against code that inspects its tests.
    """
    if not isinstance(program, str):
        raise TypeError(f"program= must be Python source text; got {type(program).__name__}")
    for arg, v, lo in (("timeout", timeout, 0.01),):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= lo:
            raise ValueError(f"{arg}= must be a number of seconds >= {lo}; got {v!r}")
    for arg, v in (("cpu_seconds", cpu_seconds), ("mem_mb", mem_mb), ("nproc", nproc), ("fsize_mb", fsize_mb),
                   ("nofile", nofile), ("output_cap", output_cap), ("tmpfs_mb", tmpfs_mb)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{arg}= must be an int >= 1; got {v!r}")
    if sys.platform != "linux":
        raise RuntimeError("run_sandboxed needs Linux (namespaces and rlimits); run CodeExec on a Linux host")
    py = python or sandbox_python()
    is_root = os.geteuid() == 0
    uid = _fresh_uid() if is_root else os.getuid()
    cfg = {"workdir": "", "isolate": bool(isolate), "uid": uid, "python": py, "tmpfs_mb": tmpfs_mb,
           "limits": {"cpu": cpu_seconds, "as": mem_mb << 20, "fsize": fsize_mb << 20, "nofile": nofile,
                      "nproc": nproc}}
    host_dir = tempfile.mkdtemp(prefix="whileai-sandbox-")
    work = os.path.join(host_dir, "work")
    os.mkdir(work, 0o700)
    cfg["workdir"] = work
    r_fd, w_fd = os.pipe()
    cfg["status_fd"] = w_fd
    out_f = tempfile.TemporaryFile(dir=host_dir)  # noqa: SIM115 - closed in the finally below
    err_f = tempfile.TemporaryFile(dir=host_dir)  # noqa: SIM115
    started = time.monotonic()
    timed_out = False
    killed = 0
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _LAUNCHER, json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=out_f, stderr=err_f, close_fds=True, pass_fds=(w_fd,),
            start_new_session=True, env={"PATH": "/usr/bin:/bin"},
        )
        os.close(w_fd)
        w_fd = -1
        try:
            assert proc.stdin is not None
            proc.stdin.write(program.encode("utf-8"))
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
        if is_root:
            killed = _kill_uid(uid)
        wall = time.monotonic() - started
        status_raw = b""
        while True:
            chunk = os.read(r_fd, 65536)
            if not chunk:
                break
            status_raw += chunk
        try:
            isolation = json.loads(status_raw.decode()) if status_raw else {}
        except json.JSONDecodeError:
            isolation = {}
        stdout, n_out = _read_capped(out_f, output_cap)
        stderr, n_err = _read_capped(err_f, output_cap)
        tail = _tail(out_f, CODE_STDOUT_TAIL)
        if n_out > output_cap:
            stdout = stdout + "\n...[" + str(n_out - output_cap) + " bytes omitted]...\n" + tail
    finally:
        if w_fd >= 0:
            os.close(w_fd)
        os.close(r_fd)
        out_f.close()
        err_f.close()
        shutil.rmtree(host_dir, ignore_errors=True)
    if not isolation:
        raise VerifierError(f"the sandbox did not start: {stderr.strip().splitlines()[-1:] or ['no output']}")
    if require_isolation and not (isolation.get("net_namespace") and isolation.get("user_dropped")):
        raise VerifierError("require_isolation=True but this host gives no network namespace or uid drop: "
                            + "; ".join(isolation.get("notes", [])))
    rc = proc.returncode
    sig = None
    if rc is not None and rc < 0 and not timed_out:
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = f"signal {-rc}"
    return SandboxResult(returncode=rc, stdout=stdout, stderr=stderr, timed_out=timed_out, wall_s=round(wall, 4),
                         stdout_bytes=n_out, stderr_bytes=n_err, signal=sig, isolation=isolation,
                         survivors_killed=killed)


# --------------------------------------------------------------------------------------------------
# CodeExec
# --------------------------------------------------------------------------------------------------


def extract_code(text: str) -> str:
    """The last fenced ```python (or bare ```) block of a reply, else the whole text."""
    blocks = re.findall(r"```(?:python|py)?[ \t]*\n(.*?)```", text or "", re.DOTALL)
    return blocks[-1] if blocks else (text or "")


_RUNNER = '''

# ---- whileai CodeExec runner ----
def __whileai_run(_token):
    import sys as _sys
    _tests = [(_n, _f) for _n, _f in list(globals().items()) if _n.startswith("test_") and callable(_f)]
    _failed = []
    for _n, _f in _tests:
        try:
            _f()
        except BaseException as _e:  # noqa: BLE001 - a failing test in any form
            _failed.append((_n, type(_e).__name__))
    if _failed:
        print("\\n" + _token + " FAILED " + " ".join(n + ":" + e for n, e in _failed), flush=True)
        _sys.exit(1)
    print("\\n" + _token + " PASSED " + str(len(_tests)), flush=True)
__whileai_run(%r)
'''

_SIGNAL_REASON = {
    "SIGXCPU": "CPU limit hit (RLIMIT_CPU)",
    "SIGXFSZ": "file/output size limit hit (RLIMIT_FSIZE)",
    "SIGKILL": "killed",
    "SIGSEGV": "crashed (segfault, possibly out of memory)",
}


class CodeExec(Verifier):
    """Runs the reply's code against hidden tests in the sandbox (``run_sandboxed``); 1 when every test passes.

    Code is the last ```python block of the reply, else the whole reply. Tests come from ``tests=``, else
    ``row["privileged"]["tests"]``, else the reference. The program is ``setup`` + code + tests + a runner that
    calls each top-level ``test_*`` function; top-level asserts in the tests work too. A pass needs exit 0 and
    the runner's per-run token on stdout (so ``sys.exit(0)`` from the code is no pass). Timeouts, limits,
    crashes and output over ``output_cap`` score 0 with the reason. With hidden tests, a failure names only the
    exception class, never the test's text.
    """

    def __init__(self, tests: str | None = None, *, timeout: float = CODE_TIMEOUT_S, cpu_seconds: int = CODE_CPU_S,
                 mem_mb: int = CODE_MEM_MB, nproc: int = CODE_NPROC, fsize_mb: int = CODE_FSIZE_MB,
                 nofile: int = CODE_NOFILE, output_cap: int = CODE_OUTPUT_CAP, tmpfs_mb: int = CODE_TMPFS_MB,
                 setup: str = "", python: str | None = None, isolate: bool = True, require_isolation: bool = False,
                 field: str | None = None, name: str | None = None) -> None:
        super().__init__(field=field, name=name or "code_exec")
        if tests is not None and not isinstance(tests, str):
            raise TypeError(f"tests= must be Python source text; got {type(tests).__name__}")
        if not isinstance(setup, str):
            raise TypeError(f"setup= must be Python source text; got {type(setup).__name__}")
        self.tests = tests
        self.setup = setup
        self.limits: dict[str, Any] = {"timeout": timeout, "cpu_seconds": cpu_seconds, "mem_mb": mem_mb, "nproc": nproc,
                       "fsize_mb": fsize_mb, "nofile": nofile, "output_cap": output_cap, "tmpfs_mb": tmpfs_mb,
                       "python": python, "isolate": isolate, "require_isolation": require_isolation}
        # validate the limits now, not on the first row
        for arg in ("cpu_seconds", "mem_mb", "nproc", "fsize_mb", "nofile", "output_cap", "tmpfs_mb"):
            v = self.limits[arg]
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{arg}= must be an int >= 1; got {v!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout= must be a number of seconds > 0; got {timeout!r}")

    def reference(self, row: Row) -> tuple[Any, bool]:
        if self.tests is not None:
            return self.tests, False
        priv = row.get("privileged")
        if isinstance(priv, Mapping) and isinstance(priv.get("tests"), str):
            return priv["tests"], True
        return super().reference(row)

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        if not isinstance(reference, str):
            raise VerifierError("the tests must be Python source text")
        hidden = self.tests is None
        token = "WHILEAI_" + secrets.token_hex(16)
        program = "\n".join([self.setup, extract_code(candidate), "", reference, _RUNNER % token])
        res = run_sandboxed(program, **self.limits)
        meta = {"wall_s": res.wall_s, "returncode": res.returncode, "signal": res.signal,
                "timed_out": res.timed_out, "stdout_bytes": res.stdout_bytes, "stderr_bytes": res.stderr_bytes,
                "isolation": {k: res.isolation.get(k) for k in ("uid", "net_namespace", "mount_namespace",
                                                               "private_tmp", "user_dropped", "notes")},
                "survivors_killed": res.survivors_killed}
        cap = self.limits["output_cap"]
        if res.timed_out:
            return {"reward": 0, "reason": f"timed out after {self.limits['timeout']:g} s (process group killed)", **meta}
        if res.signal:
            why = _SIGNAL_REASON.get(res.signal, "killed")
            return {"reward": 0, "reason": f"{why}: {res.signal}", **meta}
        if res.stdout_bytes > cap or res.stderr_bytes > cap:
            return {"reward": 0, "reason": f"output over the cap ({max(res.stdout_bytes, res.stderr_bytes)} bytes > "
                                           f"output_cap={cap})", **meta}
        lines = [ln for ln in res.stdout.splitlines() if ln.startswith(token)]
        verdict = lines[-1][len(token):].strip() if lines else ""
        if res.returncode == 0 and verdict.startswith("PASSED"):
            return {"reward": 1, "reason": f"all tests passed ({verdict.split()[-1]} test functions)", **meta}
        if verdict.startswith("FAILED"):
            failed = verdict.split()[1:]
            shown = [f.split(":")[-1] for f in failed] if hidden else failed
            return {"reward": 0, "reason": f"tests failed: {', '.join(shown)[:200]}", **meta}
        err_lines = [ln for ln in res.stderr.strip().splitlines() if ln.strip()]
        last = err_lines[-1] if err_lines else ""
        if hidden:
            m = re.match(r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)|MemoryError)\b", last)
            last = m.group(1) if m else ("no error text" if not last else "error")
        if res.returncode == 0:
            return {"reward": 0, "reason": "exited 0 before the tests ran (no runner token)", **meta}
        return {"reward": 0, "reason": f"tests failed: exit {res.returncode}: {last[:200]}", **meta}
