"""``export_environment``: graded rows as a verifiers-style RL environment package.

The package is a directory with a dataset (``prompt`` messages, ``answer`` = the reference, ``info`` = the
situation) split into train and holdout by task, a ``spec.json``, and a module whose
``load_environment(split)`` returns a ``verifiers`` environment when verifiers (0.1-0.3 API:
``SingleTurnEnv`` + ``Rubric``) is importable, else a plain ``Environment`` with the same dataset and rubric.
The rubric rebuilds a whileai row from each completion and grades it with the judge, which is stored as an
importable ``"module:attr"`` reference so a fresh process can load it. Nothing here needs verifiers.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whileai_core.arguments import choice
from whileai_core.defaults import DECONTAM_NGRAM, DECONTAM_OVERLAP, HOLDOUT_FRACTION, TRAIN_SEED
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.rows import (
    PRIVILEGED_FIELDS,
    ReportMapping,
    Row,
    as_rows,
    atomic_write_text,
    group_rows,
    stable_id,
    write_jsonl,
)
from whileai_core.train.rubric import _resolve, example_row, judge_reference, make_rubric  # noqa: F401

SPLITS = ("train", "holdout")
RUNTIMES = ("verifiers", "openenv")
# situation fields copied into ``info`` (never the rollout: steps, final_text, reward ...)
_INFO_FIELDS = ("task_id", "scenario_id", "scenario", "world_state", "stance", "faults", "system_prompt", "lineage")


def _answer(row: Mapping[str, Any]) -> str:
    ref = (row.get("privileged") or {}).get("reference")
    if ref is None:
        return ""
    return ref if isinstance(ref, str) else json.dumps(ref, ensure_ascii=False, default=str)


def build_examples(rows: Sequence[Row], *, system_prompt: str | None = None,
                   include_privileged: bool = True) -> list[dict[str, Any]]:
    """One example per task: ``{"example_id", "prompt", "answer", "info"}``."""
    from whileai_core.train.trl_formats import prompt_of

    out = []
    for key, members in group_rows(rows).items():
        first = members[0]
        info: dict[str, Any] = {f: first[f] for f in _INFO_FIELDS if first.get(f) not in (None, "", {}, [])}
        info["task_id"] = key
        if include_privileged:
            for f in PRIVILEGED_FIELDS:
                if first.get(f):
                    info[f] = first[f]
        if first.get("prompt") is not None:
            info["prompt_text"] = first["prompt"] if isinstance(first["prompt"], str) else None
        out.append({"example_id": stable_id(key, first.get("prompt"), length=12),
                    "prompt": prompt_of(first, system_prompt=system_prompt), "answer": _answer(first), "info": info})
    return out


@dataclass
class Environment:
    """An exported environment loaded without verifiers: the dataset of a split and its rubric."""

    name: str
    split: str
    dataset: list[dict[str, Any]]
    rubric: Callable[..., float]
    spec: dict[str, Any] = field(default_factory=dict)

    def score(self, example: Mapping[str, Any], completion: Any) -> float:
        """The rubric's reward for one completion (a string or assistant messages) of ``example``."""
        return self.rubric(prompt=example["prompt"], completion=completion, answer=example.get("answer", ""),
                           info=example.get("info") or {})

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "split": self.split, "n": len(self.dataset), "spec": dict(self.spec)}

    def __str__(self) -> str:
        return f"Environment({self.name!r}, split={self.split!r}, {len(self.dataset)} examples, judge={self.spec.get('judge')})"


