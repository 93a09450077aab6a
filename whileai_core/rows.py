"""Rows: the one record every loop step reads and writes (schema in docs/rows.md).

A row is a plain JSON-serializable dict. This module owns the schema version, the task key,
the privileged-field scrub, JSONL reading and atomic writing (``RowList`` lives one floor up, in rowlist.py).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import math
import numbers
import os
import tempfile
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, TypedDict, TypeGuard, TypeVar, cast

from whileai_core.defaults import ROW_SCHEMA_VERSION, UNIFORM_MEMO
from whileai_core.errors import InvalidArgument, InvalidArgumentType

#: the working type of a row: a plain dict, since a row also carries keys of its own (``agent_extra``, a
#: caller's fields); ``RowFields`` names the schema's fields and their types (docs/rows.md)
Row = dict[str, Any]


class ToolStep(TypedDict, total=False):
    """A tool call in ``steps``: ``tool``, ``arguments``, ``result``; ``text`` (the turn's assistant text) and
    ``turn`` (the assistant turn that asked for it, shared by parallel calls) when there are."""

    tool: str
    arguments: dict[str, Any]
    result: Any
    text: str
    turn: int | None


class TextStep(TypedDict):
    """An assistant aside in ``steps``."""

    text: str


class UserStep(TypedDict):
    """A simulated user's reply in ``steps``."""

    user: str


#: one entry of a row's ``steps``
Step = ToolStep | TextStep | UserStep
#: a rollout's ``status`` (docs/rows.md, "The rollout")
RowStatus = Literal["ok", "agent_error", "infra_error"]
#: a graded row's ``judge_status`` (docs/rows.md, "After grading")
JudgeStatus = Literal["ok", "error", "invalid_result", "missing_reward", "abstained", "skipped_infra_error"]


class RowFields(TypedDict, total=False):
    """The row schema's fields (docs/rows.md), by section. Every field is optional here: rows from your own
    data or traces carry a subset, and simulate's rows gain the grading fields only when graded."""

    # identity and grouping
    schema_version: str
    row_id: str
    task_id: str | int  # one type per task id (``TaskKeyTypes``)
    scenario_id: str
    rollout_index: int
    # the situation
    prompt: str
    system_prompt: str | None
    scenario: dict[str, Any]
    world_state: str
    stance: str
    faults: dict[str, Any]
    privileged: dict[str, Any]  # the judge's only: scrubbed from every export (``scrub``)
    # the rollout
    steps: list[Step]
    final_text: str
    messages: list[dict[str, Any]]
    loss_mask: list[int]
    seeded: bool
    seeded_what: str | None
    status: RowStatus
    error: str | None
    finish_reason: str  # stop | error | length | tool, or what the agent returned as its finish_reason
    agent_extra: dict[str, Any]
    faults_scheduled: int
    faults_delivered: int
    latency_s: float
    # after grading
    reward: float | None
    reason: str | None
    markers: dict[str, float | None]
    judge_name: str
    judge_status: JudgeStatus
    judge_error: str | None
    judge_meta: dict[str, Any]
    failure_class: str
    # lineage, and rows from production traces
    lineage: dict[str, Any]
    usage: dict[str, Any] | None
    model: str | None
    trace_id: str | None
    conversation_id: str | None
    response_ids: list[str]


def as_row(fields: RowFields) -> Row:
    """The working dict of a row built as ``RowFields`` (the same object): a producer builds its row as
    ``RowFields``, so a type checker checks each documented key and its type, and hands it on as a ``Row``,
    which also takes keys of its own (``agent_extra``'s, a caller's). Static only: nothing is copied."""
    return cast(Row, fields)


#: a row of any mapping type: what a function that keeps its rows' objects gives back (``group_rows``)
RowT = TypeVar("RowT", bound=Mapping[str, Any])

#: fields the judge may read but the policy never sees; scrubbed from every export.
PRIVILEGED_FIELDS = ("privileged",)
#: flat fields that hold a row's answer key, in the order a verifier reads them (after privileged.reference)
REFERENCE_FIELDS = ("reference", "answer", "target", "solution", "label", "expected")


@functools.lru_cache(maxsize=16)
def json_encoder(*, ensure_ascii: bool = True, sort_keys: bool = False,
                 default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
    """``lambda obj: json.dumps(obj, ensure_ascii=..., sort_keys=..., default=...)``, the same text byte for byte,
    with its C encoder built once (``json.dumps`` builds a ``JSONEncoder`` and a C encoder on each call: most of
    the cost of encoding a small dict, several per rollout).

    The reused C encoder is the one ``JSONEncoder.iterencode`` builds (``json.encoder.c_make_encoder``, default
    separators, no indent), without the circular-reference markers (a dict shared by threads would look
    circular to a second one): whatever it refuses or cannot finish (a cycle runs into ``RecursionError``, an
    object ``default`` rejects, NaN under ``allow_nan``) is encoded again by ``json.JSONEncoder``, which raises
    ``json.dumps``'s own error. Without the C encoder (another Python), the ``JSONEncoder``'s ``encode``.

    Args:
        ensure_ascii: escape non-ASCII as ``\\uXXXX`` (``json.dumps``'s default).
        sort_keys: sort the keys of every dict.
        default: called on an object JSON has no form for (None: ``TypeError``).

    Returns:
        ``encode(obj) -> str``.

    Example:
        >>> json_encoder(sort_keys=True)({"b": 1, "a": [1.5, None, "é"]})
        '{"a": [1.5, null, "\\u00e9"], "b": 1}'
    """
    slow = json.JSONEncoder(ensure_ascii=ensure_ascii, sort_keys=sort_keys, default=default).encode
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has the C accelerator
        return slow
    strings = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring  # as iterencode
    fast = make(None, default if default is not None else _refuse, strings, None, ": ", ", ", sort_keys,
                False, True)

    def encode(obj: Any) -> str:
        try:
            return "".join(fast(obj, 0))
        except (TypeError, ValueError, RecursionError):
            pass  # encoded again below, outside this handler: json.dumps's own error, raised as it raises it
        return slow(obj)

    encode.__doc__ = f"json.dumps(obj, ensure_ascii={ensure_ascii}, sort_keys={sort_keys}, default={default!r})"
    return encode


def _refuse(obj: Any) -> Any:
    """The C encoder's ``default`` when none is given: refuse, as ``JSONEncoder.default`` does."""
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


#: ``json.dumps(x, sort_keys=True, default=str)`` with its encoder built once (ids and uniforms, per rollout)
_sorted_json = json_encoder(sort_keys=True, default=str)


def is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)`` with a plain dict answered first (the ABC check costs ~0.3 us a call)."""
    kind = type(value)
    return kind is dict or (kind is not type(None) and isinstance(value, Mapping))


def mapping_field(row: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``row[key]`` when it is a mapping (``lineage``, ``judge_meta``, ``markers``...), else a new empty dict."""
    value = row.get(key)
    return value if is_mapping(value) else {}


def task_key(row: Mapping[str, Any]) -> str:
    """The grouping key: ``task_id``, else ``scenario_id``, else the prompt."""
    return task_key_field(row)[0]


def task_key_field(row: Mapping[str, Any]) -> tuple[str, str, Any]:
    """The grouping key, the field it came from and that field's raw value (for ``TaskKeyTypes``)."""
    for field in ("task_id", "scenario_id"):
        value = row.get(field)
        if value is not None and value != "":
            return (value if type(value) is str else str(value)), field, value
    prompt = row.get("prompt")
    if prompt in (None, ""):
        keys = sorted(map(str, row))[:12]
        alias = next((k for k in ("id", "task", "question_id", "problem_id", "example_id") if k in row), None)
        hint = f" (it has {alias!r}: rename it task_id)" if alias else ""
        raise InvalidArgument(f"row has no task_id, scenario_id or prompt{hint}; its keys are {keys}; give each row a "
                         "task_id so it can be grouped")
    return str(prompt), "prompt", prompt


def reward_field_hint(rows: Iterable[Mapping[str, Any]]) -> str | None:
    """A hint when rows from another tool carry their grade under ``score`` (or another name) but no ``reward``."""
    seen = 0
    aliased: dict[str, int] = {}
    for row in rows:
        seen += 1
        if row.get("reward") is not None:
            return None
        for name in ("score", "label", "passed", "correct", "grade"):
            if row.get(name) is not None:
                aliased[name] = aliased.get(name, 0) + 1
                break
    if not seen or not aliased:
        return None
    name, count = max(aliased.items(), key=lambda kv: kv[1])
    return (f"no row has a 'reward', but {count} of {seen} carry {name!r}: whileai reads the grade from 'reward' "
            f"(0 or 1, or None); rename it, e.g. [dict(r, reward=r[{name!r}]) for r in rows]")


def as_number(value: Any) -> float | None:
    """A judge's number as a float (bools, ints, floats, numpy scalars); inf for an int past float range; else None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an int past float range (10**400): out of [0, 1], reported as such, never a crash
            return math.inf
    try:
        import numpy as np

        if isinstance(value, np.generic) and (np.issubdtype(type(value), np.number) or isinstance(value, np.bool_)):
            return float(value)  # np.bool_ too: a judge written with numpy comparisons returns one
    except ImportError:  # pragma: no cover
        pass
    return None


def reward_of(row: Mapping[str, Any]) -> float | None:
    """The row's reward as a float when it is a finite number in [0, 1] (a bool counts as 0/1), else None."""
    value = row.get("reward")
    if isinstance(value, bool):
        return float(value)
    # numpy numbers count; the cast only tells mypy that a Real compares like a float (typeshed's Real lacks __ge__)
    if isinstance(value, numbers.Real) and value == value and 0.0 <= cast(float, value) <= 1.0:
        return float(value)
    return None


def binary_reward(row: Mapping[str, Any]) -> int | None:
    """The row's reward when it is exactly 0 or 1 (bools excluded, as pass rates need real labels), else None."""
    value = row.get("reward")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):  # numpy ints and floats count
        return None
    return int(float(value)) if value in (0, 1) else None


