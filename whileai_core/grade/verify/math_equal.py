"""MathEqual on math-verify: a math answer checked by a well-kept parser, under our verifier contract.

Hugging Face's ``math-verify`` (lazily imported; a dependency of the package) extracts the answer from the reply
(``\\boxed{}``, "the final answer is", the last LaTeX or plain expression), parses both sides to SymPy and decides
equivalence (numbers, fractions, LaTeX, sets, tuples, intervals with their open/closed ends, expressions,
equations, percentages, units in ``\\text{}``). This module wraps it in the ``Verifier`` contract:

- exact integers compare exactly (``1000000008`` is not ``1000000007``); ``tol``/``rel`` apply only to decimals,
  and ``rel`` never to an integer reference;
- one deadline (``timeout``) bounds parsing and comparing, in any thread: a watchdog raises in the grading
  thread (``PyThreadState_SetAsyncExc``) when it runs out, because math-verify's own timeout uses
  ``signal.alarm``, which works on the main thread only;
- a reference math-verify cannot read abstains (``reward=None``); a reference that is a choice letter or plain
  words (``"C"``, ``"Paris"``) is compared as normalised text;
- a reply never crashes the grader: junk, huge numbers and parser errors score 0 with the reason;
- the reason names what each side was read as (the reference's value is shown only when it is not privileged).
"""

from __future__ import annotations

import ctypes
import itertools
import math
import re
import threading
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from whileai_core.defaults import (
    MATH_FLOAT_ROUNDING,
    MATH_MAX_DIGITS,
    MATH_MAX_REPLY_CHARS,
    MATH_NUMERIC_PRECISION,
    MATH_REL_TOL,
    MATH_SIMPLIFY_OPS,
    MATH_TIMEOUT_S,
    MATH_ZERO_FLOOR,
)
from whileai_core.errors import AnswerTooLarge, InvalidArgument
from whileai_core.grade.verify.answers import extract_answer
from whileai_core.grade.verify.contract import Row, Verifier, VerifierError

__all__ = ["MathEqual", "MathTimeout", "call_with_deadline"]

_SHOW_CHARS = 60  # characters of a parsed value shown in a reason


class MathTimeout(BaseException):
    """Raised inside the grading thread when the deadline passes (a BaseException: parsers catch Exception)."""


def call_with_deadline(fn: Callable[[], Any], seconds: float) -> tuple[Any, bool]:
    """``(fn(), False)``, or ``(None, True)`` when ``fn`` ran past ``seconds``.

    A watchdog timer raises ``MathTimeout`` in the calling thread; it lands at the next bytecode, so work inside
    one long C call (a huge integer power) finishes that call first. Works off the main thread.
    """
    target = threading.get_ident()
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target), ctypes.py_object(MathTimeout))

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    try:
        try:
            timer.start()
            out = fn()
        finally:
            with lock:
                state["done"] = True
            timer.cancel()
    except MathTimeout:
        return None, True
    # a bare ``except:`` inside a parser can swallow the interruption: its result is then not to be trusted
    return (None, True) if state["fired"] else (out, False)


def _math_verify() -> Any:
    try:
        import math_verify
        from math_verify import grader, parser
    except ImportError as exc:  # pragma: no cover - math-verify is a dependency of the package
        raise ImportError("MathEqual needs the math-verify package: pip install math-verify") from exc
    # we bound the work ourselves (call_with_deadline), which is what math-verify's one-time warning asks for
    grader.TIMEOUT_WARNING_SHOWN = parser.TIMEOUT_WARNING_SHOWN = True
    return math_verify


# --------------------------------------------------------------------------------------------------
# reading each side
# --------------------------------------------------------------------------------------------------

_SCI = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?|\.\d+)[eE]([-+]?\d+)(?![\w.])")


