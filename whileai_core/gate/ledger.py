"""The ledger of every planned trial (issue 26 item 1): each planned (scenario, trial) ends in exactly one state,
scored or unscored with a reason, and nothing is dropped silently.

A trial's state is ``None`` (scored by the judge) or one ``UnscoredReason``. What an unscored trial does to the
pass rate and the paired delta is the run's ``UnscoredPolicy`` (``--wai-unscored``):

* ``fail`` (default): it counts as a failed trial (reward 0) on both sides of the gate. Missing-not-at-random is
  the common case (a judge that breaks on the bad replies), so leaving it out would inflate the pass rate.
* ``incomplete``: it is left out of the rates, and any unscored trial makes the run red INCOMPLETE.
* ``drop``: it is left out of the rates, an explicit choice; the gate prints the share it dropped.

Whatever the policy, a run whose unscored share exceeds ``--wai-max-unscored`` (``GATE_MAX_UNSCORED``) is red
INCOMPLETE with the counts by reason. An ``agent_error`` is the agent failing its task: it is in the ledger with
its reason, counts as a failed trial under every policy, and is not part of the unscored (unmeasured) share.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

UnscoredReason = Literal["judge_error", "nan_verdict", "none_verdict", "abstention", "infra_error", "agent_error",
                         "budget_stop", "deadline", "not_run"]
UnscoredPolicy = Literal["fail", "incomplete", "drop"]
REASONS: tuple[str, ...] = get_args(UnscoredReason)
POLICIES: tuple[str, ...] = get_args(UnscoredPolicy)
FAILED_ALWAYS = ("agent_error",)  # reasons that are the agent's own failure: reward 0 under every policy



def check_policy(policy: str) -> UnscoredPolicy:
    if policy not in POLICIES:
        raise ValueError(f"unscored policy must be one of {', '.join(POLICIES)}; got {policy!r}")
    return policy  # type: ignore[return-value]


def gate_rewards(rewards: Sequence[float | None], states: Sequence[str | None], policy: str) -> list[float | None]:
    """The rewards the gate counts: an unscored trial is 0.0 under ``fail`` and stays ``None`` (left out) under
    ``incomplete`` and ``drop``; an ``agent_error`` is 0.0 under every policy."""
    out: list[float | None] = []
    for reward, state in zip(rewards, states):
        if state is None:
            out.append(reward)
        elif state in FAILED_ALWAYS or policy == "fail":
            out.append(0.0)
        else:
            out.append(None)
    return out


@dataclass
class Ledger:
    """Counts over planned trials: how many were scored, and the unscored ones by reason."""

    planned: int = 0
    scored: int = 0
    unscored: dict[str, int] = field(default_factory=dict)

    def add_states(self, states: Iterable[str | None]) -> Ledger:
        for state in states:
            self.planned += 1
            if state is None:
                self.scored += 1
            else:
                if state not in REASONS:
                    raise ValueError(f"unknown trial state {state!r}; known: {', '.join(REASONS)}")
                self.unscored[state] = self.unscored.get(state, 0) + 1
        return self

    def add(self, other: Mapping[str, Any] | Ledger) -> Ledger:
        o = other if isinstance(other, Ledger) else Ledger.from_dict(other)
        self.planned += o.planned
        self.scored += o.scored
        for reason, n in o.unscored.items():
            self.unscored[reason] = self.unscored.get(reason, 0) + n
        return self

    @property
    def missing(self) -> int:
        """Unscored trials that are unmeasured (every reason but the agent's own failure)."""
        return sum(n for reason, n in self.unscored.items() if reason not in FAILED_ALWAYS)

    @property
    def share(self) -> float:
        """The unmeasured share of the planned trials (0 for an empty ledger)."""
        return self.missing / self.planned if self.planned else 0.0

    def counts_text(self) -> str:
        parts = [f"{n} {reason}" for reason, n in sorted(self.unscored.items(), key=lambda kv: (-kv[1], kv[0]))]
        return ", ".join(parts) if parts else "none"

    def to_dict(self) -> dict[str, Any]:
        # asdict(self)'s keys and values, built directly (asdict deep-copies field by field; this runs per scenario)
        return {"planned": self.planned, "scored": self.scored, "unscored": dict(self.unscored),
                "missing": self.missing, "share": self.share}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Ledger:
        return cls(int(d.get("planned") or 0), int(d.get("scored") or 0),
                   {str(k): int(v) for k, v in (d.get("unscored") or {}).items()})


def entry_ledger(entry: Mapping[str, Any]) -> Ledger:
    """A scenario entry's ledger: its recorded ``trial_states``, or for a document written before the ledger
    existed, its ``None`` rewards as unscored (reason ``abstention``: the reason was not recorded)."""
    states = entry.get("trial_states")
    if isinstance(states, list):
        return Ledger().add_states(states)
    rewards = entry.get("rewards") or []
    return Ledger().add_states(None if r is not None and not _nan(r) else "abstention" for r in rewards)


def _nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def suite_ledger(entries: Iterable[Mapping[str, Any]], extra: Iterable[Mapping[str, Any]] = ()) -> Ledger:
    """The ledger of a whole run: its scenarios' ledgers plus ``extra`` (scenarios planned but not run)."""
    total = Ledger()
    for e in entries:
        total.add(entry_ledger(e))
    for e in extra:
        total.add(e)
    return total


def unscored_verdict(current: Ledger, baseline: Ledger | None, *, policy: str, max_unscored: float) -> str | None:
    """Why the run is INCOMPLETE because of its unscored trials (None when it is not): the share over
    ``max_unscored``, or any unscored trial under ``incomplete``; the counts by reason and the baseline's share."""
    over = current.share > max_unscored
    strict = policy == "incomplete" and current.missing > 0
    if not (over or strict):
        return None
    rule = (f"above --wai-max-unscored={max_unscored:g}" if over else "--wai-unscored=incomplete allows none")
    return f"{unscored_text(current, baseline)}, {rule}"


def unscored_text(current: Ledger, baseline: Ledger | None) -> str:
    """``"52 of 200 planned trials unscored (26%: 40 judge_error, 12 nan_verdict); baseline 0 of 200 (0%)"``."""
    text = (f"{current.missing} of {current.planned} planned trials unscored ({current.share:.0%}: "
            f"{current.counts_text()})")
    if baseline is not None and baseline.planned:
        text += f"; baseline {baseline.missing} of {baseline.planned} ({baseline.share:.0%})"
    return text