def stable_id(*parts: Any, length: int = 10) -> str:
    """A short hex id from JSON-encoded parts (same parts -> same id on every machine)."""
    blob = _sorted_json(parts).encode()
    return hashlib.sha256(blob).hexdigest()[:length]


def rollout_row(prompt: str, final_text: str, *, messages: list[dict[str, Any]], steps: list[dict[str, Any]] | None = None,
                task_id: str | None = None, rollout_index: int = 0, **fields: Any) -> Row:
    """One row of the schema (docs/rows.md) for a rollout that already happened (a log, a benchmark, a trace):
    ``task_id`` defaults to ``"t-"`` + a hash of the prompt, so the same prompt groups the same way everywhere."""
    tid = task_id if task_id is not None else "t-" + stable_id(prompt)
    typed: RowFields = {"schema_version": ROW_SCHEMA_VERSION, "row_id": f"{tid}#{rollout_index}", "task_id": tid,
                        "rollout_index": rollout_index, "prompt": prompt, "messages": messages,
                        "steps": cast(list[Step], list(steps or [])), "final_text": final_text, "seeded": False,
                        "status": "ok"}
    row = as_row(typed)
    row.update(fields)
    return row


def group_rows(rows: Iterable[RowT]) -> dict[str, list[RowT]]:
    """Rows grouped by task key, groups and members in first-seen order.

    A task id that appears as two types (``1`` and ``"1"``) is an error (``TaskKeyTypes``), not one task.
    """
    groups: dict[str, list[RowT]] = {}
    types = TaskKeyTypes()
    for i, row in enumerate(rows):
        try:
            key = task_key(row)
        except ValueError as exc:
            raise InvalidArgument(f"rows[{i}]: {exc}") from None
        types.check(key, row, i)
        groups.setdefault(key, []).append(row)
    return groups