def load_environment(package_dir: str | os.PathLike[str], split: str = "train", **kwargs: Any) -> Any:
    """Load an exported environment: a verifiers ``SingleTurnEnv`` when that API is importable, else ``Environment``.

    The same loader the generated package's own ``load_environment(split)`` calls, for either runtime's data.

    Args:
        package_dir: the package directory ``export_environment`` wrote (``out/name``), holding ``spec.json``
            and ``data/``.
        split: ``"train"`` (default) or ``"holdout"``; a split with no data file loads as an empty dataset.
        **kwargs: passed to ``verifiers.SingleTurnEnv`` when verifiers (0.1-0.3 API) is importable; unused
            otherwise.

    Returns:
        A verifiers ``SingleTurnEnv`` (dataset + a ``Rubric`` over the stored judge) when verifiers is
        importable, else an ``Environment``: ``dataset`` (the split's examples), ``rubric``, ``spec``, and
        ``score(example, completion)``.

    Raises:
        InvalidArgument: a ``split`` other than "train" or "holdout" (a ``ValueError``).
        InvalidArgumentType: the stored judge is not callable (a ``TypeError``).
        ImportError: the stored judge's module does not import here (``AttributeError``: it lacks the name).
        FileNotFoundError: ``package_dir`` has no ``spec.json``.

    Example:
        ```python
        wai.export_environment(scored.rows, "env_out", judge="my_judges:reference_judge", name="shop_env")
        env = wai.load_environment("env_out/shop_env", "holdout")
        print(env)   # Environment('shop_env', split='holdout', ... examples, judge=my_judges:reference_judge)
        ```
    """
    if split not in SPLITS:
        raise InvalidArgument(f"split= must be one of {', '.join(map(repr, SPLITS))}; got {split!r}")
    here = Path(package_dir)
    spec = json.loads((here / "spec.json").read_text(encoding="utf-8"))
    from whileai_core.rows import read_jsonl

    data = read_jsonl(here / "data" / f"{split}.jsonl") if (here / "data" / f"{split}.jsonl").exists() else []
    rubric = make_rubric(spec["judge"])
    try:
        import verifiers as vf
    except ImportError:
        vf = None
    if vf is not None and hasattr(vf, "SingleTurnEnv") and hasattr(vf, "Rubric"):  # verifiers 0.1-0.3
        from datasets import Dataset

        rows = [dict(ex, info=json.dumps(ex.get("info") or {})) for ex in data]
        rubric_fn = rubric

        def reward(prompt: Any = None, completion: Any = None, answer: str = "", info: Any = None, **kw: Any) -> float:
            return rubric_fn(prompt=prompt, completion=completion, answer=answer,
                             info=json.loads(info) if isinstance(info, str) else info, **kw)

        return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[reward], weights=[1.0]),
                                **kwargs)
    return Environment(name=spec["name"], split=split, dataset=data, rubric=rubric, spec=spec)


def v1_taskset(package_dir: str | os.PathLike[str], split: str = "train") -> type:
    """A verifiers 0.4 (``verifiers.v1``) ``Taskset`` class over an exported split, with the judge as a reward.

    The generated package exports it as ``WhileaiTaskset`` when ``verifiers.v1`` imports, so
    ``vf.load_taskset(vf.TasksetConfig(id="<name>"))`` finds it. Raises ImportError without verifiers 0.4.
    """
    import verifiers.v1 as vf

    from whileai_core.rows import read_jsonl

    here = Path(package_dir)
    spec = json.loads((here / "spec.json").read_text(encoding="utf-8"))
    rubric = make_rubric(spec["judge"])
    data_path = here / "data" / f"{split}.jsonl"

    class WhileaiData(vf.TaskData):
        answer: str = ""
        info: dict = {}  # noqa: RUF012 - a pydantic field default (copied per instance)

    class WhileaiTask(vf.Task[WhileaiData, vf.State, vf.TaskConfig]):
        @vf.reward(weight=1.0)
        async def judge_reward(self, task: WhileaiData, trace: vf.Trace) -> float:
            prompt = ([{"role": "system", "content": task.system_prompt}] if task.system_prompt else []) + [
                m if isinstance(m, dict) else m.model_dump(exclude_none=True) for m in (task.prompt or [])]
            return rubric(prompt=prompt, completion=trace.last_reply or "", answer=task.answer, info=task.info)

    class WhileaiTaskset(vf.Taskset[WhileaiTask, vf.TasksetConfig]):
        def load(self):
            for ex in read_jsonl(data_path) if data_path.exists() else []:
                system = next((m["content"] for m in ex["prompt"] if m.get("role") == "system"), None)
                turns = [m for m in ex["prompt"] if m.get("role") != "system"]
                yield WhileaiTask(WhileaiData(prompt=turns, system_prompt=system, id=ex["example_id"],
                                              answer=ex.get("answer", ""), info=ex.get("info") or {}),
                                  self.config.task)

    WhileaiTaskset.__module__ = WhileaiTask.__module__ = WhileaiData.__module__ = spec["name"]
    return WhileaiTaskset


