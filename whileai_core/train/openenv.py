"""``export_environment(runtime="openenv")``: the same tasks and judge as an OpenEnv package (reset / step / state).

OpenEnv (meta-pytorch/OpenEnv, PyPI ``openenv-core``) serves an environment over HTTP with three calls:
``reset()`` returns the first observation, ``step(action)`` returns the next one with ``reward`` and ``done``,
``state`` names the episode. Here an episode is one task: ``reset`` poses a task's prompt, ``step`` takes the
policy's reply as ``action.message``, grades it with the exported judge and ends the episode.

The generated package is thin: its models subclass OpenEnv's ``Action``/``Observation``/``State`` and its
server uses OpenEnv's ``create_app`` when ``openenv_core`` imports; otherwise (openenv not installed) the
models fall back to plain dataclasses with the same fields and the server to a small FastAPI app with the same
routes. The episode logic is ``Episodes`` below, so it is tested here, not in generated code.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

from whileai_core.errors import InvalidArgument
from whileai_core.rows import atomic_write_text, read_jsonl

SPLITS = ("train", "holdout")


class Episodes:
    """One task per episode over an exported split: ``reset`` poses a prompt, ``step`` grades the reply."""

    def __init__(self, package_dir: str | Path, split: str = "train") -> None:
        from whileai_core.train.rubric import make_rubric

        if split not in SPLITS:
            raise InvalidArgument(f"split= must be one of {', '.join(map(repr, SPLITS))}; got {split!r}")
        here = Path(package_dir)
        self.spec = json.loads((here / "spec.json").read_text(encoding="utf-8"))
        path = here / "data" / f"{split}.jsonl"
        self.examples = read_jsonl(path) if path.exists() else []
        if not self.examples:
            raise InvalidArgument(f"the {split} split of {here} holds no tasks; export with more rows or use the "
                                  "other split")
        self.split = split
        self.rubric = make_rubric(self.spec["judge"])
        self._next = 0
        self.current: dict[str, Any] | None = None
        self.episode_id: str | None = None
        self.step_count = 0

    def reset(self, seed: int | None = None, index: int | None = None) -> dict[str, Any]:
        """Start an episode on task ``index``, a seeded draw (``seed``), or the next task in turn."""
        if index is None:
            index = random.Random(seed).randrange(len(self.examples)) if seed is not None else self._next
            self._next = (index + 1) % len(self.examples)
        if not 0 <= index < len(self.examples):
            raise InvalidArgument(f"index={index} is outside the {len(self.examples)} {self.split} tasks")
        self.current = self.examples[index]
        self.episode_id, self.step_count = uuid.uuid4().hex, 0
        return {"prompt": self.current["prompt"], "example_id": self.current["example_id"], "done": False,
                "reward": None, "metadata": {"task_id": (self.current.get("info") or {}).get("task_id"),
                                             "split": self.split}}

    def step(self, message: Any) -> dict[str, Any]:
        """Grade the policy's reply (a string or assistant messages) and end the episode."""
        if self.current is None:
            raise InvalidArgument("step() before reset(): call reset() to pose a task first")
        if self.step_count:
            raise InvalidArgument("this episode is over (one reply per task); call reset() for the next task")
        ex = self.current
        reward = self.rubric(prompt=ex["prompt"], completion=message, answer=ex.get("answer", ""),
                             info=ex.get("info") or {})
        self.step_count += 1
        return {"prompt": [], "example_id": ex["example_id"], "done": True, "reward": float(reward),
                "metadata": {"task_id": (ex.get("info") or {}).get("task_id"), "split": self.split}}

    def state(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "step_count": self.step_count,
                "example_id": self.current["example_id"] if self.current else None}


def fastapi_app(env: Any, action_cls: type, name: str) -> Any:
    """A FastAPI app with OpenEnv's routes (``/health``, ``/reset``, ``/step``, ``/state``), used by the
    generated server when ``openenv_core`` is not installed."""
    import dataclasses

    from fastapi import FastAPI

    app = FastAPI(title=name)

    def dump(obj: Any) -> dict[str, Any]:
        is_instance = dataclasses.is_dataclass(obj) and not isinstance(obj, type)
        return dataclasses.asdict(obj) if is_instance else dict(obj.model_dump())

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "healthy"}

    @app.post("/reset")
    def reset(body: dict[str, Any] | None = None) -> dict[str, Any]:
        obs = env.reset(**(body or {}))
        return {"observation": dump(obs), "reward": obs.reward, "done": obs.done}

    @app.post("/step")
    def step(body: dict[str, Any]) -> dict[str, Any]:
        obs = env.step(action_cls(**body.get("action", body)))
        return {"observation": dump(obs), "reward": obs.reward, "done": obs.done}

    @app.get("/state")
    def state() -> dict[str, Any]:
        return dump(env.state)

    return app


