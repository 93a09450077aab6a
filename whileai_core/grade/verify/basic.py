"""The verifiers every peer has: exact match, includes, regex, multiple choice, numeric, JSON, ``@verifier``.

Each one is a ``Verifier`` (``whileai_core.grade.verify``): ``verifier(row) -> {"reward", "reason", "verifier", ...}``.
The reply is the row's ``final_text`` (else its last assistant message); the reference comes from the constructor,
else ``field=``, else the row's privileged reference, else a flat ``reference``/``answer``/... field; with none,
the verifier abstains (``reward=None``). A reply never makes a verifier raise: junk scores 0 with the reason.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from whileai_core.defaults import MATH_MAX_DIGITS, NUMERIC_ABS_TOL, NUMERIC_REL_TOL
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.grade.verify.answers import extract_answer
from whileai_core.grade.verify.checks import extract_json
from whileai_core.grade.verify.contract import Row, Verifier, VerifierError

__all__ = ["ANY", "ExactMatch", "FunctionVerifier", "Includes", "JSONFields", "JSONValid", "MultipleChoice",
           "Numeric", "Regex", "verifier"]

_SHOW = 60  # characters of a reply quoted in a reason
WHITESPACE = ("exact", "strip", "collapse", "ignore")


class _Any:
    """Matches any value that is present (a JSON field, a tool-call argument)."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()


def _short(text: str) -> str:
    return repr(text if len(text) <= _SHOW else text[:_SHOW] + "...")


def _answers(reference: Any) -> list[str]:
    """The acceptable answers: one string, or a list of them."""
    values = list(reference) if isinstance(reference, (list, tuple)) else [reference]
    return [v if isinstance(v, str) else json.dumps(v) for v in values]


class _TextVerifier(Verifier):
    """Shared by ExactMatch and Includes: the answer(s), case folding and whitespace handling."""

    def __init__(self, answer: Any, *, case_sensitive: bool, whitespace: str, field: str | None,
                 name: str | None, default_name: str) -> None:
        super().__init__(field=field, name=name or default_name)
        if whitespace not in WHITESPACE:
            raise InvalidArgument(f"whitespace= must be one of {WHITESPACE}; got {whitespace!r}")
        if answer is not None and not _answers(answer):
            raise InvalidArgument("answer= is an empty list; give at least one acceptable answer")
        self.answer = answer
        self.case_sensitive = bool(case_sensitive)
        self.whitespace = whitespace

    fixed_reference = "answer"

    def normalize(self, text: str) -> str:
        if self.whitespace == "strip":
            text = text.strip()
        elif self.whitespace == "collapse":
            text = " ".join(text.split())
        elif self.whitespace == "ignore":
            text = "".join(text.split())
        return text if self.case_sensitive else text.casefold()


class ExactMatch(_TextVerifier):
    """The whole reply equals the answer (or one of a list of answers) after normalisation.

    ``case_sensitive`` (default True); ``whitespace``: ``"exact"``, ``"strip"`` (default: the ends),
    ``"collapse"`` (runs become one space) or ``"ignore"`` (all whitespace removed).

    Args:
        answer: the expected reply, or a list of accepted replies (default: the row's reference).
        case_sensitive: compare case too.
        whitespace: ``"exact"``, ``"strip"``, ``"collapse"`` or ``"ignore"``.
        field: read the reference from this row field instead of the row's reference.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        check = wai.ExactMatch("Paris", case_sensitive=False)
        check({"final_text": "paris"})["reward"]   # 1
        ```
    """

    def __init__(self, answer: Any = None, *, case_sensitive: bool = True, whitespace: str = "strip",
                 field: str | None = None, name: str | None = None) -> None:
        super().__init__(answer, case_sensitive=case_sensitive, whitespace=whitespace, field=field, name=name,
                         default_name="exact_match")

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        got = self.normalize(candidate)
        if any(got == self.normalize(a) for a in _answers(reference)):
            return 1, "exact: the reply equals the answer"
        return 0, (f"exact: the reply {_short(got)} is not the answer (case_sensitive={self.case_sensitive}, "
                   f"whitespace={self.whitespace!r})")