def _expand_scientific(text: str, max_digits: int = MATH_MAX_DIGITS) -> str:
    """``1.5e3`` -> ``1500`` (math-verify reads ``1e400`` as 1); an exponent over the cap raises ``AnswerTooLarge``."""

    def expand(m: re.Match[str]) -> str:
        if len(m.group(2)) > 8 or abs(int(m.group(2))) > max_digits:
            raise AnswerTooLarge(m.group(0)[:40])
        try:
            return format(Decimal(m.group(0)), "f")
        except InvalidOperation:  # pragma: no cover - the regex only matches valid literals
            return m.group(0)

    return _SCI.sub(expand, text)


def _log10_size(node: Any) -> float:
    """An estimate of log10 |value| of a numeric SymPy node, without evaluating it (inf when astronomically large).

    Sizes integers, powers (towers included), factorials and binomials; 0 for what it does not size (symbols,
    other functions: their numeric arguments are sized on their own by ``_too_large``).
    """
    import sympy

    try:
        if isinstance(node, sympy.Integer):
            return math.log10(abs(int(node))) if node != 0 else 0.0
        if isinstance(node, sympy.Rational):
            return max(math.log10(abs(int(node.p))), math.log10(int(node.q)))
        if isinstance(node, sympy.Float):
            return abs(math.log10(abs(float(node)))) if node != 0 else 0.0
        if isinstance(node, sympy.Pow):
            base, exp = _log10_size(node.base), _log10_size(node.exp)
            if base == 0:
                return 0.0
            return math.inf if exp > 300 else (10.0 ** exp) * base
        if isinstance(node, (sympy.factorial, sympy.factorial2, sympy.binomial)):
            n = _log10_size(node.args[0])
            if n > 300:
                return math.inf
            return math.lgamma(10.0 ** n + 1) / math.log(10) if n else 0.0
        if isinstance(node, sympy.Mul):
            return sum(_log10_size(a) for a in node.args)
        if isinstance(node, sympy.Add):
            return max(_log10_size(a) for a in node.args) + math.log10(len(node.args))
    except (OverflowError, ValueError, TypeError):
        return math.inf
    return 0.0


def _too_large(expr: Any, max_digits: int = MATH_MAX_DIGITS) -> str | None:
    """The first power/factorial/binomial in ``expr`` whose value would have more than ``max_digits`` digits."""
    import sympy

    if not isinstance(expr, sympy.Basic):
        return None
    try:
        for node in sympy.preorder_traversal(expr):
            if _log10_size(node) > max_digits:
                return _describe(node)
    except RecursionError:
        return "an expression nested too deeply"
    return None


_WORDS = re.compile(r"[A-Za-z][A-Za-z '\-]*")


def _as_text_answer(text: str) -> str | None:
    """The normalised text of a choice letter or plain-words answer (``(C)``, ``\\text{Paris}``), else None."""
    s = re.sub(r"\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}", r"\1", text)
    s = s.replace("$", "").strip().rstrip(".").strip()
    s = re.sub(r"^\(([A-Za-z])\)$", r"\1", s)
    s = re.sub(r"^\*\*(.+)\*\*$", r"\1", s)
    if not _WORDS.fullmatch(s):
        return None
    return " ".join(s.lower().split())


def _reference_text(reference: Any) -> str:
    if isinstance(reference, bool):
        raise VerifierError(f"the reference is a bool ({reference}); give the answer as text or a number")
    if isinstance(reference, int):
        return str(reference)
    if isinstance(reference, float):
        if not math.isfinite(reference):
            raise VerifierError(f"the reference is {reference}; give a finite number")
        return repr(reference)
    if isinstance(reference, (list, tuple)):
        return "(" + ", ".join(_reference_text(v) for v in reference) + ")"
    if isinstance(reference, str):
        return reference
    raise VerifierError(f"the reference is {type(reference).__name__}; give the answer as text or a number")


