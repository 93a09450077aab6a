"""The verifier contract: ``verifier(row) -> {"reward": 0..1 or None, "reason": str, ...}``, its base class and combinators.

The candidate is ``row["final_text"]`` (else the last assistant message); the answer comes from the constructor,
else ``field=`` (a dotted path), else ``row["privileged"]["reference"]``, else a flat reference field. A verifier
with nothing to check against returns ``reward=None`` and says so. When the answer came from the privileged
block, its spellings are redacted from the reason so the answer key never reaches a training export.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from whileai_core.defaults import (
    VERIFY_REASON_CHARS,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType, VerifierError
from whileai_core.grade.verify.answers import parse_number
from whileai_core.messages import reply_text
from whileai_core.rows import REFERENCE_FIELDS

__all__ = ["AllOf", "AnyOf", "Verifier", "VerifierError"]


Row = Mapping[str, Any]
_MISSING = object()


def _get_path(row: Any, path: str) -> Any:
    value = row
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


class Verifier:
    """Base class: subclasses implement ``check(candidate, reference, row)``.

    ``check`` returns a number in [0, 1], a bool, a ``(score, reason)`` pair, or None (nothing to check).
    Calling the verifier on a row returns the judge-contract dict.

    Args:
        field: read the reference from this row field instead of the row's reference.
        name: the verifier's name on the rows (default: its kind).

    Example:
        ```python
        class Even(wai.Verifier):
            def check(self, candidate, reference, row):
                return candidate.strip().isdigit() and int(candidate) % 2 == 0
        ```
    """

    kind = "rule"
    #: the attribute that holds a reference given at construction (``answer=``, ``pattern=``, ``schema=``...):
    #: when it is set, it wins over the row's reference (and is not privileged, so reasons may show it)
    fixed_reference: str | None = None

    def __init__(self, *, field: str | None = None, name: str | None = None) -> None:
        if field is not None and (not isinstance(field, str) or not field):
            raise InvalidArgument(f"field= must be a dotted path into the row such as 'privileged.reference'; got {field!r}")
        if name is not None and (not isinstance(name, str) or not name):
            raise InvalidArgument(f"name= must be a non-empty string; got {name!r}")
        self.field = field
        self.name: str = name or str(type(self).__name__)

    @property
    def __name__(self) -> str:  # so run_judge stamps judge_name
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    # the answer, and whether it came from the privileged block (then it is redacted from reasons)
    def reference(self, row: Row) -> tuple[Any, bool]:
        fixed = getattr(self, self.fixed_reference, None) if self.fixed_reference else None
        if fixed is not None:
            return fixed, False
        if self.field is not None:
            value = _get_path(row, self.field)
            return (None if value is _MISSING else value), self.field.startswith("privileged")
        priv = row.get("privileged")
        if isinstance(priv, Mapping) and priv.get("reference") is not None:
            return priv["reference"], True
        for f in REFERENCE_FIELDS:
            if row.get(f) is not None:
                return row[f], False
        for outer in ("info", "metadata", "privileged"):
            inner = row.get(outer)
            if isinstance(inner, Mapping):
                for f in REFERENCE_FIELDS:
                    if inner.get(f) is not None:
                        return inner[f], outer == "privileged"
        return None, False

    def check(self, candidate: str, reference: Any, row: Row) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__}.check(candidate, reference, row) is not implemented")

    def score(self, row: Row) -> dict[str, Any]:
        """The contract dict for one row, with the reason unredacted (internal; ``__call__`` redacts)."""
        ref, _ = self.reference(row)
        return self._finish(self.check(reply_text(row), ref, row))

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
            raise InvalidArgumentType(f"{self.name}.check returned {result!r}; return a number in [0, 1], a bool, "
                            "(score, reason) or None")
        reward: float | int = int(value) if value in (0.0, 1.0) else round(value, 6)
        if reason is None:
            reason = f"{self.name}: " + ("pass" if reward == 1 else "fail" if reward == 0 else f"{reward:.2f}")
        return {"reward": reward, "reason": reason, "verifier": self.name, **extra}

    def __call__(self, row: Row) -> dict[str, Any]:
        if not isinstance(row, Mapping):
            raise InvalidArgumentType(f"{self.name} takes a row dict; got {type(row).__name__}")
        ref, privileged = self.reference(row)
        try:
            out = self._finish(self.check(reply_text(row), ref, row))
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
            # a whole token only: not inside a longer word or number ("0" stays in "0.2 s" and "10")
            text = re.sub(rf"(?<![\w.]){re.escape(sp)}(?!\w|\.\d)", "<reference>", text)
        else:
            text = text.replace(sp, "<reference>")
    return text


# --------------------------------------------------------------------------------------------------
# Combinators
# --------------------------------------------------------------------------------------------------


class AllOf(Verifier):
    """Every part must pass: the minimum score, with the reason of the first worst part; None if any is None."""

    def __init__(self, parts: Sequence[Callable[[Row], Any]], *, name: str | None = None) -> None:
        super().__init__(name=name or "all_of")
        self.parts = list(parts)
        if not self.parts or not all(callable(p) for p in self.parts):
            raise InvalidArgument("parts= must be a non-empty list of verifiers (callables row -> verdict)")

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
        best = max(range(len(scores)), key=lambda i: scores[i][0])
        return {**self._finish((scores[best][0], scores[best][1] or None)), "scorer_kind": self.kind}




class Weighted(AllOf):
    """The weighted mean of the parts' scores, rounded to 4 places (the SDK's ``Weighted``); None if any part is.

    ``parts``: ``[(verifier, weight), ...]`` with non-negative weights that do not all sum to 0.
    """

    def __init__(self, parts: Sequence[tuple[Callable[[Row], Any], float]], *, name: str | None = None) -> None:
        pairs = list(parts)
        if not pairs or not all(isinstance(p, tuple) and len(p) == 2 for p in pairs):
            raise InvalidArgument("Weighted takes [(verifier, weight), ...]: a non-empty list of pairs")
        weights = [float(w) for _, w in pairs]
        if any(w < 0 or not math.isfinite(w) for w in weights) or sum(weights) <= 0:
            raise InvalidArgument(f"Weighted needs finite weights >= 0 that do not sum to 0; got {weights}")
        super().__init__([v for v, _ in pairs], name=name or "weighted")
        self.weights = weights

    def __call__(self, row: Row) -> dict[str, Any]:
        scores = self._scores(row)
        if any(s is None for s, _ in scores):
            reason = next(r for s, r in scores if s is None)
            return {"reward": None, "reason": reason or f"{self.name}: a part could not check", "verifier": self.name}
        mean = sum(w * s for w, (s, _) in zip(self.weights, scores, strict=True)) / sum(self.weights)  # type: ignore[operator, misc]
        return {**self._finish(round(mean, 4)), "scorer_kind": self.kind}