@dataclass
class EnvironmentExport(ReportMapping):
    """What ``export_environment`` wrote: the package path, the split sizes, and how to load it."""

    path: str
    name: str
    judge: str
    n_train: int
    n_holdout: int
    moved: dict[str, str]
    files: list[str]

    def load(self, split: str = "train", **kwargs: Any) -> Any:
        """Load the written environment (verifiers env when importable, else ``Environment``)."""
        return load_environment(Path(self.path) / self.name, split=split, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "name": self.name, "judge": self.judge, "n_train": self.n_train,
                "n_holdout": self.n_holdout, "moved_to_train": dict(self.moved), "files": list(self.files)}

    def __str__(self) -> str:
        return (f"environment {self.name!r} at {self.path}: {self.n_train} train / {self.n_holdout} holdout tasks, "
                f"judge {self.judge}")


_MODULE = '''\
"""{name}: an RL environment exported by whileai (export_environment). Load with load_environment(split)."""

from pathlib import Path

from whileai_core.train.environment import load_environment as _load

HERE = Path(__file__).resolve().parent
__all__ = ["load_environment"]

try:  # verifiers 0.4: vf.load_taskset(vf.TasksetConfig(id="{name}")) finds this Taskset
    import verifiers.v1  # noqa: F401
except ImportError:
    pass
else:
    from whileai_core.train.environment import v1_taskset as _v1_taskset

    WhileaiTaskset = _v1_taskset(HERE)
    __all__ = ["load_environment", "WhileaiTaskset"]


def load_environment(split: str = "train", **kwargs):
    """One split's examples with the judge as rubric: a verifiers env when installed, else a plain Environment."""
    return _load(HERE, split=split, **kwargs)
'''

_PYPROJECT = '''\
[project]
name = "{name}"
version = "0.1.0"
description = "RL environment exported by whileai: {n_train} train / {n_holdout} holdout tasks"
dependencies = ["whileai"]

[project.optional-dependencies]
verifiers = ["verifiers"]

[tool.setuptools.packages.find]
include = ["{name}*"]

[tool.setuptools.package-data]
"{name}" = ["spec.json", "data/*.jsonl"]
'''

_README = '''\
# {name}

Exported by whileai. {n_train} train and {n_holdout} holdout tasks (split by task, holdout decontaminated
against train). Each example is `{{"example_id", "prompt", "answer", "info"}}`; the rubric grades a completion
with the judge `{judge}`.

```python
from {name} import load_environment
env = load_environment("train")      # verifiers SingleTurnEnv if verifiers is installed, else a plain Environment
```
'''