class Includes(_TextVerifier):
    """The reply contains the answer (any of a list; all of them with ``require_all=True``).

    ``case_sensitive`` (default False); ``whitespace`` as for ExactMatch (default ``"collapse"``).

    Args:
        answer: the text that must appear, or a list of them (default: the row's reference).
        case_sensitive: compare case too.
        whitespace: as for ``ExactMatch``.
        require_all: with a list, every item must appear.
        field: read the reference from this row field instead of the row's reference.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        wai.Includes("refund")({"final_text": "Your refund is on its way."})["reward"]   # 1
        ```
    """

    def __init__(self, answer: Any = None, *, case_sensitive: bool = False, whitespace: str = "collapse",
                 require_all: bool = False, field: str | None = None, name: str | None = None) -> None:
        super().__init__(answer, case_sensitive=case_sensitive, whitespace=whitespace, field=field, name=name,
                         default_name="includes")
        self.require_all = bool(require_all)

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        got = self.normalize(candidate)
        answers = [a for a in _answers(reference) if self.normalize(a)]
        if not answers:
            raise VerifierError("the answer is empty after normalisation; every reply would include it")
        found = [self.normalize(a) in got for a in answers]
        if all(found) if self.require_all else any(found):
            return 1, f"includes: found {sum(found)} of {len(answers)} answer(s) in the reply"
        missing = answers[found.index(False)]
        what = f"answer {missing!r}" if self.require_all else f"any of the {len(answers)} answer(s)"
        return 0, f"includes: the reply does not contain {what}"


class Regex(Verifier):
    """The reply matches a regular expression (``pattern=``, else the row's reference).

    ``fullmatch=True`` needs the whole (stripped) reply to match; ``flags`` are ``re`` flags.

    Args:
        pattern: the regular expression (default: the row's reference).
        flags: ``re`` flags.
        fullmatch: the whole stripped reply must match.
        field: read the reference from this row field instead of the row's reference.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        wai.Regex(r"O[0-9]{5}")({"final_text": "Order O48537 shipped."})["reward"]   # 1
        ```
    """

    def __init__(self, pattern: str | None = None, *, flags: int = 0, fullmatch: bool = False,
                 field: str | None = None, name: str | None = None) -> None:
        super().__init__(field=field, name=name or "regex")
        if pattern is not None:
            if not isinstance(pattern, str):
                raise InvalidArgumentType(f"pattern= must be a regular expression string; got {type(pattern).__name__}")
            try:
                re.compile(pattern, flags)
            except re.error as exc:
                raise InvalidArgument(f"pattern= is not a valid regular expression: {exc}") from None
        self.pattern, self.flags, self.fullmatch = pattern, flags, bool(fullmatch)

    fixed_reference = "pattern"

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        try:
            rx = re.compile(str(reference), self.flags)
        except re.error as exc:
            raise VerifierError(f"the row's pattern is not a valid regular expression: {exc}") from None
        m = rx.fullmatch(candidate.strip()) if self.fullmatch else rx.search(candidate)
        if m:
            return 1, f"regex: matched {_short(m.group(0))}"
        return 0, "regex: the reply does not " + ("fully match" if self.fullmatch else "match") + " the pattern"


# --------------------------------------------------------------------------------------------------
# MultipleChoice
# --------------------------------------------------------------------------------------------------


def _choice_patterns(letters: str) -> list[tuple[str, re.Pattern[str]]]:
    """(what, pattern) in priority order; each captures one letter. Free text needs upper-case letters."""
    L = f"[{re.escape(letters)}]"
    end = r"(?=$|[\s.,;:!?)*\]}])"
    return [
        ("an 'answer is/:' line", re.compile(
            rf"(?i:answer|choice)\s*(?:(?i:is)\b\s*:?|[:=])\s*(?:\*\*)?\s*[(\[]?\s*({L}){end}")),
        ("\\boxed{}", re.compile(rf"\\boxed\s*\{{\s*(?:\\text\s*\{{)?\s*\(?({L})\)?\s*\}}")),
        ("a bold letter", re.compile(rf"\*\*\s*\(?({L})\)?[.:]?\s*\*\*")),
        ("a letter in parentheses", re.compile(rf"\(({L})\)")),
    ]


