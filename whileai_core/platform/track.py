"""Tracking your own agent on the platform: an agent, its behaviors, runs per version, curve points and scores.

Routes (reference §5.5, tracking client): ``POST /agents``, ``PUT /agents/{id}/behaviors/{name}``, ``POST /runs``,
``POST /runs/{id}/train`` (curve points), ``POST /runs/{id}/evals`` (scores), ``PATCH /runs/{id}`` (finish),
``GET /runs?agent=``. Checked before the service would refuse: versions at most TRACK_VERSION_MAX_CHARS
characters; a score that looks like a fraction warns, because the platform counts points out of 100.
This is a subset of the SDK's ``Tracked`` (no figures, experiments, promote, live or notes).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from whileai_core.arguments import integer
from whileai_core.defaults import TRACK_VERSION_MAX_CHARS
from whileai_core.errors import InvalidArgument, PlatformError
from whileai_core.platform.client import Client


def _id(answer: Any, field: str, route: str) -> str:
    if not isinstance(answer, Mapping) or not answer.get(field):
        raise PlatformError(f"the answer named no {field}", route=route)
    return str(answer[field])


class TrackedRun:
    """One version's run: ``log(step, **metrics)``, ``score(behavior, points)``, ``finish()``."""

    def __init__(self, client: Client, run_id: str, version: str) -> None:
        self._c = client
        self.id = run_id
        self.version = version

    def __repr__(self) -> str:
        return f"TrackedRun(id={self.id!r}, version={self.version!r})"

    def log(self, step: int, **metrics: float) -> None:
        """Send one curve point (``POST /runs/{id}/train {points: [{step, ...metrics}]}``)."""
        integer("step", step, minimum=0)
        self._c.request("POST", f"/runs/{self.id}/train", json_body={"points": [{"step": step, **metrics}]})

    def score(self, behavior: str, points: float, *, n: int | None = None) -> None:
        """Record a behavior's score in points out of 100 (``POST /runs/{id}/evals``)."""
        if 0 < points < 1:
            warnings.warn(f"score {points!r} for {behavior!r} looks like a fraction; the platform counts points out "
                          "of 100", stacklevel=2)
        self._c.request("POST", f"/runs/{self.id}/evals", json_body={"behavior": behavior, "score": points, "n": n})

    def finish(self, status: str = "done") -> None:
        """Mark the run finished (``PATCH /runs/{id} {status}``)."""
        self._c.request("PATCH", f"/runs/{self.id}", json_body={"status": status})


class Tracked:
    """An agent tracked on the platform. Make one with ``track(name)``."""

    def __init__(self, client: Client, agent_id: str, name: str) -> None:
        self._c = client
        self.id = agent_id
        self.name = name

    def __repr__(self) -> str:
        return f"Tracked(agent={self.name!r}, id={self.id!r})"

    def close(self) -> None:
        """Close its connection (a ``client=`` passed to ``track`` is closed too)."""
        self._c.close()

    def __enter__(self) -> Tracked:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def behavior(self, name: str, description: str = "") -> None:
        """Declare a behavior the agent is judged on (``PUT /agents/{id}/behaviors/{name}``)."""
        self._c.request("PUT", f"/agents/{self.id}/behaviors/{name}", json_body={"description": description})

    def run(self, version: str) -> TrackedRun:
        """Start a run for ``version`` (``POST /runs``)."""
        if not isinstance(version, str) or not 0 < len(version) <= TRACK_VERSION_MAX_CHARS:
            raise InvalidArgument(f"version= must be a string of 1 to {TRACK_VERSION_MAX_CHARS} characters; "
                                  f"got {version!r}")
        answer = self._c.request("POST", "/runs", json_body={"agentId": self.id, "version": version})
        return TrackedRun(self._c, _id(answer, "runId", "POST /runs"), version)

    def runs(self) -> list[dict[str, Any]]:
        """The agent's runs (``GET /runs?agent=``)."""
        answer = self._c.request("GET", "/runs", params={"agent": self.id})
        return list(answer.get("runs", []) if isinstance(answer, Mapping) else answer or [])


def track(agent: str, *, description: str = "", api_key: str | None = None, api_url: str | None = None,
          client: Client | None = None) -> Tracked:
    """Track an agent (``POST /agents {name, description}``); the connection stays open until ``close()``.

    Example::

        with platform.track("support-bot") as t:
            r = t.run("v3"); r.log(10, loss=0.4); r.score("refunds", 82); r.finish()
    """
    if not isinstance(agent, str) or not agent.strip():
        raise InvalidArgument("agent= must be a non-empty string naming the agent")
    c = client or Client(api_key, api_url=api_url)
    answer = c.request("POST", "/agents", json_body={"name": agent, "description": description})
    return Tracked(c, _id(answer, "agentId", "POST /agents"), agent)
