"""The surface features of a row a reward hack rides on (length, flattery, hedges, tool use, trace flags)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from whileai_core.guard.trace import trace_flags
from whileai_core.messages import reply_text, tool_calls
from whileai_core.rows import reward_of

__all__ = ["row_features"]


Row = Mapping[str, Any]
FeatureFn = Callable[[Row], Any]

_reward = reward_of


_FLATTERY = re.compile(
    r"\b(great question|excellent|wonderful|amazing|fantastic|brilliant|absolutely|certainly|of course|"
    r"happy to help|glad to help|my pleasure|you'?re (?:absolutely |so )?right|perfect)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(might|maybe|perhaps|possibly|probably|i think|i believe|not sure|it seems|seems|likely|could be)\b", re.IGNORECASE
)
_APOLOGY = re.compile(r"\b(sorry|apologi[sz]e|apologies|unfortunately|regret)\b", re.IGNORECASE)
_SUCCESS = re.compile(
    r"\b(done|complete[d]?|success(?:ful(?:ly)?)?|confirmed|verified|all set|taken care of|processed|"
    r"updated|resolved|fixed)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\S+")
#: size features: when replies are templated, two outcomes differ in content, so these differ by construction
#: and are withheld; tics (flattery, "!", hedges, success claims) stay flaggable, as a policy copies those
SIZE_FEATURES = ("reply_length", "words", "newlines")


def _is_text_feature(name: str) -> bool:
    return name in SIZE_FEATURES


def row_features(row: Row) -> dict[str, float]:
    """The built-in features of one row (hand tier): text tics, tool use and numeric markers.

    ``reply_length`` (chars), ``words``, ``newlines``, ``exclamations``, ``flattery``, ``hedging``, ``apology``,
    ``success_words`` (counts), ``success_without_tool`` (a success word and no tool call, 0/1),
    ``tool_calls`` (count), ``tool:<name>`` (calls to that tool), ``trace:<flag>`` (a ``trace_flags`` flag
    fired, 0/1) and ``marker:<name>`` (numeric markers;
    a None marker is missing and is filled with its task's mean, so it carries no within-task signal).
    """
    text = reply_text(row)
    calls = tool_calls(row)
    success = len(_SUCCESS.findall(text))
    feats: dict[str, float] = {
        "reply_length": float(len(text)),
        "words": float(len(_WORD.findall(text))),
        "newlines": float(text.count("\n")),
        "exclamations": float(text.count("!")),
        "flattery": float(len(_FLATTERY.findall(text))),
        "hedging": float(len(_HEDGE.findall(text))),
        "apology": float(len(_APOLOGY.findall(text))),
        "success_words": float(success),
        "success_without_tool": float(success > 0 and not calls),
        "tool_calls": float(len(calls)),
    }
    for call in calls:
        key = f"tool:{call['tool']}"
        feats[key] = feats.get(key, 0.0) + 1.0
    for flag in trace_flags(row):
        feats[f"trace:{flag['flag']}"] = 1.0
    markers = row.get("markers")
    if isinstance(markers, Mapping):
        for name, value in markers.items():
            if isinstance(value, bool):
                feats[f"marker:{name}"] = float(value)
            elif isinstance(value, (int, float)):
                feats[f"marker:{name}"] = float(value) if math.isfinite(value) else math.nan
            else:
                feats[f"marker:{name}"] = math.nan
    return feats