def _describe(value: Any, hidden: bool = False) -> str:
    """``integer 1000000008``, ``interval [2, 5)``, ``set of 3`` ...; the kind only when ``hidden``."""
    import sympy

    kinds = ((sympy.Integer, "integer"), (sympy.Rational, "fraction"), (sympy.Float, "decimal"),
             (sympy.Interval, "interval"), (sympy.FiniteSet, "set"), (sympy.Tuple, "tuple"),
             (sympy.core.relational.Relational, "equation"), (sympy.MatrixBase, "matrix"))
    kind = next((name for cls, name in kinds if isinstance(value, cls)), None)
    if kind is None:
        kind = "expression" if getattr(value, "free_symbols", None) else "number"
    if hidden:
        return kind
    try:
        if kind == "decimal":
            shown = repr(float(value))
        elif kind == "interval":
            shown = ("(" if value.left_open else "[") + f"{value.start}, {value.end}" + (")" if value.right_open else "]")
        else:
            shown = str(value)
    except (ValueError, OverflowError, RecursionError):  # str() of an int past Python's digit limit, a deep tree
        shown = "(too large to print)"
    if len(shown) > _SHOW_CHARS:
        shown = shown[:_SHOW_CHARS] + "..."
    return f"{kind} {shown}"


# --------------------------------------------------------------------------------------------------
# the verifier
# --------------------------------------------------------------------------------------------------