class TaskKeyTypes:
    """Refuses a task id seen as two types: ``task_id`` 1 (int) and "1" (str) print alike but are different ids,
    and grouping by ``str()`` would silently merge two tasks. The fix is one type for every row's id."""

    def __init__(self, name: str = "rows") -> None:
        self.name = name
        self.first: dict[str, tuple[int, str, Any]] = {}

    def check(self, key: str, row: Mapping[str, Any], index: int) -> None:
        _, field, raw = task_key_field(row)
        self.check_raw(key, field, raw, index)

    def check_raw(self, key: str, field: str, raw: Any, index: int) -> None:
        """``check`` given what ``task_key_field`` returned (rows walked once)."""
        seen = self.first.setdefault(key, (index, field, raw))
        if type(seen[2]) is not type(raw):
            raise InvalidArgument(
                f"{self.name}[{seen[0]}] has {seen[1]} {seen[2]!r} ({type(seen[2]).__name__}) and {self.name}[{index}] "
                f"has {field} {raw!r} ({type(raw).__name__}): two different ids that print alike, so whileai will not "
                f"merge them into one task. Give every row's {field} one type, e.g. str({field})")


def unique_rows(rows: Sequence[Mapping[str, Any]], *, name: str = "rows", dedupe: bool = False,
                keys: Sequence[str] | None = None) -> tuple[list[Any], int]:
    """The rows with each rollout once, and how many repeats were dropped.

    A rollout is identified by ``row_id``, and also by (task key, ``rollout_index``) when the row has one;
    docs/rows.md requires both to be unique. A repeat (the same run appended twice) would inflate k and bias
    pass^k, so it is an error naming the first repeat, unless ``dedupe=True``: then later repeats are dropped
    (the first copy kept) and counted. Rows with neither field cannot be checked and are kept. ``keys``: the
    rows' task keys when the caller has them (rows walked once).
    """
    seen_id: dict[Any, int] = {}
    seen_slot: dict[tuple[str, Any], int] = {}
    kept: list[Any] = []
    dropped = 0
    for i, row in enumerate(rows):
        rid = row.get("row_id")
        if rid is not None and type(rid) is not str and not isinstance(rid, Hashable):
            rid = json.dumps(rid, sort_keys=True, default=str)
        index = row.get("rollout_index")
        if index is not None and type(index) is not int and not isinstance(index, Hashable):
            index = repr(index)
        slot = ((task_key(row) if keys is None else keys[i]), index) if index is not None else None
        first = seen_id.get(rid) if rid is not None else None
        what = f"row_id {rid!r}"
        if first is None and slot is not None and slot in seen_slot:
            first, what = seen_slot[slot], f"task {slot[0]!r} rollout_index {index!r}"
        if first is not None:
            if not dedupe:
                raise InvalidArgument(
                    f"{name}[{i}] repeats {name}[{first}] ({what}): each rollout must appear once (docs/rows.md); "
                    f"the same run appended twice inflates k and biases pass^k. Drop the repeats, or pass "
                    f"dedupe=True to drop them and count them")
            dropped += 1
            continue
        if rid is not None:
            seen_id[rid] = i
        if slot is not None:
            seen_slot[slot] = i
        kept.append(row)
    return kept, dropped


