"""``Harness``: a model, its instructions and its tools (and optionally your own agent callable), as one thing
passed where an agent goes (the SDK's ``wai.Harness``).

``simulate(Harness(...))`` plays the harness's agent (its callable, else its model) with its instructions as the
system prompt and its tools as the world's, and stamps every row with ``harness={label, hash, model, kind}``, so
rows of two harness variants say which produced them. The hash is the first 12 hex of sha256 over the model,
the instructions and the sorted tool names: the same harness gives the same hash on every machine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from whileai_core.defaults import HARNESS_HASH_HEX
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.tools import as_tools


@dataclass(frozen=True)
class Harness:
    """A model (a spec like ``"openai:gpt-4.1-mini"`` or a backend) plus instructions and tools, with an optional
    agent callable that plays instead of the model; ``label`` names it on rows (default: its hash).

    Args:
        model: a model spec (``"openai:gpt-4.1-mini"``) or a backend (``wai.OpenAI(...)``); None with ``agent``.
        instructions: the system prompt it plays under (default None).
        tools: its tools (``@wai.tool`` functions or ``Tool`` objects), the world's in ``simulate`` (default none).
        agent: an agent callable that plays instead of the model (default None: the model plays).
        label: its name on rows (default None: the hash).

    Raises:
        InvalidArgument: neither a model nor an agent.
        InvalidArgumentType: an agent that is not callable, or instructions that are not a string.

    Example:
        ```python
        h = wai.Harness("openai:gpt-4.1-mini", instructions="Help customers with orders.", tools=[get_order])
        data = wai.simulate(h, budget=32)   # every row carries harness={label, hash, model, kind}
        ```
    """

    model: Any = None
    instructions: str | None = None
    tools: Sequence[Any] = field(default_factory=tuple)
    agent: Callable[..., Any] | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        if self.model is None and self.agent is None:
            raise InvalidArgument("Harness needs a model (a spec or backend) or an agent callable")
        if self.agent is not None and not callable(self.agent):
            raise InvalidArgumentType(f"Harness(agent=) is a callable; got {type(self.agent).__name__}")
        if self.instructions is not None and not isinstance(self.instructions, str):
            raise InvalidArgumentType(f"Harness(instructions=) is a string; got {type(self.instructions).__name__}")

    @property
    def model_name(self) -> str | None:
        """The model's name: the spec string, a backend's ``model``, or None for an agent callable alone."""
        if self.model is None:
            return None
        return self.model if isinstance(self.model, str) else str(getattr(self.model, "model", type(self.model).__name__))

    @property
    def hash(self) -> str:
        """sha256 over the model, the instructions and the sorted tool names, first ``defaults.HARNESS_HASH_HEX`` hex."""
        names = sorted(t.name for t in as_tools(list(self.tools))) if self.tools else []
        text = json.dumps([self.model_name, self.instructions or "", names], separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:HARNESS_HASH_HEX]

    @property
    def kind(self) -> str:
        """``"callable"`` when an agent callable plays, else ``"model"``."""
        return "callable" if self.agent is not None else "model"

    def stamp(self) -> dict[str, Any]:
        """What every row of a run carries: ``{label, hash, model, kind}``."""
        return {"label": self.label or self.hash, "hash": self.hash, "model": self.model_name, "kind": self.kind}


def unpack(agent: Any, tools: Any, system_prompt: str | None) -> tuple[Any, Any, str | None, dict[str, Any] | None]:
    """simulate's agent, tools and system prompt from a ``Harness`` (and its row stamp); anything else as it came.
    A harness's instructions or tools and different ``system_prompt=`` / ``tools=`` in the same call raise."""
    if not isinstance(agent, Harness):
        return agent, tools, system_prompt, None
    if system_prompt is not None and agent.instructions is not None and system_prompt != agent.instructions:
        raise InvalidArgument("simulate(Harness(instructions=...), system_prompt=...) gives two system prompts; "
                              "pass it on the Harness or to simulate, not both")
    if tools is not None and agent.tools:
        raise InvalidArgument("simulate(Harness(tools=...), tools=...) gives two tool lists; pass them on the "
                              "Harness or to simulate, not both")
    played = agent.agent if agent.agent is not None else agent.model
    return (played, tools if tools is not None else (list(agent.tools) or None),
            system_prompt if system_prompt is not None else agent.instructions, agent.stamp())
