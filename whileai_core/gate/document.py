"""The versioned run document (``schema: "whileai.run/1"``): build, check, read and write one, and say whether
two can be compared.

A run document holds the whileai version, commit and machine info, the run info and its fingerprint, the gate
settings, and one entry per scenario with every trial's reward. The pytest plugin writes one per session
(``pytest_whileai.gate.store`` keeps them on disk); ``whileai gate BASE CUR`` and ``compare.compare_documents``
read two back.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypedDict, cast

from whileai_core import defaults as D
from whileai_core import distribution_version
from whileai_core.errors import (
    BaselineError,
    CorruptBaseline,
    EditedBaseline,
    IncompatibleBaseline,
    MissingBaseline,
    NonFiniteReward,
)
from whileai_core.rows import stable_id

__all__ = ["HASH_FIELD", "SCHEMA", "BaselineError", "CorruptBaseline", "EditedBaseline", "IncompatibleBaseline",
           "MissingBaseline", "RunDocument", "ScenarioEntry", "baseline_index", "check_compatible", "content_hash", "dump_document", "fingerprint", "load_document", "run_document",
           "scenario_incompatibility", "schema_major", "validate_document"]

class ScenarioEntry(TypedDict, total=False):
    """One scenario's entry in a run document (``scenarios[i]``), as the plugin writes it (docs/plugin.md).

    ``key``, ``k`` and ``rewards`` are required of a stored document (``validate_document``); a document read
    from disk may carry fewer of the rest (older versions) and keys not listed here are kept as they are."""

    key: str
    nodeid: str
    k: int
    seed: int
    judge: str | None
    rewards: list[float | None]  # every trial's counted reward (None: unscored), in trial order
    trial_indices: list[int]
    pass_reward: float
    passes: int
    n_scored: int
    unscored: int
    trial_states: list[str | None]  # each trial's ledger state (gate.ledger; None: scored)
    ledger: dict[str, Any]
    unscored_policy: str
    errors: int
    agent_error: str | None
    judge_errors: int
    judge_error: str | None
    infra_errors: int
    infra_error: str | None
    pass_rate: float | None
    metric: str
    value: float | None
    ci: list[float] | None
    level: float
    min_pass_rate: float | None
    max_drop: float
    baseline: dict[str, Any] | None  # the baseline's passes, n_scored, pass_rate and Wilson ci
    baseline_note: str | None
    delta: float | None
    delta_ci: list[float] | None  # Newcombe
    p_value: float | None
    p_threshold: float
    failures: list[str]
    scenario_id: str | None
    scenario: dict[str, Any]  # the covering-array cell
    prompt: str | None
    location: list[Any]
    round: int  # --wai-sequential: the round of a round's entry (merged entries carry ``rounds``)
    rounds: int
    transcripts: list[dict[str, Any]]
    usage: dict[str, Any]
    budget_stop: str | None
    faults_undelivered: int
    faults_scheduled: int
    pooled: dict[str, Any]  # a pooled baseline's entry (measure.history.pool_runs)


class RunDocument(TypedDict, total=False):
    """A run document (``schema: "whileai.run/1"``; docs/plugin.md): ``schema``, ``scenarios`` and
    ``fingerprint`` are required of a stored one (``validate_document``)."""

    schema: str
    whileai_version: str
    created: str
    name: str | None
    store: str | None
    commit_info: dict[str, Any]
    machine_info: dict[str, Any]
    run_info: dict[str, Any]
    fingerprint: dict[str, Any]
    settings: dict[str, Any]
    gate: dict[str, Any] | None  # Gate.to_dict()
    scenarios: list[ScenarioEntry]
    sequential: dict[str, Any]  # --wai-sequential: rounds run and why it stopped
    baseline_history: dict[str, Any]  # a pooled baseline (BRANCH~N): its runs and noise
    outcome: dict[str, Any]  # the session's exit status, green, complete
    imported: dict[str, Any]  # another framework's results as a run document: their load report (interop)
    content_hash: str  # HASH_FIELD, written last


SCHEMA = D.RUN_SCHEMA
HASH_FIELD = "content_hash"  # sha256 of the document without this field, in canonical JSON (``content_hash``)
_REQUIRED_TOP: dict[str, type] = {"schema": str, "scenarios": list, "fingerprint": dict}
_REQUIRED_SCENARIO: dict[str, type] = {"key": str, "k": int, "rewards": list}


def schema_major(schema: str) -> str:
    """The major version of a schema name: ``"whileai.run/1.2"`` -> ``"1"``."""
    return schema.split("/")[-1].split(".")[0]


def fingerprint(run_info: Mapping[str, Any], extra: str = "") -> dict[str, Any]:
    """What must match for two runs to be compared: the schema major, the run info and ``--wai-fingerprint``."""
    items = {"schema": schema_major(SCHEMA), "run_info": dict(run_info), "fingerprint": extra}
    return {"config": stable_id(items, length=16), "items": items}


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_document(results: Iterable[Mapping[str, Any]], *, settings: Mapping[str, Any], commit: Mapping[str, Any],
                 machine: Mapping[str, Any], run_info: Mapping[str, Any], fingerprint_extra: str = "",
                 name: str | None = None, gate: Mapping[str, Any] | None = None,
                 store: str | os.PathLike[str] | None = None) -> RunDocument:
    """A JSON-able run document from per-scenario results (sorted by key, so files diff cleanly).

    ``store`` is the absolute store directory of the run, so CI steps find the saved baseline without
    guessing where pytest's rootdir put it."""
    scenarios = sorted((cast(ScenarioEntry, dict(r)) for r in results), key=lambda r: r["key"])
    return {
        "schema": SCHEMA,
        "whileai_version": distribution_version(),
        "created": utc_now(),
        "name": name,
        "store": None if store is None else os.path.abspath(store),
        "commit_info": dict(commit),
        "machine_info": dict(machine),
        "run_info": dict(run_info),
        "fingerprint": fingerprint(run_info, fingerprint_extra),
        "settings": dict(settings),
        "gate": dict(gate) if gate is not None else None,
        "scenarios": scenarios,
    }