class MultipleChoice(Verifier):
    """The choice letter the reply gives equals the answer's letter.

    The letter is read, in this order, from "The answer is B" / "Answer: (B)" / "answer: **B**" (the last such),
    ``\\boxed{B}``, a bold ``**B**``, a letter in parentheses ``(B)``, else a reply that is just ``B``/``B.``/``B)``.
    ``letters`` are the allowed choices (default A-J: MMLU-Pro has ten). The reference is a letter (``"B"``,
    ``"(b)"``) or a 0-based index.

    Args:
        answer: the right letter or its 0-based index (default: the row's reference).
        letters: the allowed choices (A-J: MMLU-Pro has ten).
        field: read the reference from this row field instead of the row's reference.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        wai.MultipleChoice("B")({"final_text": "The answer is (B)."})["reward"]   # 1
        ```
    """

    def __init__(self, answer: Any = None, *, letters: str = "ABCDEFGHIJ", field: str | None = None,
                 name: str | None = None) -> None:
        super().__init__(field=field, name=name or "multiple_choice")
        if not isinstance(letters, str) or not letters.isalpha() or not letters.isupper():
            raise InvalidArgument(f"letters= must be upper-case letters such as 'ABCD'; got {letters!r}")
        self.answer, self.letters = answer, letters
        self._patterns = _choice_patterns(letters)

    fixed_reference = "answer"

    def _want(self, reference: Any) -> str:
        if isinstance(reference, int) and not isinstance(reference, bool) and 0 <= reference < len(self.letters):
            return self.letters[reference]
        text = str(reference).strip().strip("()*. ").upper()
        if len(text) != 1 or text not in self.letters:
            raise VerifierError(f"the reference {str(reference)[:20]!r} is not one of the letters {self.letters} "
                                "(or a 0-based index)")
        return text

    def read_choice(self, reply: str) -> tuple[str | None, str]:
        """The letter the reply chose and where it was read from; ``(None, "")`` when there is none."""
        for what, rx in self._patterns:
            found = rx.findall(reply)
            if found:
                return found[-1].upper(), what
        bare = re.fullmatch(rf"\s*\(?([{self.letters}{self.letters.lower()}])[).:]?\s*", reply)
        return (bare.group(1).upper(), "the whole reply") if bare else (None, "")

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        want = self._want(reference)
        got, where = self.read_choice(candidate)
        if got is None:
            return 0, f"choice: no choice letter ({self.letters}) found in the reply"
        if got == want:
            return 1, f"choice: {got} (read from {where}) is the answer"
        return 0, f"choice: the reply chose {got} (read from {where}); not the answer"


# --------------------------------------------------------------------------------------------------
# Numeric
# --------------------------------------------------------------------------------------------------

_NUM = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?:\s*/\s*(?:\d+(?:\.\d*)?|\.\d+))?")


