"""Imported trial rows as the gate's run document: one scenario per ``<task>/<sample id>``, its epochs as trials.

Each scenario entry carries what ``whileai_core.gate.compare`` reads (``key``, ``k``, ``rewards``,
``trial_states``, ``passes``, ``n_scored``, ``pass_reward``) and what the reports show (``scenario``: the
sample's slice fields). ``judge`` is ``<format>:<scorer>``, so a baseline scored by another scorer is refused
by name, as the plugin refuses another judge. Unscored trials count as the gate's policy says
(``whileai_core.gate.ledger``: ``fail`` by default, a failed trial on both sides).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from whileai_core import defaults as D

if TYPE_CHECKING:
    from whileai_core.gate.document import RunDocument


def entries(rows: Iterable[Mapping[str, Any]], *, policy: str = D.GATE_UNSCORED_POLICY,
            pass_reward: float = D.GATE_PASS_REWARD) -> list[dict[str, Any]]:
    """One scenario entry per task key, trials in epoch order."""
    from whileai_core.gate.compare import binarize
    from whileai_core.gate.ledger import check_policy, entry_ledger, gate_rewards

    check_policy(policy)
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row["task_id"]), []).append(row)
    out = []
    for key in sorted(groups):
        trials = sorted(groups[key], key=lambda r: int(r["rollout_index"]))
        states = [r.get("trial_state") for r in trials]
        rewards = gate_rewards([r.get("reward") for r in trials], states, policy)
        flags = binarize(rewards, pass_reward)
        first = trials[0]
        ledger = entry_ledger({"trial_states": states})
        out.append({
            "key": key, "nodeid": key, "k": len(trials), "seed": 0,
            "judge": f"{first.get('source_format')}:{first.get('scorer')}",
            "rewards": [None if r is None else float(r) for r in rewards],
            "trial_indices": [int(r["rollout_index"]) for r in trials], "trial_states": states,
            "ledger": ledger.to_dict(), "unscored_policy": policy, "unscored": ledger.missing,
            "pass_reward": pass_reward, "passes": sum(flags), "n_scored": len(flags),
            "pass_rate": sum(flags) / len(flags) if flags else None, "failures": [],
            "errors": sum(1 for s in states if s == "agent_error"),
            "scenario_id": key, "scenario": dict(first.get("scenario") or {}),
            "prompt": None, "location": [],
        })
    return out


def to_document(imported: Any, *, policy: str = D.GATE_UNSCORED_POLICY, name: str | None = None,
                run_info: Mapping[str, Any] | None = None, fingerprint_extra: str = "") -> RunDocument:
    """The run document of one import (``whileai_core.gate.document.run_document``), with its load report."""
    from whileai_core.gate.document import run_document

    rep = imported.report
    doc = run_document(entries(imported.rows, policy=policy), settings={"unscored": policy}, commit={},
                       machine={}, run_info=dict(run_info or {}), fingerprint_extra=fingerprint_extra,
                       name=name or rep.source)
    doc["imported"] = rep.to_dict()
    return doc
