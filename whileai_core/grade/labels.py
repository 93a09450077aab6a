"""Gold labels for a judge: the key a label is matched by (``row_label_key``), how many labels settle a bound
(``labels_needed``), and ``attach_labels(rows, labels, kind="human")``, which writes ``gold_reward``,
``gold_labels`` and ``gold_kind``; with the small tests the judge checks share (Wilson lower bound, sign test,
two-proportion z test).
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import math
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from statistics import NormalDist
from typing import Any

import numpy as np

from whileai_core.defaults import (
    CI_LEVEL,
    JUDGE_LABEL_SEARCH_MAX,
    PROBE_RESOLVE_GRID,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.measure.stats import wilson_interval
from whileai_core.models import http
from whileai_core.rowlist import RowList
from whileai_core.rows import as_number, as_rows, read_jsonl

__all__ = ["attach_labels", "labels_needed", "row_label_key"]

Row = Mapping[str, Any]
Judge = Callable[[Row], Any]

_NORMAL = NormalDist()


def row_label_key(row: Row) -> str:
    """The key a label is matched on: ``row_id``, else ``rollout_id``, else ``task#rollout_index``, else a
    hash of prompt and reply."""
    for f in ("row_id", "rollout_id"):
        if row.get(f) not in (None, ""):
            return str(row[f])
    tid = row.get("task_id") or row.get("scenario_id")
    if tid not in (None, "") and row.get("rollout_index") is not None:
        return f"{tid}#{row['rollout_index']}"
    blob = f"{row.get('prompt', '')}\x1f{row.get('final_text', '')}".encode()
    return hashlib.sha1(blob).hexdigest()[:16]


def _binary(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    return None


async def _awaited(value: Awaitable[Any]) -> Any:
    """Any awaitable as a coroutine (the shared loop runs coroutines; a judge may return a future or a task)."""
    return await value


def _judge_reward(judge: Judge, row: Row) -> float | None:
    """Call the judge and read its reward under the contract; None when it fails or returns no reward."""
    try:
        out = judge(row)
        if inspect.isawaitable(out):  # an ``async def`` judge: its verdict, awaited on the shared HTTP loop
            out = http.run_sync(_awaited(out))
    except Exception:  # noqa: BLE001 - a judge that raises on a probe counts as an error there, not a verdict
        return None
    if isinstance(out, Mapping):
        out = out.get("reward", out.get("score"))
    value = as_number(out)  # numpy numbers and np.bool_ count, as in grading
    if value is not None and math.isfinite(value) and 0 <= value <= 1:
        return value
    return None


def _wilson_lower(k: np.ndarray, n: np.ndarray, level: float) -> np.ndarray:
    """Vectorised Wilson lower bound (same closed form as stats.wilson_interval)."""
    z = _NORMAL.inv_cdf(0.5 + level / 2)
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return np.where(k == 0, 0.0, np.maximum(0.0, center - half))


def _rate_ci(k: int, n: int, level: float) -> str:
    """``"90% [79%..95%] (n=40)"``: a share with its Wilson interval and n (``"n/a (n=0)"`` without items)."""
    ci = wilson_interval(k, n, level=level)
    return f"n/a (n={n})" if ci is None else f"{k / n:.0%} [{ci[0]:.0%}..{ci[1]:.0%}] (n={n})"


def labels_needed(agreement: float, floor: float, *, level: float = CI_LEVEL,
                  search_max: int = JUDGE_LABEL_SEARCH_MAX) -> int | None:
    """The smallest label count at which a judge agreeing at this rate has a Wilson lower bound >= ``floor``
    (None when no count up to ``search_max`` gets there, e.g. when the rate itself is at or below the floor)."""
    if agreement <= floor:
        return None
    n = np.arange(1, search_max + 1, dtype=float)
    k = np.round(agreement * n)
    ok = np.flatnonzero(_wilson_lower(k, n, level) >= floor)
    return int(n[ok[0]]) if len(ok) else None


def _sign_test_p(up: int, down: int) -> float:
    """Exact two-sided sign test p-value for up vs down flips (binomial, p = 1/2)."""
    n = up + down
    if n == 0:
        return 1.0
    k = min(up, down)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def _two_prop_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided pooled two-proportion z test p-value."""
    if n1 == 0 or n2 == 0:
        return 1.0
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    z = (k1 / n1 - k2 / n2) / se
    return 2 * (1 - _NORMAL.cdf(abs(z)))