def scrub(row: Mapping[str, Any]) -> Row:
    """A deep copy of the row without privileged fields (what leaves the machine or reaches a trainer)."""
    return {k: copy.deepcopy(v) for k, v in row.items() if k not in PRIVILEGED_FIELDS}


def as_rows(source: Any, *, name: str = "rows", check: bool = True, copy: bool = True) -> list[Row]:
    """Accept a container with ``.rows``, a list of dicts, or a JSONL path; return a list of dicts.

    ``check=False`` skips the per-row type check (the caller checks with ``check_rows`` before it trusts a row);
    ``copy=False`` returns a given list itself rather than a copy (the caller does not edit it)."""
    if isinstance(source, (str, os.PathLike)):
        return read_jsonl(source)
    inner = getattr(source, "rows", None)
    if inner is not None and not callable(inner):
        source = inner
    elif callable(inner) and not isinstance(source, list):
        source = inner()
    if isinstance(source, Mapping):
        raise InvalidArgumentType(f"{name}= takes a list of row dicts, a JSONL path, or a run object; got a single dict")
    try:
        rows = source if not copy and type(source) is list else list(source)
    except TypeError:
        raise InvalidArgumentType(
            f"{name}= takes a list of row dicts, a JSONL path, or a run object; got {type(source).__name__}"
        ) from None
    if check:
        check_rows(rows, name)
    return rows