def validate_document(doc: Any, *, source: str) -> RunDocument:
    """Check a loaded document's shape; anything off is a ``CorruptBaseline`` naming the field."""
    fix = "delete it, or re-save it with --wai-save=NAME"
    if not isinstance(doc, dict):
        raise CorruptBaseline(f"{source}: a run document must be a JSON object, got {type(doc).__name__}; {fix}")
    for key, kind in _REQUIRED_TOP.items():
        if not isinstance(doc.get(key), kind):
            raise CorruptBaseline(f"{source}: field {key!r} missing or not a {kind.__name__}; {fix}")
    if not doc["schema"].startswith("whileai.run/"):
        raise CorruptBaseline(f"{source}: schema {doc['schema']!r} is not a whileai run document; {fix}")
    for i, sc in enumerate(doc["scenarios"]):
        if not isinstance(sc, dict):
            raise CorruptBaseline(f"{source}: scenarios[{i}] is not an object; {fix}")
        for key, kind in _REQUIRED_SCENARIO.items():
            if not isinstance(sc.get(key), kind):
                raise CorruptBaseline(f"{source}: scenarios[{i}].{key} missing or not a {kind.__name__}; {fix}")
        for j, r in enumerate(sc["rewards"]):
            if isinstance(r, float) and not math.isfinite(r):
                raise NonFiniteReward(f"{source}: scenario {sc['key']!r} (scenarios[{i}]) has reward {r!r} at "
                                      f"rewards[{j}]; NaN and infinity are not scores and are never counted as "
                                      "failures: write null for an unscored trial, or fix what wrote it")
            if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r <= 1):
                raise CorruptBaseline(f"{source}: scenario {sc['key']!r} (scenarios[{i}]) has reward {r!r} at "
                                      f"rewards[{j}], not in [0, 1]; {fix}")
    return cast(RunDocument, doc)  # its required fields checked above


