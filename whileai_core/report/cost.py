"""Token usage and its estimated cost: what rows say they spent, priced with a table the user passes.

A row's agent tokens are ``row["usage"]`` (trace rows) or ``row["agent_extra"]["usage"]`` (a model agent's
rollout), under its ``model``; an LLM judge's are ``row["judge_meta"]["judge_usage"]``, under the judge's model
or ``"judge"``. No vendor price is built in: ``prices`` maps a model name to dollars per
``TOKENS_PER_PRICE_UNIT`` (1M) input and output tokens, ``{"gpt-4.1-mini": {"input": 0.4, "output": 1.6}}``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument
from whileai_core.rows import mapping_field

Usage = dict[str, dict[str, int]]  # model -> {"input_tokens", "output_tokens"}


def _tokens(raw: Any) -> tuple[int, int]:
    if not isinstance(raw, Mapping):
        return 0, 0
    def one(*names: str) -> int:
        for name in names:
            v = raw.get(name)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
                return int(v)
        return 0
    return one("input_tokens", "prompt_tokens"), one("output_tokens", "completion_tokens")


def row_usage(row: Mapping[str, Any]) -> Usage:
    """The tokens one row spent, by model (empty when the row carries none)."""
    out: Usage = {}
    extra = mapping_field(row, "agent_extra")
    agent = row.get("usage") if row.get("usage") is not None else extra.get("usage")
    model = str(row.get("model") or extra.get("model") or "agent")
    meta = mapping_field(row, "judge_meta")
    for name, raw in ((model, agent), (str(meta.get("judge_model") or "judge"), meta.get("judge_usage"))):
        i, o = _tokens(raw)
        if i or o:
            slot = out.setdefault(name, {"input_tokens": 0, "output_tokens": 0})
            slot["input_tokens"] += i
            slot["output_tokens"] += o
    return out


def add_usage(total: Usage, more: Mapping[str, Mapping[str, Any]] | None) -> Usage:
    """``total`` with ``more`` added in place (both model -> token counts); returns ``total``."""
    for model, counts in (more or {}).items():
        i, o = _tokens(counts)
        slot = total.setdefault(str(model), {"input_tokens": 0, "output_tokens": 0})
        slot["input_tokens"] += i
        slot["output_tokens"] += o
    return total


def load_prices(prices: Any) -> dict[str, dict[str, float]]:
    """A price table from a dict or a JSON file path: model -> {"input": $/1M tokens, "output": $/1M tokens}."""
    if prices is None:
        return {}
    if isinstance(prices, (str, os.PathLike)):
        try:
            with open(prices, encoding="utf-8") as fh:
                prices = json.load(fh)
        except (OSError, ValueError) as exc:
            raise InvalidArgument(f"prices={os.fspath(prices)!r}: cannot read a JSON price table ({exc}); write "
                                  '{"model": {"input": 0.4, "output": 1.6}} in dollars per 1M tokens') from None
    if not isinstance(prices, Mapping):
        raise InvalidArgument(f"prices must map model -> {{'input', 'output'}} dollars per 1M tokens; got "
                              f"{type(prices).__name__}")
    table = {}
    for model, row in prices.items():
        if not isinstance(row, Mapping) or set(row) - {"input", "output"}:
            raise InvalidArgument(f"prices[{model!r}] must be {{'input': $, 'output': $}} per 1M tokens; got {row!r}")
        clean = {}
        for side in ("input", "output"):
            v = row.get(side, 0.0)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
                raise InvalidArgument(f"prices[{model!r}][{side!r}] must be dollars per 1M tokens >= 0; got {v!r}")
            clean[side] = float(v)
        table[str(model)] = clean
    return table


def _bare(model: str) -> str:
    """A model name without its provider prefix: ``openai:gpt-4.1-mini`` -> ``gpt-4.1-mini``."""
    return model.split(":", 1)[1] if ":" in model else model


def price_key(model: str, prices: Mapping[str, Any]) -> str | None:
    """The price table's key for ``model``: the exact name, else the same name with or without the provider
    prefix (``openai:gpt-test`` usage finds a ``gpt-test`` price and the other way round); None when unpriced."""
    if model in prices:
        return model
    bare = _bare(model)
    matches = [key for key in prices if _bare(key) == bare]
    return matches[0] if len(matches) == 1 else None


@dataclass
class Cost:
    """Tokens by model and, where the price table names the model, the estimated dollars."""

    by_model: Usage = field(default_factory=dict)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def input_tokens(self) -> int:
        return sum(v["input_tokens"] for v in self.by_model.values())

    @property
    def output_tokens(self) -> int:
        return sum(v["output_tokens"] for v in self.by_model.values())

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def unpriced(self) -> list[str]:
        return sorted(m for m in self.by_model if price_key(m, self.prices) is None)

    @property
    def dollars(self) -> float | None:
        """The estimated cost of the priced models (None when no model has a price)."""
        priced: dict[str, str] = {}
        for m in self.by_model:
            key = price_key(m, self.prices)
            if key is not None:
                priced[m] = key
        if not priced:
            return None
        unit = D.TOKENS_PER_PRICE_UNIT
        return sum(self.by_model[m]["input_tokens"] * self.prices[key]["input"] / unit
                   + self.by_model[m]["output_tokens"] * self.prices[key]["output"] / unit
                   for m, key in priced.items())

    def to_dict(self) -> dict[str, Any]:
        return {"by_model": self.by_model, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "dollars": self.dollars, "unpriced": self.unpriced}

    def __str__(self) -> str:
        if not self.by_model:
            return "tokens: none recorded (the agent and judge reported no usage)"
        text = f"tokens: {self.input_tokens:,} in / {self.output_tokens:,} out over {len(self.by_model)} model(s)"
        if self.dollars is not None:
            text += f"; estimated cost ${self.dollars:.4f}"
        if self.unpriced:
            text += f" (no price for {', '.join(self.unpriced)}: pass a price table to estimate it)"
        return text


def usage(rows: Iterable[Mapping[str, Any]], *, prices: Any = None) -> Cost:
    """The tokens ``rows`` spent, by model, and their estimated cost under ``prices``.

    Args:
        rows: rows (``ScoredData``, ``SimulationData``, a list of dicts) or run-document scenarios with ``usage``.
        prices: model -> {"input", "output"} dollars per 1M tokens, or a JSON file of it (default: none).

    Returns:
        A ``Cost`` that prints itself: ``tokens: 1,200 in / 300 out over 1 model(s); estimated cost $0.0010``.

    Raises:
        InvalidArgument: a price table that is not model -> {"input", "output"} non-negative numbers.

    Example::

        print(wai.usage(scored, prices={"gpt-4.1-mini": {"input": 0.4, "output": 1.6}}))
    """
    total: Usage = {}
    for row in rows:
        if "key" in row and "rewards" in row:  # a run-document scenario: its usage is already summed
            add_usage(total, row.get("usage"))
        else:
            add_usage(total, row_usage(row))
    return Cost(total, load_prices(prices))


def parse_budget(text: Any) -> tuple[str, float]:
    """``"50000"`` -> ("tokens", 50000); ``"$2.5"`` -> ("dollars", 2.5). Raises InvalidArgument otherwise."""
    raw = str(text).strip().replace(",", "").replace("_", "")
    kind = "dollars" if raw.startswith("$") else "tokens"
    try:
        value = float(raw.lstrip("$"))
    except ValueError:
        value = -1.0
    if not value > 0:
        raise InvalidArgument(f"budget {text!r} must be a token count (50000) or dollars ($2.50), above 0")
    return kind, value


class Budget:
    """A token or dollar budget over a run: ``add`` what each trial spent, ``exceeded`` says why it is spent."""

    def __init__(self, spec: Any, *, prices: Any = None) -> None:
        self.kind, self.limit = parse_budget(spec)
        self.cost = Cost({}, load_prices(prices))
        if self.kind == "dollars" and not self.cost.prices:
            raise InvalidArgument(f"a dollar budget ({spec}) needs a price table (prices= / --wai-prices=FILE); "
                                  "or give the budget in tokens")

    def add(self, spent: Mapping[str, Mapping[str, Any]]) -> None:
        add_usage(self.cost.by_model, spent)

    def spent(self) -> float:
        return float(self.cost.tokens) if self.kind == "tokens" else float(self.cost.dollars or 0.0)

    def exceeded(self) -> str | None:
        """The message once the spend passes the limit, else None."""
        if self.kind == "dollars" and self.cost.unpriced:  # never "$0 spent" on a model the table cannot price
            return (f"cost budget cannot be counted: no price for {', '.join(self.cost.unpriced)} in the price table "
                    f"(the budget is ${self.limit:.2f}); add the model to --wai-prices or give the budget in tokens")
        if self.spent() <= self.limit:
            return None
        if self.kind == "tokens":
            return f"token budget exceeded: {self.cost.tokens:,} tokens spent, budget {self.limit:,.0f}"
        return f"cost budget exceeded: ${self.spent():.4f} spent, budget ${self.limit:.2f}"