def check_rows(rows: list[Any], name: str = "rows") -> None:
    """Raise ``InvalidArgumentType`` naming the first row that is not a Mapping (``as_rows``' check)."""
    if not set(map(type, rows)) <= {dict}:  # plain dicts (nearly every run) pass without a check per row
        for i, row in enumerate(rows):
            if type(row) is not dict and not isinstance(row, Mapping):
                raise InvalidArgumentType(f"{name}[{i}] is {type(row).__name__}, not a row dict")


_LEAVES = frozenset({str, int, bool, type(None)})  # json_safe returns these exact types as they are
_PLAIN = _LEAVES | {float}  # the exact types opaque finds nothing in


def json_safe(value: Any) -> Any:
    """A JSON-serializable copy of a value: containers are walked; a ``datetime``/``date``/``time`` becomes its
    ``isoformat()``, an ``Enum`` its value, a ``UUID``/``Decimal``/path its ``str``, a dataclass its fields, an
    array or numpy scalar its ``tolist()``; any other object becomes its repr (``opaque`` names such objects)."""
    kind = type(value)
    if kind in _LEAVES:  # the common leaves, without isinstance
        return value
    if kind is dict:  # a plain dict (nearly every row's): its leaves kept without a call each
        return {k if type(k) is str else str(k): v if type(v) in _LEAVES else json_safe(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _LEAVES else json_safe(v) for v in value]
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    converted = _json_form(value)
    return repr(value) if converted is _NO_FORM else json_safe(converted)


_NO_FORM = object()


def _json_form(value: Any) -> Any:
    """The documented JSON form of a non-container object (see ``json_safe``), else ``_NO_FORM``."""
    import dataclasses
    import datetime
    import decimal
    import enum
    import uuid
    from pathlib import PurePath

    if isinstance(value, (datetime.date, datetime.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (uuid.UUID, decimal.Decimal, PurePath)):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if callable(getattr(value, "tolist", None)) and type(value).__module__.startswith("numpy"):
        return value.tolist()
    return _NO_FORM


def opaque(value: Any, _depth: int = 0) -> str | None:
    """The type name of the first object in ``value`` that ``json_safe`` can only keep as its repr (an
    ``object()``, a class instance without a JSON form), else None."""
    if type(value) in _LEAVES or isinstance(value, (str, int, float)) or _depth > 32:
        return None
    if type(value) is dict:  # the common result: a plain dict, its plain leaves passed without a call each
        return next((o for o in (opaque(v, _depth + 1) for v in value.values() if type(v) not in _PLAIN) if o), None)
    if isinstance(value, Mapping):
        return next((o for o in (opaque(v, _depth + 1) for v in value.values()) if o), None)
    if isinstance(value, (list, tuple, set, frozenset)):
        return next((o for o in (opaque(v, _depth + 1) for v in value) if o), None)
    converted = _json_form(value)
    return type(value).__name__ if converted is _NO_FORM else opaque(converted, _depth + 1)


def read_jsonl(path: str | os.PathLike[str]) -> list[Row]:
    """Read rows from a JSONL file; a bad line is an error naming the file and line number."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidArgumentType(f"a rows file is a path (str or Path); got {type(path).__name__}")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such rows file: {p}")
    if p.is_dir():
        raise IsADirectoryError(f"{p} is a directory; pass the JSONL file inside it")
    rows: list[Row] = []
    with p.open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno == 1 and raw[:2] == b"\x1f\x8b":
                raise InvalidArgument(f"{p} is gzip-compressed; decompress it first (gunzip {p.name}) and pass the "
                                 ".jsonl file")
            try:  # utf-8-sig on line 1: a byte-order mark (Windows editors) is not a bad line
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidArgument(f"{p}:{lineno}: not UTF-8 text ({exc.reason} at byte {exc.start} of the line); "
                                 "rows files are UTF-8 JSONL") from None
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidArgument(f"{p}:{lineno}: not valid JSON ({exc.msg}); fix or remove that line") from None
            if not isinstance(value, dict):
                raise InvalidArgument(f"{p}:{lineno}: a row must be a JSON object, got {type(value).__name__}")
            rows.append(value)
    return rows


def atomic_write_text(path: str | os.PathLike[str], text: str, *, overwrite: bool = False) -> Path:
    """Write text to ``path`` through a unique temp file beside it, so a crash never leaves half a file and
    concurrent writers never share a temp file.

    ``overwrite=True`` replaces ``path`` atomically (``os.replace``; the last writer wins, whole). Without it
    the file is claimed atomically (``os.link`` of the finished temp file, which fails if ``path`` exists):
    of two writers racing for one name exactly one succeeds, the other gets ``FileExistsError``.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidArgumentType(f"path= must be a file path (str or Path); got {type(path).__name__}")
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{p} is a directory; pass a file path inside it, e.g. {p / 'rows.jsonl'}")
    if p.exists() and not overwrite:
        raise FileExistsError(f"{p} exists; pass overwrite=True to replace it, or choose another path")
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, p)
        else:
            _claim(tmp, p)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass  # already renamed into place
    return p


def _claim(tmp: str, p: Path) -> None:
    """Put the finished ``tmp`` at ``p`` only if ``p`` does not exist, atomically."""
    try:
        os.link(tmp, p)
    except FileExistsError:
        raise FileExistsError(f"{p} exists; pass overwrite=True to replace it, or choose another path") from None
    except OSError:  # a file system without hard links: claim the name exclusively, then fill it by rename
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY))  # raises FileExistsError if taken
        os.replace(tmp, p)


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]], *, overwrite: bool = False) -> Path:
    """Write rows as JSONL, atomically (see ``atomic_write_text``)."""
    return atomic_write_text(path, jsonl_text(rows), overwrite=overwrite)


