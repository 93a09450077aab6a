"""SFT selection rules: which passing completions rejection sampling keeps (the SDK's ``rule=`` / ``Rejection``).

``top_per_prompt`` (the default) keeps the best completion of each prompt; ``random_per_prompt`` a seeded random
passing one (the control that measures whether picking the best helped); ``top_k_overall`` and
``random_k_overall`` keep k rows over all prompts (k = ``target``, else one per prompt). Ties and draws are
seeded hashes, so a selection is the same on every run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.rows import reward_of, task_key, uniform

SFT_RULES = ("top_per_prompt", "random_per_prompt", "top_k_overall", "random_k_overall")


@dataclass(frozen=True)
class Rejection:
    """A rejection-sampling rule for ``select(mode="sft", rule=Rejection(...))``.

    Args:
        select: one of ``SFT_RULES`` (default "top_per_prompt").
        min_reward: a completion passes at reward >= this (default ``defaults.SFT_MIN_REWARD`` = 1.0).
        seed: seeds ties and random picks (default 0).

    Example:
        ```pycon
        >>> Rejection("random_k_overall", min_reward=0.0).select
        'random_k_overall'
        ```
    """

    select: str = "top_per_prompt"
    min_reward: float = D.SFT_MIN_REWARD
    seed: int = 0

    def __post_init__(self) -> None:
        _check_name(self.select)
        mr = self.min_reward
        if isinstance(mr, bool) or not isinstance(mr, (int, float)) or not 0.0 <= mr <= 1.0:
            raise InvalidArgument(f"Rejection(min_reward=) is a reward in [0, 1]; got {mr!r}")


def _check_name(rule: Any) -> str:
    if not isinstance(rule, str):
        raise InvalidArgumentType(f"rule= is one of {SFT_RULES} or a Rejection(...); got {type(rule).__name__}")
    if rule not in SFT_RULES:
        raise InvalidArgument(f"rule= must be one of {', '.join(map(repr, SFT_RULES))} or a Rejection(...); "
                              f"got {rule!r}")
    return rule


def check_rule(rule: Any) -> str | Rejection | None:
    """``rule=`` checked: None, a rule name, or a ``Rejection``; a bad name raises, whatever the mode."""
    if rule is None or isinstance(rule, Rejection):
        return rule
    return _check_name(rule)


def pick(passing: Mapping[str, Sequence[dict[str, Any]]], rule: str, *, seed: int, target: int | None
         ) -> list[dict[str, Any]]:
    """The rows ``rule`` keeps from each prompt's passing rows (``passing``: task key -> rows)."""
    def best_first(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(rows, key=lambda m: (-(reward_of(m) or 0.0), uniform(seed, "tie", task_key(m),
                                                                           m.get("rollout_index"))))

    def drawn(rows: Sequence[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
        return sorted(rows, key=lambda m: uniform(seed, tag, task_key(m), m.get("rollout_index")))

    if rule == "top_per_prompt":
        out = [best_first(rows)[0] for rows in passing.values() if rows]
    elif rule == "random_per_prompt":
        out = [drawn(rows, "random_per_prompt")[0] for rows in passing.values() if rows]
    else:
        pool = [m for rows in passing.values() for m in rows]
        k = target if target is not None else len(passing)
        return (best_first(pool) if rule == "top_k_overall" else drawn(pool, "random_k_overall"))[:k]
    return out[:target] if target is not None else out