def _resolves(n: int, p0: float, power: float, alpha: float) -> float | None:
    """Smallest true rate (on a PROBE_RESOLVE_GRID grid) a one-sided one-proportion z test at n detects vs p0."""
    if n <= 0:
        return None
    za = _NORMAL.inv_cdf(1 - alpha)
    for r in np.arange(p0 + PROBE_RESOLVE_GRID, 1.0, PROBE_RESOLVE_GRID):
        crit = p0 + za * math.sqrt(p0 * (1 - p0) / n)
        pw = 1 - _NORMAL.cdf((crit - r) / math.sqrt(r * (1 - r) / n))
        if pw >= power:
            return round(float(r), 2)
    return None



def _label_value(v: Any) -> list[int]:
    values = v if isinstance(v, (list, tuple)) else [v]
    out = []
    for x in values:
        b = _binary(x)
        if b is None:
            raise InvalidArgument(f"a label must be 0/1 (or True/False); got {x!r}")
        out.append(b)
    return out


def attach_labels(rows: Any, labels: Any, *, kind: str = "human") -> RowList:
    """Copies of ``rows`` with gold labels attached: ``gold_labels`` (all labels for the row), ``gold_reward``
    (their majority; None on a tie) and ``gold_kind``.

    ``labels`` is ``{key: 0/1 or [0/1, ...]}``, a list of dicts (``row_id``/``rollout_id``/``task_id`` +
    ``rollout_index``/``prompt`` + ``final_text`` to match, and ``label``/``gold_reward``/``reward``), or a
    JSONL path of such dicts. Keys are ``row_label_key(row)``. The input rows are not modified.

    Args:
        rows: row dicts, a JSONL path, or an object with ``.rows``.
        labels: ``{row key: 0/1 or [0/1, ...]}``, a list of label dicts, or a JSONL path of them.
        kind: who labeled: ``"human"``, ``"program"`` or a model name (``judge_trust`` trusts the first two).

    Returns:
        A ``RowList`` of copies with ``gold_labels``, ``gold_reward`` and ``gold_kind``.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix.
        InvalidArgumentType: an argument of the wrong type (a ``TypeError``); the message names it.

    Example:
        ```python
        labeled = wai.attach_labels(scored.rows, {"sc-1#0": 1, "sc-1#1": 0})
        print(wai.judge_trust(labeled))
        ```
    """
    if not isinstance(kind, str) or not kind:
        raise InvalidArgument(f"kind= must name who labeled, e.g. 'human' or 'program'; got {kind!r}")
    data = as_rows(rows, name="rows")
    if isinstance(labels, (str, os.PathLike)):
        labels = read_jsonl(labels)
    if labels is None or not isinstance(labels, (Mapping, Iterable)) or isinstance(labels, bytes):
        raise InvalidArgumentType(f"labels= takes {{row key: 0/1}}, a list of label dicts, or a JSONL path; got "
                        f"{type(labels).__name__}")
    table: dict[str, list[int]] = {}
    if isinstance(labels, Mapping):
        for k, v in labels.items():
            table.setdefault(str(k), []).extend(_label_value(v))
    else:
        for i, item in enumerate(labels):
            if not isinstance(item, Mapping):
                raise InvalidArgumentType(f"labels[{i}] is {type(item).__name__}; give dicts or a {{key: label}} dict")
            value = next((item[f] for f in ("label", "gold_reward", "gold", "reward") if f in item), None)
            if value is None:
                raise InvalidArgument(f"labels[{i}] has no 'label' (or gold_reward/gold/reward) field")
            table.setdefault(row_label_key(item), []).extend(_label_value(value))
    out = RowList()
    matched = 0
    for row in data:
        new = copy.deepcopy(dict(row))
        got = table.get(row_label_key(row))
        if got:
            matched += 1
            ones = sum(got)
            new["gold_labels"] = list(got)
            new["gold_reward"] = 1 if 2 * ones > len(got) else 0 if 2 * ones < len(got) else None
            new["gold_kind"] = kind
        out.append(new)
    if table and not matched:
        example = next(iter(table))
        raise InvalidArgument(f"none of the {len(table)} labels matched a row: label keys look like {example!r}, row keys "
                         f"like {row_label_key(data[0])!r}" if data else "rows= is empty")
    for attr in ("system_prompt", "tools"):
        value = getattr(rows, attr, None)
        if value is not None and not callable(value):
            setattr(out, attr, value)
    return out