def jsonl_text(rows: Iterable[Mapping[str, Any]]) -> str:
    """Rows as JSONL text, one object a line; NaN, infinity and unserializable values are errors naming the row."""
    lines = []
    for i, row in enumerate(rows):
        try:  # NaN/Infinity are not JSON: a reader in another language would refuse the file
            line = json.dumps(row, ensure_ascii=False, sort_keys=False, allow_nan=False)
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate (badly decoded bytes): \u-escape it, keep it exactly
                line = json.dumps(row, ensure_ascii=True, sort_keys=False, allow_nan=False)
            lines.append(line)
        except ValueError:
            bad = sorted(str(k) for k, v in row.items() if isinstance(v, float) and not math.isfinite(v))
            raise InvalidArgument(f"row {i} holds NaN or infinity (fields {bad or 'nested'}), which JSON cannot carry; "
                             "write None for a missing number") from None
        except TypeError as exc:
            raise InvalidArgumentType(f"row {i} is not JSON-serializable ({exc}); keep rows to str, numbers, bool, None, "
                            "lists and dicts (rows.json_safe converts the rest)") from None
    return "".join(line + "\n" for line in lines)


def uniform(*parts: Any, memo: int = UNIFORM_MEMO) -> float:
    """A deterministic uniform in [0, 1) from JSON-encoded parts (sha256).

    Parts that are all ``str``, ``int`` or None (what a world's draw is made of) are remembered, up to ``memo``
    of them (then the memo starts again): the same parts give the same float without hashing again. Other parts
    (a bool, which equals an int; a float, whose -0.0 equals 0.0; containers) are hashed each time."""
    key: Any = parts
    for part in parts:
        if type(part) not in _MEMO_PARTS:
            key = None
            break
    if key is not None:
        found = _uniforms.get(key)
        if found is not None:
            return found
    blob = _sorted_json(parts).encode()
    value = int(hashlib.sha256(blob).hexdigest()[:12], 16) / float(16**12)
    if key is not None and memo > 0:
        if len(_uniforms) >= memo:
            _uniforms.clear()
        _uniforms[key] = value
    return value


