"""Situations written by a model (``simulate(simulator=<model>)``).

``write_situations(model, tools=..., system_prompt=..., n=...)`` asks the model, in batches, for user
requests that exercise the tools, each tagged with a stance, a world state and the tool it targets; replies
are parsed, validated, deduplicated (case and whitespace folded) and returned. Infrastructure failures and
unreadable replies do not raise: they are listed in ``.warnings`` and the caller falls back to the
covering array for whatever coverage is missing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from whileai_core.arguments import integer
from whileai_core.defaults import WRITER_BATCH, WRITER_MAX_CALLS, WRITER_MAX_TOKENS, WRITER_TEMPERATURE
from whileai_core.errors import InvalidArgument

#: the vocabularies of docs/rows.md.
STANCES = ("ordinary", "hurried", "unsure", "adversarial")
WORLD_STATES = ("present", "missing", "edge", "unspecified")

WRITER_SYSTEM_PROMPT = (
    "You write test situations for an AI agent. The agent's system prompt is:\n<<<\n{system_prompt}\n>>>\n"
    "Its tools are (JSON):\n{tools}\n\n"
    "Write {n} distinct, realistic user messages that would lead the agent to use these tools (and a few it "
    "should refuse or answer without tools). Vary the user's manner: stance is one of {stances}. Vary the "
    "record the user names: world_state is one of {world_states} (present = the record exists, missing = "
    "it does not, edge = an odd or boundary value, unspecified = no record involved). Name concrete ids or "
    "values in the message itself.\n"
    'Reply with ONLY JSON: {{"situations": [{{"prompt": "...", "stance": "...", "world_state": "...", '
    '"tool": "<tool name or null>"}}, ...]}}'
)


class WrittenSituations(list):
    """The situations (a list of dicts) plus ``.warnings``, ``.calls`` and ``.dropped`` (invalid items)."""

    def __init__(self, items: list[dict[str, Any]] = (), *, warnings: list[str] | None = None,  # type: ignore[assignment]
                 calls: int = 0, dropped: int = 0, duplicates: int = 0) -> None:
        super().__init__(items)
        self.warnings = list(warnings or [])
        self.calls = calls
        self.dropped = dropped
        self.duplicates = duplicates

    def to_dict(self) -> dict[str, Any]:
        return {"situations": list(self), "warnings": self.warnings, "calls": self.calls,
                "dropped": self.dropped, "duplicates": self.duplicates}

    def __repr__(self) -> str:
        return (f"WrittenSituations({len(self)} situations from {self.calls} model calls, "
                f"{self.duplicates} duplicates and {self.dropped} invalid dropped, {len(self.warnings)} warnings)")


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _extract(text: str) -> list[Any]:
    """The situation items in a reply: ``{"situations": [...]}``, a bare list, or either inside a fence."""
    cleaned = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", cleaned, re.DOTALL)
    if fence:
        cleaned = fence.group(1).strip()
    for candidate in (cleaned, cleaned[cleaned.find("{"):cleaned.rfind("}") + 1],
                      cleaned[cleaned.find("["):cleaned.rfind("]") + 1]):
        if not candidate:
            continue
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, Mapping) and isinstance(value.get("situations"), list):
            return list(value["situations"])
        if isinstance(value, list):
            return value
    raise InvalidArgument("no JSON list of situations in the reply")


def write_situations(model: Any, *, tools: Any, system_prompt: str | None, n: int, seed: int = 0,
                     batch: int = WRITER_BATCH, max_calls: int = WRITER_MAX_CALLS,
                     temperature: float = WRITER_TEMPERATURE, max_tokens: int = WRITER_MAX_TOKENS,
                     cache: Any = None) -> WrittenSituations:
    """Up to ``n`` deduplicated ``{"prompt", "stance", "world_state", "tool"}`` dicts written by ``model``.

    ``seed`` goes into each request (so a cassette keys on it, and servers that honour ``seed`` repeat);
    each call's trial index is its position, so calls stay distinct under record/replay.
    """
    from whileai_core.errors import BackendError
    from whileai_core.models.cache import resolve_cache as _resolve_cache
    from whileai_core.models.protocol import _schema_name, tool_schemas
    from whileai_core.models.specs import resolve_model

    for name, v, lo in (("n", n, 1), ("batch", batch, 1), ("max_calls", max_calls, 1), ("seed", seed, 0)):
        integer(name, v, minimum=lo)
    backend = resolve_model(model, role="simulator")
    schemas = tool_schemas(tools)
    names = [_schema_name(s) for s in schemas]
    brief = json.dumps([{"name": _schema_name(s), "description": s["function"].get("description", ""),
                         "parameters": s["function"].get("parameters", {})} for s in schemas], ensure_ascii=False)
    cassette = _resolve_cache(cache)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    warnings: list[str] = []
    dropped = duplicates = calls = 0
    while len(out) < n and calls < max_calls:
        want = min(batch, n - len(out))
        system = WRITER_SYSTEM_PROMPT.format(system_prompt=system_prompt or "(none)", tools=brief, n=want,
                                             stances=", ".join(STANCES), world_states=", ".join(WORLD_STATES))
        user = f"Write {want} situations."
        if out:
            user += " Do not repeat any of these:\n" + "\n".join(f"- {s['prompt']}" for s in out)
        calls += 1
        try:
            c = backend.complete([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                 temperature=temperature, max_tokens=max_tokens, trial=calls - 1,
                                 cache=cassette, extra={"seed": seed})
        except BackendError as exc:
            warnings.append(f"writer call {calls} failed: {exc}")
            break
        try:
            items = _extract(c.text)
        except ValueError as exc:
            warnings.append(f"writer call {calls}: {exc}: {c.text[:120]!r}")
            continue
        for item in items:
            if isinstance(item, str):
                item = {"prompt": item}
            if not isinstance(item, Mapping) or not isinstance(item.get("prompt"), str) or not item["prompt"].strip():
                dropped += 1
                continue
            key = _fold(item["prompt"])
            if key in seen:
                duplicates += 1
                continue
            stance = str(item.get("stance") or "ordinary").strip().lower()
            world_state = str(item.get("world_state") or "unspecified").strip().lower()
            tool = item.get("tool")
            seen.add(key)
            out.append({
                "prompt": item["prompt"].strip(),
                "stance": stance if stance in STANCES else "ordinary",
                "world_state": world_state if world_state in WORLD_STATES else "unspecified",
                "tool": tool if tool in names else None,
            })
            if len(out) >= n:
                break
    if len(out) < n:
        warnings.append(f"the writer produced {len(out)} of {n} situations in {calls} calls; "
                        "fill the rest from the covering array")
    return WrittenSituations(out, warnings=warnings, calls=calls, dropped=dropped, duplicates=duplicates)


__all__ = ["STANCES", "WORLD_STATES", "WRITER_SYSTEM_PROMPT", "WrittenSituations", "write_situations"]