_MODELS = '''\
"""Action, Observation and State of {name} (OpenEnv types when openenv_core imports, else dataclasses)."""

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

try:
    from openenv_core.env_server.interfaces import Environment as EnvironmentBase
    from openenv_core.env_server.types import Action as _Action
    from openenv_core.env_server.types import Observation as _Observation
    from openenv_core.env_server.types import State as _State
except ImportError:  # openenv is not installed: plain dataclasses with OpenEnv's fields
    class EnvironmentBase:
        pass

    @dataclass
    class _Action:
        metadata: dict = field(default_factory=dict)

    @dataclass
    class _Observation:
        done: bool = False
        reward: Optional[float] = None
        metadata: dict = field(default_factory=dict)

    @dataclass
    class _State:
        episode_id: Optional[str] = None
        step_count: int = 0

_model = dataclass if dataclasses.is_dataclass(_Action) else (lambda cls: cls)


@_model
class {cls}Action(_Action):
    """The policy's reply to the task's prompt."""

    message: Any = ""


@_model
class {cls}Observation(_Observation):
    """The task's prompt (chat messages) on reset; reward and done after the reply."""

    prompt: list = field(default_factory=list) if _model is dataclass else []
    example_id: str = ""


@_model
class {cls}State(_State):
    """The episode and the task it poses."""

    example_id: Optional[str] = None
'''

_ENVIRONMENT = '''\
"""The {name} environment: one task per episode, graded by the exported judge."""

from pathlib import Path

from whileai_core.train.openenv import Episodes

from ..models import EnvironmentBase, {cls}Observation, {cls}State

PACKAGE = Path(__file__).resolve().parent.parent


class {cls}Environment(EnvironmentBase):
    """reset() poses a task; step(action) grades action.message and ends the episode; state names it."""

    def __init__(self, split: str = "train"):
        self._episodes = Episodes(PACKAGE, split)

    def reset(self, seed=None, episode_id=None, index=None, **kwargs):
        return {cls}Observation(**self._episodes.reset(seed=seed, index=index))

    def step(self, action, timeout_s=None, **kwargs):
        return {cls}Observation(**self._episodes.step(action.message))

    @property
    def state(self):
        return {cls}State(**self._episodes.state())
'''

_APP = '''\
"""The {name} HTTP server: OpenEnv's create_app when openenv_core imports, else the same routes on FastAPI."""

from ..models import {cls}Action, {cls}Observation
from .environment import {cls}Environment

env = {cls}Environment()
try:
    from openenv_core.env_server.http_server import create_app
except ImportError:
    from whileai_core.train.openenv import fastapi_app

    app = fastapi_app(env, {cls}Action, "{name}")
else:
    app = create_app(env, {cls}Action, {cls}Observation, env_name="{name}")
'''

_INIT = '''\
"""{name}: an OpenEnv environment exported by whileai (export_environment(runtime="openenv"))."""

from .models import {cls}Action, {cls}Observation, {cls}State
from .server.environment import {cls}Environment

__all__ = ["{cls}Action", "{cls}Environment", "{cls}Observation", "{cls}State"]
'''

_YAML = '''\
spec_version: 1
name: {name}
type: space
runtime: fastapi
app: {name}.server.app:app
port: 8000
'''

_PYPROJECT = '''\
[project]
name = "{name}"
version = "0.1.0"
description = "OpenEnv environment exported by whileai: {n_train} train / {n_holdout} holdout tasks"
dependencies = ["whileai", "fastapi", "uvicorn"]

[project.optional-dependencies]
openenv = ["openenv-core"]

[tool.setuptools.packages.find]
include = ["{name}*"]

[tool.setuptools.package-data]
"{name}" = ["spec.json", "data/*.jsonl"]
'''

_README = '''\
# {name}

An OpenEnv environment exported by whileai: {n_train} train and {n_holdout} holdout tasks. Each episode poses
one task (`reset()`), takes the policy's reply as `{cls}Action(message=...)` (`step()`), grades it with the
judge `{judge}` and ends (`done=True`, `reward` in [0, 1]). `state` holds the episode id and the task.

```bash
uvicorn {name}.server.app:app --port 8000
```
'''


def write_package(root: Path, name: str, *, n_train: int, n_holdout: int, judge: str) -> list[Path]:
    """The OpenEnv files beside the exported ``data/`` and ``spec.json`` (which the caller writes)."""
    cls = "".join(part.capitalize() for part in name.split("_")) or "Whileai"
    args = {"name": name, "cls": cls, "n_train": n_train, "n_holdout": n_holdout, "judge": judge}
    pkg = root / name
    files = {pkg / "__init__.py": _INIT, pkg / "models.py": _MODELS, pkg / "server" / "__init__.py": "",
             pkg / "server" / "environment.py": _ENVIRONMENT, pkg / "server" / "app.py": _APP,
             root / "openenv.yaml": _YAML, root / "pyproject.toml": _PYPROJECT, root / "README.md": _README}
    return [atomic_write_text(path, text.format(**args), overwrite=True) for path, text in files.items()]