def export_environment(
    source: Any,
    out: str | os.PathLike[str],
    *,
    judge: Any = None,
    name: str = "whileai_env",
    system_prompt: str | None = None,
    holdout: float = HOLDOUT_FRACTION,
    seed: int = TRAIN_SEED,
    ngram: int = DECONTAM_NGRAM,
    overlap: float = DECONTAM_OVERLAP,
    include_privileged: bool = True,
    overwrite: bool = False,
    runtime: str = "verifiers",
    reward: Any = None,
) -> EnvironmentExport:
    """Write graded rows as an environment package under ``out`` and return an ``EnvironmentExport``.

    One example per task; ``holdout`` of the tasks (by ``wai.holdout``: groups intact, contaminated ones moved to
    train) go to ``data/holdout.jsonl``. ``judge`` must be importable (a module-level function or
    ``"module:attr"``). ``info`` carries the situation and, with ``include_privileged``, the privileged block the
    judge reads; the policy sees only ``prompt``. ``reward=`` is the SDK's name for ``judge=``.
    ``runtime="openenv"`` writes an OpenEnv package instead (``train.openenv``: reset / step / state, an
    ``openenv.yaml`` and a FastAPI server); the data and ``spec.json`` are the same.

    Args:
        source: graded rows or a JSONL path.
        out: the directory the package is written to.
        judge: an importable judge (a module-level function or ``"module:attr"``).
        name: the package name.
        system_prompt: the system prompt (default: the rows').
        holdout: the share of tasks held out (``HOLDOUT_FRACTION``). (``HOLDOUT_FRACTION``)
        seed: the split's seed. (``TRAIN_SEED``)
        ngram: the contamination check's n-gram size (``DECONTAM_NGRAM``). (``DECONTAM_NGRAM``)
        overlap: its overlap share (``DECONTAM_OVERLAP``). (``DECONTAM_OVERLAP``)
        include_privileged: put the privileged block in each example's ``info`` for the judge.
        overwrite: replace an existing package.
        runtime: ``"verifiers"`` (default: a module whose ``load_environment(split)`` builds the environment) or
            ``"openenv"`` (an OpenEnv package: models, server and ``openenv.yaml``); same data and ``spec.json``.
        reward: the SDK's name for ``judge``; pass one of them, not both. There is no default grader.

    Returns:
        An ``EnvironmentExport`` naming the files written.

    Raises:
        InvalidArgument: an argument out of range or of an unknown choice (a ``ValueError``); the message names it
            and the fix. Also: both ``judge`` and ``reward``, a ``name`` that is not a Python identifier, an empty
            ``source``, or a judge that is not importable as ``"module:attr"``.
        InvalidArgumentType: neither ``judge`` nor ``reward`` given, or a judge that is not callable (a
            ``TypeError``).
        FileExistsError: the output exists and ``overwrite`` is False.

    Example:
        ```python
        env = wai.export_environment(scored.rows, "env_out", judge="my_judges:reference_judge")
        ```
    """
    choice("runtime", runtime, RUNTIMES)
    judge = _judge_argument(judge, reward)
    if not isinstance(name, str) or not name.isidentifier():
        raise InvalidArgument(f"name= must be a Python identifier (it becomes the package name); got {name!r}")
    ref = judge_reference(judge)
    rows = as_rows(source, name="source")
    if not rows:
        raise InvalidArgument("source= is empty; pass graded rows (a run, a row list or a JSONL path)")
    system_prompt = system_prompt or getattr(source, "system_prompt", None)
    if holdout == 0:
        train_rows, hold_rows, moved = rows, [], {}
    else:
        from whileai_core.train.holdout import holdout as split_holdout

        split = split_holdout(rows, holdout, seed=seed, ngram=ngram, overlap=overlap)
        train_rows, hold_rows, moved = list(split.train), list(split.holdout), split.moved
    train_ex = build_examples(train_rows, system_prompt=system_prompt, include_privileged=include_privileged)
    hold_ex = build_examples(hold_rows, system_prompt=system_prompt, include_privileged=include_privileged)
    root = Path(out)
    pkg = root / name
    if pkg.exists() and not overwrite:
        raise FileExistsError(f"{pkg} exists; pass overwrite=True to replace it, or choose another out= or name=")
    files = [
        write_jsonl(pkg / "data" / "train.jsonl", train_ex, overwrite=True),
        write_jsonl(pkg / "data" / "holdout.jsonl", hold_ex, overwrite=True),
    ]
    spec = {"name": name, "judge": ref, "system_prompt": system_prompt, "n_train": len(train_ex),
            "n_holdout": len(hold_ex), "holdout": holdout, "seed": seed, "moved_to_train": moved,
            "include_privileged": include_privileged, "tools": _tools_of(source, rows)}
    fmt_args = {"name": name, "n_train": len(train_ex), "n_holdout": len(hold_ex), "judge": ref}
    spec["runtime"] = runtime
    files.append(atomic_write_text(pkg / "spec.json", json.dumps(spec, indent=2, default=str) + "\n", overwrite=True))
    if runtime == "openenv":
        from whileai_core.train.openenv import write_package

        files += write_package(root, name, n_train=len(train_ex), n_holdout=len(hold_ex), judge=ref)
    else:
        files.append(atomic_write_text(pkg / "__init__.py", textwrap.dedent(_MODULE.format(**fmt_args)),
                                       overwrite=True))
        files.append(atomic_write_text(root / "pyproject.toml", _PYPROJECT.format(**fmt_args), overwrite=True))
        files.append(atomic_write_text(root / "README.md", _README.format(**fmt_args), overwrite=True))
    return EnvironmentExport(path=str(root), name=name, judge=ref, n_train=len(train_ex), n_holdout=len(hold_ex),
                             moved=moved, files=[str(f) for f in files])


def _judge_argument(judge: Any, reward: Any) -> Any:
    """``judge=`` (ours) or ``reward=`` (the SDK's name), once; a clear error when neither is given."""
    if judge is not None and reward is not None:
        raise InvalidArgument("pass the grader once: judge= (ours) or reward= (the SDK's name), not both")
    judge = judge if judge is not None else reward
    if judge is None:
        raise InvalidArgumentType(
            "export_environment() needs judge=: the judge that grades each completion, importable in a fresh "
            "process, e.g. judge='my_evals:judge' or a module-level function (the SDK's reward= is accepted too)")
    return judge


def _tools_of(source: Any, rows: Sequence[Row]) -> list[dict[str, Any]]:
    from whileai_core.tools import schemas

    tools = getattr(source, "tools", None) or next((r.get("tools") for r in rows if r.get("tools")), None)
    try:
        return schemas(tools) if tools else []
    except (TypeError, ValueError):
        return []
