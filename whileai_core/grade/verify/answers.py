"""Reading an answer out of text: the boxed/"answer:" line, LaTeX-ish fractions, numbers and plain arithmetic."""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from whileai_core.defaults import (
    MATH_MAX_BASE,
    MATH_MAX_EXPONENT,
)
from whileai_core.errors import InvalidArgument
from whileai_core.grade.verify.codetext import parse_expression

__all__ = ["extract_answer", "parse_number"]


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
                raise InvalidArgument("exponent too large")
            return float(a ** b)
        op = _ALLOWED_BIN.get(type(node.op))
        if op is None:
            raise InvalidArgument("operator not allowed")
        return float(op(a, b))
    if isinstance(node, ast.Name) and node.id in ("pi", "e"):
        return math.pi if node.id == "pi" else math.e
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt" and len(node.args) == 1:
        return math.sqrt(_eval(node.args[0]))
    raise InvalidArgument("not arithmetic")


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\s*/\s*-?\d+(?:\.\d+)?)?")


def parse_number(text: Any) -> float | list[float] | None:
    """A number (or a tuple of numbers) from an answer string: ``1,000``, ``3/4``, ``\\frac{3}{4}``, ``50%``,
    ``2\\sqrt{2}``, ``1.5e3``. Falls back to the last number in the text; None when there is none."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        try:
            value = float(text)
        except OverflowError:  # an int beyond float range (10**400): no number this reader can compare
            return None
        return value if math.isfinite(value) else None
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
        value = _eval(parse_expression(expr.strip()))
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError):
        return None
    return value if math.isfinite(value) else None