#: the part types whose equality is their JSON's: (1, "a") == (1, "a") only when both encode the same
_MEMO_PARTS = frozenset({str, int, type(None)})
_uniforms: dict[tuple[Any, ...], float] = {}


class ReportMapping(Mapping[str, Any]):
    """The one base of every report object: it also reads as a read-only mapping with the SDK's keys.

    ``rep["regime"]``, ``rep.get("tau")``, ``dict(rep)``, ``"ok" in rep`` work as on the SDK's report dicts, while
    attribute access stays ours. A key resolves, first hit wins: ``SDK_KEYS`` (the SDK's name -> our attribute
    name, or a function of the report), then ``to_dict()``'s keys where the report has one, then its dataclass
    fields. Item assignment raises ``TypeError`` (the report is a result, not a row to edit).
    """

    SDK_KEYS: ClassVar[Mapping[str, str | Callable[[Any], Any]]] = {}

    def report_keys(self) -> list[str]:
        """Every key, in order: the SDK's, then ``to_dict()``'s, then the fields."""
        keys = dict.fromkeys(self.SDK_KEYS)
        to_dict = getattr(self, "to_dict", None)
        if callable(to_dict):
            keys.update(dict.fromkeys(to_dict()))
        if dataclasses.is_dataclass(self):
            keys.update(dict.fromkeys(f.name for f in dataclasses.fields(self)))
        return list(keys)

    def __getitem__(self, key: str) -> Any:
        how = self.SDK_KEYS.get(key) if isinstance(key, str) else None
        if how is not None:
            return how(self) if callable(how) else getattr(self, how)
        to_dict = getattr(self, "to_dict", None)
        if callable(to_dict) and key in (as_dict := to_dict()):
            return as_dict[key]
        if dataclasses.is_dataclass(self) and key in {f.name for f in dataclasses.fields(self)}:
            return getattr(self, key)
        raise KeyError(f"{key!r} is not a key of {type(self).__name__}; its keys: {', '.join(self.report_keys())}")

    def __iter__(self) -> Iterator[str]:
        return iter(self.report_keys())

    def __len__(self) -> int:
        return len(self.report_keys())

    def __contains__(self, key: object) -> bool:
        return key in self.report_keys()

    def keys(self) -> list[str]:  # type: ignore[override]  # a list, so a report whose __iter__ unpacks still lists keys
        return self.report_keys()

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [(k, self[k]) for k in self.report_keys()]

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[k] for k in self.report_keys()]

    def __setitem__(self, key: str, value: Any) -> None:
        raise TypeError(f"{type(self).__name__} is read-only: set attributes on a copy "
                        f"(dataclasses.replace) or build a dict with dict(report)")