def content_hash(doc: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of ``doc`` without its ``content_hash`` field, as canonical JSON (sorted keys, no spaces):
    the same for the dict that was written and the dict read back, so any edit to the file changes it."""
    body = {k: v for k, v in doc.items() if k != HASH_FIELD}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_hash(doc: Mapping[str, Any], *, source: str) -> None:
    """Refuse a document whose ``content_hash`` does not match its contents (``EditedBaseline``, naming the file).
    Documents written before the hash existed carry none and are read as they are."""
    stored = doc.get(HASH_FIELD)
    if stored is None:
        return
    actual = content_hash(doc)
    if stored != actual:
        raise EditedBaseline(f"{source}: edited after it was written: its content hash is {str(stored)[:19]}..., "
                             f"its contents hash to {actual[:19]}...; a baseline is only what a complete run "
                             "measured: restore the file (git checkout, the CI cache) or re-save it with "
                             "--wai-save=NAME")


def load_document(path: str | os.PathLike[str]) -> RunDocument:
    """Read, check the content hash of, and validate one run document (errors name the file and the fix)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingBaseline(f"no baseline file at {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptBaseline(f"{p}: cannot be read ({exc}); delete it, or re-save it with --wai-save=NAME") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptBaseline(f"{p}: not valid JSON (line {exc.lineno}: {exc.msg}); the file is corrupted or "
                              "truncated; delete it, or re-save it with --wai-save=NAME") from None
    if isinstance(doc, dict):
        check_hash(doc, source=str(p))
    return validate_document(doc, source=str(p))


def dump_document(doc: Mapping[str, Any]) -> str:
    """The document as the JSON text the store and ``--wai-json`` write, with its ``content_hash`` (last field)."""
    body = {k: v for k, v in doc.items() if k != HASH_FIELD}
    return json.dumps({**body, HASH_FIELD: content_hash(body)}, indent=1, sort_keys=False, ensure_ascii=False,
                      allow_nan=False) + "\n"


def baseline_index(doc: Mapping[str, Any]) -> dict[str, ScenarioEntry]:
    """Scenario entries of a run document by key."""
    return {sc["key"]: sc for sc in doc.get("scenarios", [])}


def check_compatible(baseline: Mapping[str, Any], *, fingerprint_now: Mapping[str, Any], source: str) -> None:
    """Refuse a baseline from another schema major or another config fingerprint, saying what differs."""
    major_then, major_now = schema_major(str(baseline.get("schema", ""))), schema_major(SCHEMA)
    if major_then != major_now:
        raise IncompatibleBaseline(f"baseline {source} has schema {baseline.get('schema')!r}, this plugin writes "
                                   f"{SCHEMA!r}; re-save the baseline with this version (--wai-save=NAME)")
    then = baseline.get("fingerprint") or {}
    if then.get("config") != fingerprint_now.get("config"):
        a = (then.get("items") or {})
        b = dict(fingerprint_now.get("items") or {})
        diffs = []
        for field in ("run_info", "fingerprint"):
            va, vb = a.get(field), b.get(field)
            if isinstance(va, dict) and isinstance(vb, dict):
                for k in sorted(set(va) | set(vb)):
                    if va.get(k) != vb.get(k):
                        diffs.append(f"run_info.{k}: baseline {va.get(k)!r}, now {vb.get(k)!r}")
            elif va != vb:
                diffs.append(f"{field}: baseline {va!r}, now {vb!r}")
        what = "; ".join(diffs) or "config fingerprint differs"
        raise IncompatibleBaseline(f"baseline {source} was measured under another configuration ({what}); "
                                   "compare runs of one configuration, or re-save the baseline (--wai-save=NAME)")


def scenario_incompatibility(then: Mapping[str, Any], now: Mapping[str, Any]) -> str | None:
    """Why one scenario's baseline entry cannot be paired with the current one (``None`` if it can)."""
    if int(then.get("k", -1)) != int(now.get("k", -2)):
        return (f"k={now.get('k')} trials now but k={then.get('k')} in the baseline; run with "
                f"--wai-trials={then.get('k')} or re-save the baseline")
    if (then.get("judge") or None) != (now.get("judge") or None):
        return (f"judge {now.get('judge')!r} now but {then.get('judge')!r} in the baseline; "
                "a baseline graded by another judge is not comparable; re-save it")
    return None
