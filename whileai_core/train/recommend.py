"""How much to simulate for a training target: the SDK's ``recommend(tools, policy, mode=, target=)``.

It sits in ``train`` because it reads the covering grid ``simulate`` would play (``simulate.situations``) and
plans the rows a training method consumes. SFT wants every cell seen several times (``SATURATION_COPIES``)
and about three rows per kept example; RL wants groups of k rollouts whose rewards are mixed, so the budget
grows as the expected share of mixed groups shrinks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from whileai_core import defaults as D
from whileai_core.arguments import choice, fraction, integer


class Recommendation(dict):
    """``{mode, cells, target, simulate_kwargs, reasoning}``; prints the reasoning, one line each."""

    def __str__(self) -> str:
        kw = ", ".join(f"{k}={v!r}" for k, v in self["simulate_kwargs"].items())
        return "\n".join([f"recommend ({self['mode']}): simulate({kw})", *(f"  {r}" for r in self["reasoning"])])


def recommend(tools: Sequence[Any], policy: str | None = None, *, system_prompt: str | None = None,
              mode: str = "sft", target: int | None = None, mixed_rate: float = 0.5,
              copies: int = D.RECOMMEND_SATURATION_COPIES, k: int = D.RL_REPEATS,
              min_mixed_rate: float = D.RECOMMEND_MIN_MIXED_RATE, step: int = D.RECOMMEND_BUDGET_STEP) -> Recommendation:
    """The ``simulate(...)`` keywords that yield about ``target`` training rows for ``mode``.

    Args:
        tools: the agent's tools (as for ``simulate``).
        policy: the system prompt (the SDK's positional name); ``system_prompt=`` is the same.
        system_prompt: our name for ``policy``; when both are given, ``system_prompt`` wins (default None).
        mode: "sft" (default) or "rl".
        target: training rows wanted (default ``defaults.RECOMMEND_SFT_TARGET`` = 800 for SFT,
            ``defaults.RECOMMEND_RL_TARGET`` = 1000 for RL).
        mixed_rate: the share of RL groups you expect to have mixed rewards (default 0.5; measure it with
            ``group_signal`` on a pilot run); floored at ``min_mixed_rate`` (``defaults.RECOMMEND_MIN_MIXED_RATE``).
        copies: SFT rows per covering-grid cell (default ``defaults.RECOMMEND_SATURATION_COPIES`` = 5).
        k: rollouts per RL group (default ``defaults.RL_REPEATS`` = 8).
        min_mixed_rate: the floor on ``mixed_rate`` (default ``defaults.RECOMMEND_MIN_MIXED_RATE`` = 0.02).
        step: SFT budgets round up to a multiple of this (default ``defaults.RECOMMEND_BUDGET_STEP`` = 100).

    Returns:
        Recommendation: ``cells`` (the covering grid's size), ``simulate_kwargs`` and ``reasoning`` lines.
        SFT: budget = max(cells x copies, 3 x target), rounded up to ``step``. RL: situations =
        max(2 x cells, ceil(target / (k x mixed_rate))), budget = situations x k.

    Raises:
        InvalidArgument: a ``mode`` other than "sft" or "rl", ``target``/``copies``/``k``/``step`` < 1,
            ``mixed_rate`` outside [0, 1] or ``min_mixed_rate`` outside (0, 1) (a ``ValueError``); tools
            ``simulate`` would refuse (two tools with one name, a bad tool name).
        InvalidArgumentType: a tool that is not a tool, a function or a schema dict (a ``TypeError``).

    Example:
        ```pycon
        >>> recommend([lookup_order], "Only refund paid orders.", mode="rl")["simulate_kwargs"]  # doctest: +SKIP
        {'mode': 'rl', 'situations': 250, 'repeats': 8, 'budget': 2000}
        ```
    """
    from whileai_core.simulate.situations import situations

    mode = choice("mode", mode, ("sft", "rl"))
    copies, k, step = integer("copies", copies, minimum=1), integer("k", k, minimum=1), integer("step", step, minimum=1)
    default_target = D.RECOMMEND_SFT_TARGET if mode == "sft" else D.RECOMMEND_RL_TARGET
    target = default_target if target is None else integer("target", target, minimum=1)
    rate = max(fraction("mixed_rate", mixed_rate, closed=True), fraction("min_mixed_rate", min_mixed_rate, closed=False))
    prompt = system_prompt if system_prompt is not None else policy
    cells = len(situations(tools, prompt))
    if mode == "sft":
        budget = math.ceil(max(cells * copies, 3 * target) / step) * step
        kwargs: dict[str, Any] = {"mode": "sft", "budget": budget}
        reasoning = [f"the covering grid has {cells} cells; {copies} rows per cell saturate it ({cells * copies} rows)",
                     f"rejection sampling keeps about one row in three, so {target} examples need {3 * target} rows",
                     f"budget {budget}: the larger, rounded up to a multiple of {step}"]
    else:
        n_sit = max(2 * cells, math.ceil(target / (k * rate)))
        kwargs = {"mode": "rl", "situations": n_sit, "repeats": k, "budget": n_sit * k}
        reasoning = [f"the covering grid has {cells} cells; RL plays each at least twice ({2 * cells} situations)",
                     (f"{target} rows in mixed groups of {k} at a mixed rate of {rate:.2f} need "
                      f"{math.ceil(target / (k * rate))} situations"),
                     (f"budget {n_sit * k} = {n_sit} situations x {k} rollouts; measure the mixed rate on a pilot "
                      "with group_signal(rows) and pass it as mixed_rate=")]
    return Recommendation(mode=mode, cells=cells, target=target, simulate_kwargs=kwargs, reasoning=reasoning)