def read_number(text: Any, *, max_digits: int = MATH_MAX_DIGITS) -> Fraction | None:
    """The last number in ``text`` as an exact Fraction: ``1,000``, ``-2.5``, ``3/4``, ``\\frac{3}{4}``, ``1.5e3``,
    ``50%`` (-> 50), ``$12``. None when there is none, or when it has more than ``max_digits`` digits."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(text) if math.isfinite(text) else None
    if not isinstance(text, str):
        return None
    s = re.sub(r"\\[dt]?frac\s*\{\s*([^{}]*?)\s*\}\s*\{\s*([^{}]*?)\s*\}", r"\1/\2", text)
    s = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", s.replace("\\!", "").replace("\\,", ""))
    s = s.replace("−", "-")
    for token in reversed(_NUM.findall(s)):
        try:
            parts = [p.strip() for p in token.split("/")]
            if any(abs(int(e)) > max_digits for e in re.findall(r"[eE]([-+]?\d{1,12})", token)):
                return None
            if any(len(p) > max_digits for p in parts):
                return None
            value = Fraction(parts[0])
            return value / Fraction(parts[1]) if len(parts) == 2 else value
        except (ValueError, ZeroDivisionError):
            continue
    return None


class Numeric(Verifier):
    """The reply's number is within ``max(tol, rel * |answer|)`` of the answer (exact Fraction arithmetic).

    The number is read from the final answer (the last ``\\boxed{}``, else "answer is/=/: X", else the last line)
    by ``read_number``: the last number there wins. Defaults: ``tol`` = 1e-6, ``rel`` = 0 (stated in the reason).

    Args:
        answer: the expected number (default: the row's reference).
        tol: absolute tolerance (``NUMERIC_ABS_TOL`` 1e-6). Default ``NUMERIC_ABS_TOL`` (1e-6) in defaults.py:
            Numeric's default absolute tolerance.
        rel: relative tolerance (``NUMERIC_REL_TOL`` 0). Default ``NUMERIC_REL_TOL`` (0.0) in defaults.py:
            Numeric's default relative tolerance (off unless stated).
        field: read the reference from this row field instead of the row's reference.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        wai.Numeric(42)({"final_text": "So the answer is 42."})["reward"]   # 1
        ```
    """

    def __init__(self, answer: Any = None, *, tol: float = NUMERIC_ABS_TOL, rel: float = NUMERIC_REL_TOL,
                 field: str | None = None, name: str | None = None) -> None:
        super().__init__(field=field, name=name or "numeric")
        for arg, v in (("tol", tol), ("rel", rel)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or not math.isfinite(v):
                raise InvalidArgument(f"{arg}= must be a finite number >= 0; got {v!r}")
        if answer is not None and read_number(answer) is None:
            raise InvalidArgument(f"answer= must be a number (or text with one); got {answer!r}")
        self.answer, self.tol, self.rel = answer, Fraction(tol), Fraction(rel)

    fixed_reference = "answer"

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        want = read_number(reference)
        if want is None:
            raise VerifierError("the reference has no number in it")
        answer = extract_answer(candidate)
        got = read_number(answer) if answer else None
        if got is None:
            return 0, "numeric: no number in the reply's answer"
        bound = max(self.tol, self.rel * abs(want))
        stated = f"tol={float(self.tol):g}, rel={float(self.rel):g}"
        if abs(got - want) <= bound:
            return 1, f"numeric: within tolerance ({stated})"
        try:
            shown = f"{float(got):.6g}"
        except OverflowError:
            shown = f"(a {len(str(abs(got.numerator)))}-digit number)"
        return 0, f"numeric: the reply's number {shown} is off by more than the tolerance ({stated})"


# --------------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------------

_TOP_TYPES = {"object": dict, "array": list}


class JSONValid(Verifier):
    """The reply holds valid JSON (a fenced ```json block, the whole reply, or the first ``{...}``/``[...]``).

    ``top_type="object"``/``"array"`` also requires that type; ``whole=True`` requires the whole stripped reply
    (or one fenced block that is all of it) to be the JSON. Needs no reference.

    Args:
        top_type: ``"object"`` or ``"array"`` to require that top-level type.
        whole: the whole reply must be the JSON.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        wai.JSONValid(top_type="object")({"final_text": '{"ok": true}'})["reward"]   # 1
        ```
    """

    def __init__(self, *, top_type: str | None = None, whole: bool = False, name: str | None = None) -> None:
        super().__init__(name=name or "json_valid")
        if top_type is not None and top_type not in _TOP_TYPES:
            raise InvalidArgument(f"top_type= must be 'object', 'array' or None; got {top_type!r}")
        self.top_type, self.whole = top_type, bool(whole)

    def reference(self, row: Row) -> tuple[Any, bool]:
        return True, False  # nothing to compare against: validity is the check

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        text = candidate.strip()
        fenced = re.fullmatch(r"```(?:json)?\s*\n(.*?)```", text, re.DOTALL | re.IGNORECASE)
        try:
            if self.whole:
                value = json.loads(fenced.group(1) if fenced else text)
            else:
                value = extract_json(candidate)
        except (ValueError, RecursionError) as exc:
            msg = "the JSON is nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
            return 0, f"json: not valid JSON ({msg})"
        if self.top_type and not isinstance(value, _TOP_TYPES[self.top_type]):
            return 0, f"json: valid, but the top level is {type(value).__name__}, not {self.top_type}"
        return 1, "json: valid"


def _path_parts(path: str) -> list[str]:
    if not isinstance(path, str) or not path:
        raise InvalidArgument(f"a field path is a non-empty dotted string such as 'order.items.0.id'; got {path!r}")
    return path.split(".")


def _at(value: Any, parts: list[str]) -> tuple[bool, Any]:
    """(found, value) at a dotted path; a part that is an integer indexes a list."""
    for part in parts:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and re.fullmatch(r"-?\d+", part) and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def _same(got: Any, want: Any) -> bool:
    """JSON equality: 1 == 1.0, but True is not 1 and "1" is not 1."""
    if isinstance(got, bool) or isinstance(want, bool):
        return isinstance(got, bool) and isinstance(want, bool) and got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return got == want
    if isinstance(got, dict) and isinstance(want, Mapping):
        return got.keys() == want.keys() and all(_same(got[k], want[k]) for k in got)
    if isinstance(got, list) and isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want))
    return type(got) is type(want) and got == want


def match_value(got: Any, want: Any) -> tuple[bool, str]:
    """Does ``got`` satisfy ``want`` (a value, ``ANY``, or a predicate ``want(got) -> bool``)? With a why-not."""
    if want is ANY:
        return True, ""
    if callable(want):
        label = getattr(want, "__name__", type(want).__name__)
        try:
            ok = bool(want(got))
        except Exception as exc:  # noqa: BLE001 - a predicate that raises on odd input is a failed check
            return False, f"failed the check {label} (it raised {type(exc).__name__}) on {_show_value(got)}"
        return ok, "" if ok else f"failed the check {label} on {_show_value(got)}"
    if _same(got, want):
        return True, ""
    return False, f"is {_show_value(got)}, expected {_show_value(want)}"


def _show_value(v: Any) -> str:
    try:
        text = json.dumps(v, default=repr)
    except (ValueError, RecursionError):
        text = type(v).__name__
    return text if len(text) <= _SHOW else text[:_SHOW] + "..."


class JSONFields(Verifier):
    """The reply's JSON has the given fields: ``{path: expected value, or ANY, or a predicate}``.

    Paths are dotted (``"order.items.0.id"``: integers index lists). Fields come from ``fields=``, else the row's
    reference (a dict). Values compare as JSON (``1 == 1.0``; ``True`` is not ``1``). 1 when every field matches;
    else 0 with the first field that did not.

    Args:
        fields: ``{dotted path: expected value, ANY, or a predicate}`` (default: the row's reference).
        field: read the reference from this row field instead of the row's reference.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        wai.JSONFields({"order.id": "O1"})({"final_text": '{"order": {"id": "O1"}}'})["reward"]   # 1
        ```
    """

    def __init__(self, fields: Mapping[str, Any] | None = None, *, field: str | None = None,
                 name: str | None = None) -> None:
        super().__init__(field=field, name=name or "json_fields")
        if fields is not None:
            if not isinstance(fields, Mapping) or not fields:
                raise InvalidArgument("fields= must be a non-empty dict {dotted path: expected value or predicate}")
            for path in fields:
                _path_parts(path)
        self.fields = fields

    fixed_reference = "fields"

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        if not isinstance(reference, Mapping) or not reference:
            raise VerifierError("the reference must be a non-empty dict {dotted path: expected value}")
        try:
            value = extract_json(candidate)
        except (ValueError, RecursionError):
            return 0, "json: no valid JSON in the reply"
        for path, want in reference.items():
            found, got = _at(value, _path_parts(str(path)))
            if not found:
                return 0, f"json: field {path!r} is missing"
            ok, why = match_value(got, want)
            if not ok:
                return 0, f"json: field {path!r} {why}"
        return 1, f"json: all {len(reference)} field(s) match"


# --------------------------------------------------------------------------------------------------
# @verifier
# --------------------------------------------------------------------------------------------------


class FunctionVerifier(Verifier):
    """A Verifier around ``fn(reply, reference[, row])`` returning bool, a number in [0, 1], ``(score, reason)``
    or None (nothing to check). Made by ``@verifier``."""

    def __init__(self, fn: Callable[..., Any], *, answer: Any = None, field: str | None = None,
                 name: str | None = None) -> None:
        if not callable(fn):
            raise InvalidArgumentType(f"@verifier wraps a function fn(reply, reference); got {type(fn).__name__}")
        super().__init__(field=field, name=name or getattr(fn, "__name__", None) or "verifier")
        self.fn, self.answer = fn, answer
        self._takes_row = _n_positional(fn) >= 3
        self.__doc__ = getattr(fn, "__doc__", None)

    fixed_reference = "answer"

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        return self.fn(candidate, reference, row) if self._takes_row else self.fn(candidate, reference)


def _n_positional(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 3
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def verifier(fn: Callable[..., Any] | None = None, *, name: str | None = None, field: str | None = None,
             answer: Any = None) -> Any:
    """Turn ``fn(reply, reference) -> bool | float | (float, reason)`` into a Verifier.

    Use as ``@verifier`` or ``@verifier(name=..., field=..., answer=...)``. A function with a third positional
    parameter also gets the row. Returning None abstains (no reference); the reason defaults to pass/fail.

    Args:
        fn: ``fn(reply, reference)`` (or with a third parameter, the row) -> bool, score or ``(score, reason)``.
        name: the verifier's name on the rows (default: its kind).
        field: read the reference from this row field instead of the row's reference.
        answer: a fixed reference for every row.

    Returns:
        A ``Verifier`` (or, called with keywords only, a decorator that makes one).

    Raises:
        InvalidArgumentType: ``fn`` is not callable (a ``TypeError``).

    Example:
        ```python
        @wai.verifier
        def says_yes(reply, reference):
            return reply.strip().lower().startswith("yes")
        ```
    """
    if fn is not None:
        return FunctionVerifier(fn, name=name, field=field, answer=answer)

    def wrap(f: Callable[..., Any]) -> FunctionVerifier:
        return FunctionVerifier(f, name=name, field=field, answer=answer)

    return wrap


class JSONField(JSONFields):
    """The SDK's ``JSONField(path, equals=None)``: the value at a dotted path equals ``equals`` (as text,
    case-insensitive and stripped), or, without ``equals``, is present. One field of ``JSONFields``."""

    def __init__(self, path: str, equals: Any = None, *, name: str | None = None) -> None:
        want: Any = ANY
        if equals is not None:
            target = str(equals).strip().lower()

            def want(got: Any) -> bool:
                return str(got).strip().lower() == target

            want.__name__ = f"equals {equals!r}"
        super().__init__({path: want}, name=name or "json_field")


class _RowVerifier(Verifier):
    """A row judge ``fn(row) -> verdict`` as a Verifier (``as_verifier``)."""

    def __init__(self, fn: Callable[[Row], Any], *, name: str | None = None) -> None:
        super().__init__(name=name or getattr(fn, "__name__", None) or "verifier")
        self.fn = fn

    def __call__(self, row: Row) -> dict[str, Any]:
        return {**self._finish(self.fn(row)), "scorer_kind": self.kind}


def as_verifier(fn: Any, *, name: str | None = None) -> Verifier:
    """Any callable as a Verifier (the SDK's ``as_verifier``): a Verifier is returned as it is; a function of one
    argument is a row judge (``fn(row)`` -> bool, score, ``(score, reason)``, a verdict dict or None); a
    function of two or three is ``fn(reply, reference[, row])`` as ``@verifier`` wraps it.

    Raises:
        InvalidArgumentType: ``fn`` is not callable (a ``TypeError``).
    """
    if isinstance(fn, Verifier):
        return fn
    if not callable(fn):
        raise InvalidArgumentType(f"as_verifier takes a callable; got {type(fn).__name__}")
    if _n_positional(fn) == 1:
        return _RowVerifier(fn, name=name)
    return FunctionVerifier(fn, name=name)