class MathEqual(Verifier):
    """The reply's math answer equals the reference, decided by math-verify (see the module docstring).

    ``answer=`` fixes the reference (else ``field=``, else the row's reference, as for every verifier);
    numbers on both sides are compared by us, not by math-verify's 6-decimal rounding: exactly equal (sympy), or
    ``|got - want| <= rel * |want|`` (an absolute floor ``MATH_ZERO_FLOOR`` only for a reference of 0; an explicit
    ``tol=`` is absolute everywhere); integers against integers always compare exactly. A reply with two different boxed answers offered as
    alternatives (``\\boxed{3} or \\boxed{4}``) scores 0; bare LaTeX replies are read; ``\\$`` is dropped; ``timeout`` bounds one
    check in seconds; ``float_rounding``/``numeric_precision`` are passed to math-verify's ``verify``.

    Args:
        answer: the reference answer (default: ``field``, else the row's reference).
        tol: an absolute tolerance for decimals when given; by default (None) only the floor ``MATH_ZERO_FLOOR``
            (1e-12) for a reference of 0: numbers compare relatively, ``|got - want| <= rel * |want|``, so
            ``1.2e-7`` is not ``1.5e-7`` and ``7.0000001`` is not ``7``.
        rel: relative tolerance for decimals (``MATH_REL_TOL`` 1e-9, math.isclose's default); never between two
            integers, which compare exactly.
        timeout: seconds for one check (``MATH_TIMEOUT_S`` 5, math-verify's own). Default ``MATH_TIMEOUT_S`` (5.0)
            in defaults.py: one deadline for parsing both sides and comparing them.
        float_rounding: passed to math-verify (``MATH_FLOAT_ROUNDING`` 6). Default ``MATH_FLOAT_ROUNDING`` (6) in
            defaults.py: decimals floats are rounded to before math-verify compares them.
        numeric_precision: passed to math-verify (``MATH_NUMERIC_PRECISION`` 15). Default
            ``MATH_NUMERIC_PRECISION`` (15) in defaults.py: significant digits of math-verify's numeric comparison.
        max_reply_chars: the tail of the reply read (``MATH_MAX_REPLY_CHARS``). Default ``MATH_MAX_REPLY_CHARS``
            (20_000) in defaults.py: the tail of a reply math-verify reads (answers come last.
        max_digits: larger powers, factorials and binomials are not evaluated (``MATH_MAX_DIGITS``). Default
            ``MATH_MAX_DIGITS`` (4000) in defaults.py: a power, factorial or binomial whose value would have more
            digits is not evaluated (CPython cannot.
        field: read the reference from this row field instead of the row's reference.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        wai.MathEqual("1/2")({"final_text": "The answer is $\\boxed{0.5}$"})["reward"]   # 1
        ```
    """

    def __init__(self, answer: Any = None, *, tol: float | None = None, rel: float = MATH_REL_TOL,
                 timeout: float = MATH_TIMEOUT_S, float_rounding: int = MATH_FLOAT_ROUNDING,
                 numeric_precision: int = MATH_NUMERIC_PRECISION, max_reply_chars: int = MATH_MAX_REPLY_CHARS,
                 max_digits: int = MATH_MAX_DIGITS, field: str | None = None, name: str | None = None) -> None:
        super().__init__(field=field, name=name or "math_equal")
        self.tol_given = tol is not None
        tol = MATH_ZERO_FLOOR if tol is None else tol
        for arg, v in (("tol", tol), ("rel", rel), ("timeout", timeout)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or not math.isfinite(v):
                raise InvalidArgument(f"{arg}= must be a number >= 0; got {v!r}")
        if timeout == 0:
            raise InvalidArgument("timeout= must be a number of seconds > 0; got 0")
        for arg, v in (("float_rounding", float_rounding), ("numeric_precision", numeric_precision),
                       ("max_reply_chars", max_reply_chars), ("max_digits", max_digits)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidArgument(f"{arg}= must be an int >= 1; got {v!r}")
        self.answer = answer
        self.tol, self.rel, self.timeout = float(tol), float(rel), float(timeout)
        self.float_rounding, self.numeric_precision = float_rounding, numeric_precision
        self.max_reply_chars, self.max_digits = max_reply_chars, max_digits

    fixed_reference = "answer"

    def check(self, candidate: str, reference: Any, row: Row) -> Any:
        if reference is None:
            return None
        ref_text = _reference_text(reference)
        hidden = self.answer is None and self.reference(row)[1]
        want_text = _as_text_answer(ref_text)
        if want_text is not None:
            return self._check_text(candidate, want_text, hidden)
        _math_verify()  # imported before the clock starts: the first import takes seconds
        out, timed_out = call_with_deadline(lambda: self._check_math(candidate, ref_text, hidden), self.timeout)
        if timed_out:
            return 0, f"math: timed out after {self.timeout:g} s reading or comparing the answers (scored 0)"
        return out

    def _check_text(self, candidate: str, want: str, hidden: bool) -> Any:
        got_raw = extract_answer(candidate[-self.max_reply_chars:]) if isinstance(candidate, str) else None
        if got_raw is None:
            return 0, "math: no answer found in the reply"
        got = _as_text_answer(got_raw) or " ".join(got_raw.lower().split())
        ref = "text" if hidden else f"text {want!r}"
        if got == want:
            return 1, f"math: equal as text (reply read as {got[:_SHOW_CHARS]!r}, reference as {ref})"
        return 0, f"math: not equal (reply read as text {got[:_SHOW_CHARS]!r}, reference as {ref})"

    def _check_math(self, candidate: str, ref_text: str, hidden: bool) -> Any:
        mv = _math_verify()
        gold = self._read_reference(mv, ref_text)
        try:
            preds = self._read_reply(mv, candidate)
        except AnswerTooLarge as exc:
            return 0, f"math: the reply has a number too large to compare ({exc})"
        except _Hedge as exc:
            return 0, f"math: the reply gives two different final answers ({exc}); a hedge scores 0"
        except Exception as exc:  # noqa: BLE001 - a grader never crashes on a reply
            return 0, f"math: could not read the reply ({type(exc).__name__})"
        if not preds:
            return 0, "math: no answer found in the reply (math-verify read nothing as math)"
        big = _too_large(preds[0], self.max_digits)
        if big:
            return 0, f"math: the reply's answer is too large to compare ({big}: over {self.max_digits} digits)"
        matched = None
        for pred in preds:
            try:
                if self._equal(mv, gold, pred):
                    matched = pred
                    break
            except Exception as exc:  # noqa: BLE001
                return 0, f"math: could not compare the answers ({type(exc).__name__}); scored 0"
        sides = f"reply read as {_describe(matched if matched is not None else preds[0])}, " \
                f"reference as {_describe(gold, hidden)}"
        return (1, f"math: equal ({sides})") if matched is not None else (0, f"math: not equal ({sides})")

    def _read_reference(self, mv: Any, ref_text: str) -> Any:
        """The reference parsed by math-verify (as ``$...$`` unless it has its own delimiters); else abstain."""
        try:
            ref_src = _expand_scientific(ref_text, self.max_digits)
            ref_src = ref_src.replace("\\$", "")  # currency: math-verify drops it in replies too
            wrapped = ref_src if ("$" in ref_src or "\\boxed" in ref_src) else f"${ref_src}$"
            gold = mv.parse(wrapped, fallback_mode="no_fallback", parsing_timeout=None) \
                or mv.parse(ref_src, fallback_mode="no_fallback", parsing_timeout=None)
        except AnswerTooLarge as exc:
            raise VerifierError(f"the reference has a number too large to compare ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - the parser's failure on a reference is an abstention
            raise VerifierError(f"math-verify could not read the reference ({type(exc).__name__})") from None
        if not gold:
            raise VerifierError("math-verify could not read the reference as math; fix it, or check text answers "
                                "with ExactMatch")
        big = _too_large(gold[0], self.max_digits)
        if big:
            raise VerifierError(f"the reference has a number too large to compare ({big})")
        return gold[0]

    def _read_reply(self, mv: Any, candidate: str) -> list[Any]:
        """The reply's answer as math-verify reads it; with several ``\\boxed{}``, also the last one alone
        (math-verify reads several boxes as one set; a reply's final answer is conventionally its last box).
        A reply whose LaTeX has no delimiters (``The answer is \\frac{\\sqrt3}{2}``) is read from its last line
        wrapped in ``$...$``. A hedge (``\\boxed{3} or \\boxed{4}``) raises ``_Hedge``."""
        reply = _expand_scientific(candidate[-self.max_reply_chars:], self.max_digits).replace("\\$", "")
        bare = _bare_latex(reply)
        if bare is not None:
            preds = mv.parse(f"${bare}$", fallback_mode="no_fallback", parsing_timeout=None)[:1]
            if preds:
                return preds
        preds = mv.parse(reply, fallback_mode="no_fallback", parsing_timeout=None)[:1]
        if preds and reply.count("\\boxed") >= 2:
            boxes = _boxes(reply)
            if _hedged(mv, reply, boxes):
                raise _Hedge(f"{len(boxes)} boxed answers joined as alternatives")
            last = extract_answer(reply)
            if last:
                preds += mv.parse("\\boxed{" + last + "}", fallback_mode="no_fallback", parsing_timeout=None)[:1]
        return preds

    def _equal(self, mv: Any, gold: Any, pred: Any) -> bool:
        """math-verify's equivalence, but integers compare exactly, ``X%`` also matches ``X``, and decimals within
        ``max(tol, rel * |want|)`` (no ``rel`` for an integer reference)."""
        import sympy

        pairs = [(gold, pred)]
        if _percent_value(gold) is not None or _percent_value(pred) is not None:
            pairs.append((_percent_value(gold, gold), _percent_value(pred, pred)))
        for g, p in pairs:
            if isinstance(g, sympy.Integer) and isinstance(p, sympy.Integer):
                if g == p:
                    return True
                continue  # exact: no tolerance between integers
            numeric = _numeric(g) and _numeric(p)
            if numeric:  # our rule, not math-verify's float_rounding=6 (which makes 1.2e-7 equal 1.5e-7)
                if self._close(g, p):
                    return True
                continue
            # decimals inside sets, intervals, tuples and expressions: math-verify's rounding to float_rounding
            # decimals would make 0.5000001 equal 1/2, so they keep numeric_precision digits there
            rounding = self.numeric_precision if _has_float(g) or _has_float(p) else self.float_rounding
            if mv.verify([g], [p], float_rounding=rounding, numeric_precision=self.numeric_precision,
                         timeout_seconds=None):
                return True
        return False

    def _close(self, g: Any, p: Any) -> bool:
        import sympy

        if not (isinstance(g, sympy.Expr) and isinstance(p, sympy.Expr) and g.is_number and p.is_number):
            return False
        gv = complex(sympy.N(g.doit(), self.numeric_precision))
        pv = complex(sympy.N(p.doit(), self.numeric_precision))
        if gv.imag or pv.imag or not (math.isfinite(gv.real) and math.isfinite(pv.real)):
            return False
        if _small(g) and _small(p) and sympy.simplify(g - p) == 0:
            return True
        want, got = gv.real, pv.real
        # an integer reference: no relative slack beyond the rounding of the numeric_precision digits compared
        rel = 10.0 ** (1 - self.numeric_precision) if isinstance(g, sympy.Integer) else self.rel
        # relative; the absolute floor applies only at zero, where a relative tolerance has no scale (a tol= the
        # caller gives applies everywhere)
        floor = self.tol if (self.tol_given or want == 0) else 0.0
        return abs(got - want) <= max(rel * abs(want), floor)


def _numeric(expr: Any) -> bool:
    import sympy

    return isinstance(expr, sympy.Expr) and bool(expr.is_number)


def _has_float(expr: Any) -> bool:
    import sympy

    try:
        return isinstance(expr, sympy.Basic) and bool(expr.atoms(sympy.Float))
    except (RecursionError, TypeError):
        return False


def _small(expr: Any) -> bool:
    """Few enough operations for ``simplify`` to be quick."""
    import sympy

    return sympy.count_ops(expr) <= MATH_SIMPLIFY_OPS


def _percent_value(expr: Any, default: Any = None) -> Any:
    """``X`` for latex2sympy's ``X%`` (``X * UnevaluatedExpr(1/100)``), else ``default``."""
    import sympy

    if isinstance(expr, sympy.Mul) and len(expr.args) == 2 \
            and expr.args[1] == sympy.UnevaluatedExpr(sympy.Rational(1, 100)):
        return expr.args[0]
    return default


class _Hedge(Exception):
    """The reply offers several different final answers as alternatives."""


_DELIMS = re.compile(r"\$|\\\(|\\\[|\\boxed|\\begin\{")
_LATEX_MARK = re.compile(r"\\[A-Za-z]|\^\{|_\{")
_PROSE_LEAD = re.compile(r"^.*?(?:\bis\b|=|:)\s*(?!.*(?:\bis\b|=|:))", re.DOTALL)


def _bare_latex(reply: str) -> str | None:
    """The last line of a reply with LaTeX commands but no math delimiters, past its prose lead-in, else None."""
    lines = [ln.strip() for ln in reply.strip().splitlines() if ln.strip()]
    if _DELIMS.search(reply) or not lines or not _LATEX_MARK.search(lines[-1]):
        return None
    last = _PROSE_LEAD.sub("", lines[-1]).strip().rstrip(".").strip()
    return last or None


def _boxes(reply: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of each ``\\boxed{...}``, braces balanced."""
    out = []
    for m in re.finditer(r"\\boxed\s*\{", reply):
        depth, i = 1, m.end()
        while i < len(reply) and depth:
            depth += {"{": 1, "}": -1}.get(reply[i], 0)
            i += 1
        if depth == 0:
            out.append((m.start(), i, reply[m.end():i - 1]))
    return out


_HEDGE_GLUE = re.compile(r"^[\s,;$]*(?:or|either|and/or|/|maybe|possibly|perhaps)?[\s,;$]*(?:or)?[\s,;$]*$", re.IGNORECASE)


def _hedged(mv: Any, reply: str, boxes: list[tuple[int, int, str]]) -> bool:
    """Two adjacent boxes with different contents joined only by ``or``, a comma or a slash (not a correction)."""
    for (_, end, a), (start, _, b) in itertools.pairwise(boxes):
        glue = reply[end:start]
        if a.strip() == b.strip() or not _HEDGE_GLUE.match(glue) or not re.search(r"\bor\b|/|maybe|possibly|perhaps",
                                                                             glue, re.IGNORECASE):
            continue
        ga = mv.parse("\\boxed{" + a + "}", fallback_mode="no_fallback", parsing_timeout=None)[:1]
        gb = mv.parse("\\boxed{" + b + "}", fallback_mode="no_fallback", parsing_timeout=None)[:1]
        if not (ga and gb and mv.verify(ga, gb, timeout_seconds=None)):
            return True
    return False
