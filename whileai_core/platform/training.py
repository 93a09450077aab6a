"""Hosted training, its runs, and serving a trained run.

``train`` first runs a pre-flight check on the dataset's rows with the select step itself (``wai.select``), so
the platform is never asked to train on data that cannot teach that method: a grouped method (grpo, dpo, rm)
needs groups that hold both a pass and a fail ("mixed"), or every group-relative advantage is zero; SFT must
not imitate failing rows. The SDK reads a server-side ``GET /datasets/{id}/profile`` for this; its shape is not
in the reference, so here the rows are pulled (``GET /datasets/{id}/download``) and selected locally: the check
is then exactly the logic ``wai.select`` prints.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from whileai_core.arguments import choice, integer, positive
from whileai_core.defaults import PLATFORM_MIN_MIXED_TASKS, PLATFORM_TRAIN_POLL_S, PLATFORM_TRAIN_TIMEOUT_S
from whileai_core.errors import InvalidArgument, PlatformError, TrainingSelectionError
from whileai_core.platform.client import Client, connect
from whileai_core.platform.datasets import Dataset, pull

METHODS = ("sft", "grpo", "dpo", "rm")  # reference §5.5
GROUPED = ("grpo", "dpo", "rm")  # methods that learn from the contrast inside a group
CHECKS = ("require", "warn", "off")
DONE = ("succeeded", "failed", "cancelled")  # terminal run statuses; the reference names none, these are ours


@dataclass(frozen=True)
class Run:
    """A training run on the platform, as ``GET /runs/{id}`` describes it."""

    id: str
    status: str
    method: str | None = None
    dataset: str | None = None
    adapter: str | None = None
    base_model: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Run:
        return cls(id=str(data.get("runId") or data.get("id")), status=str(data.get("status") or "queued"),
                   method=data.get("method"), dataset=data.get("datasetId"), adapter=data.get("adapter"),
                   base_model=data.get("baseModel") or data.get("base"), raw=dict(data))

    def __str__(self) -> str:
        what = f"{self.method} on {self.dataset}" if self.method else "run"
        return f"run {self.id}: {what}, {self.status}" + (f", adapter {self.adapter}" if self.adapter else "")


def preflight(rows: Any, method: str, *, min_mixed_tasks: int = PLATFORM_MIN_MIXED_TASKS) -> dict[str, Any]:
    """What the select step says about training ``method`` on ``rows``: ``{"ok", "problem", "warning", "report"}``.

    Grouped methods count the groups ``wai.select(mode="rl", band=(0, 1))`` keeps (a full band, so only the groups
    with no contrast are dropped: unanimous, single-rollout, collapsed by dedupe); 0 is a problem, fewer than
    ``min_mixed_tasks`` a warning. SFT counts the rows ``wai.select(mode="sft")`` finds not passing; any is a
    problem (SFT would imitate them).
    """
    from whileai_core.select.select import select

    choice("method", method, METHODS)
    integer("min_mixed_tasks", min_mixed_tasks, minimum=1)
    if method in GROUPED:
        report = select(rows, mode="rl", band=(0.0, 1.0), quiet=True).report
        mixed = report["groups_selected"]
        u = report["unanimous"]
        problem = warning = None
        if mixed == 0:
            problem = (f"{method} needs groups with both a pass and a fail, and this dataset has none: "
                       f"{u['all_pass']} groups all pass, {u['all_fail']} all fail, "
                       f"{report['singleton_groups_dropped']} have one rollout, "
                       f"{report['n'] - report['n_after_gates']} rows could not vote (errors, empty replies, "
                       "labels not 0/1); raise repeats= in simulate, or train sft on the passing rows")
        elif mixed < min_mixed_tasks:
            warning = f"only {mixed} mixed task(s) (fewer than {min_mixed_tasks}): {method} will learn from little"
        return {"ok": problem is None, "problem": problem, "warning": warning, "report": report,
                "mixed_tasks": mixed}
    report = select(rows, mode="sft", quiet=True).report
    failing = report["n_not_pass"]
    problem = (f"sft would imitate {failing} row(s) that do not pass (reward < {report['min_reward']:g}); push "
               "wai.select(rows, mode='sft') instead") if failing else None
    return {"ok": problem is None, "problem": problem, "warning": None, "report": report, "mixed_tasks": None}


def _check(c: Client, ds_id: str, method: str, check: str, min_mixed_tasks: int) -> None:
    if check == "off":
        return
    verdict = preflight(pull(ds_id, client=c), method, min_mixed_tasks=min_mixed_tasks)
    if verdict["problem"]:
        if check == "require":
            raise TrainingSelectionError(f"pre-flight refused dataset {ds_id}: {verdict['problem']} "
                                         "(check='warn' to train anyway)", report=verdict["report"])
        warnings.warn(f"pre-flight, dataset {ds_id}: {verdict['problem']}", stacklevel=3)
    if verdict["warning"]:
        warnings.warn(f"pre-flight, dataset {ds_id}: {verdict['warning']}", stacklevel=3)


def train(dataset: Any, *, method: str = "sft", steps: int | None = None, epochs: int | None = None,
          holdout: Any = None, base_model: str | None = None, learning_rate: float | None = None,
          seed: int | None = None, truncated: str = "mask", check: str = "require",
          min_mixed_tasks: int = PLATFORM_MIN_MIXED_TASKS, wait: bool = False,
          timeout: float = PLATFORM_TRAIN_TIMEOUT_S, poll: float = PLATFORM_TRAIN_POLL_S,
          api_key: str | None = None, api_url: str | None = None, client: Client | None = None) -> Run:
    """Train on a platform dataset (``POST /datasets/{id}/train``), after the pre-flight selection check.

    Args:
        dataset: a dataset id or a ``Dataset`` from ``push`` (its linked holdout is used unless ``holdout=``).
        method: ``sft`` (default), ``grpo``, ``dpo`` or ``rm``.
        steps: the run's steps (None lets the service choose).
        epochs: the run's epochs (None lets the service choose).
        learning_rate: the run's learning rate (None lets the service choose).
        seed: the run's seed (None lets the service choose).
        base_model: the run's base model (None lets the service choose).
        holdout: a holdout dataset id or ``Dataset``.
        truncated: ``mask`` (default) or ``zero``: what the loss does with truncated rows.
        check: ``require`` (default: refuse with TrainingSelectionError), ``warn``, or ``off`` (see ``preflight``).
        min_mixed_tasks: fewer mixed tasks than this warns (PLATFORM_MIN_MIXED_TASKS).
        wait: poll ``GET /runs/{id}`` every ``poll`` seconds until the run ends or ``timeout`` passes.
        api_key: see ``Client``.
        api_url: see ``Client``.
        client: an open ``Client`` to reuse.

    Returns:
        the ``Run``.

    Raises:
        TrainingSelectionError: the pre-flight refused the dataset (``err.report`` is select's report).
        InvalidArgument: a bad method, knob or check.
        PlatformError: the service refused (e.g. 404 for an unknown dataset).

    Example::

        run = platform.train(ds, method="grpo", steps=200, wait=True)
        print(run)
    """
    choice("method", method, METHODS)
    choice("check", check, CHECKS)
    choice("truncated", truncated, ("mask", "zero"))
    for name, value in (("steps", steps), ("epochs", epochs)):
        if value is not None:
            integer(name, value, minimum=1)
    if learning_rate is not None:
        positive("learning_rate", learning_rate)
    positive("timeout", timeout)
    positive("poll", poll)
    ds_id = dataset.id if isinstance(dataset, Dataset) else str(dataset)
    if holdout is None and isinstance(dataset, Dataset) and dataset.holdout is not None:
        holdout = dataset.holdout
    holdout_id = holdout.id if isinstance(holdout, Dataset) else holdout
    with connect(client, api_key, api_url) as c:
        _check(c, ds_id, method, check, min_mixed_tasks)
        answer = c.request("POST", f"/datasets/{ds_id}/train", json_body={
            "method": method, "steps": steps, "epochs": epochs, "holdoutId": holdout_id, "base": base_model,
            "lr": learning_rate, "seed": seed, "maskTruncated": truncated == "mask"})
        training = answer.get("training") if isinstance(answer, Mapping) else None
        if not isinstance(training, Mapping) or not training.get("runId"):
            raise PlatformError("the answer named no training.runId", route=f"POST /datasets/{ds_id}/train")
        current = Run.from_wire({"datasetId": ds_id, "method": method, **training})
        deadline = time.monotonic() + timeout
        while wait and current.status not in DONE and time.monotonic() < deadline:
            time.sleep(poll)
            current = run(current.id, client=c)
        return current


def run(run_id: str, *, api_key: str | None = None, api_url: str | None = None, client: Client | None = None) -> Run:
    """One run (``GET /runs/{id}``)."""
    with connect(client, api_key, api_url) as c:
        return Run.from_wire(c.request("GET", f"/runs/{run_id}"))


def runs(*, api_key: str | None = None, api_url: str | None = None, client: Client | None = None) -> list[Run]:
    """The account's runs (``GET /runs``), newest first as the service orders them."""
    with connect(client, api_key, api_url) as c:
        answer = c.request("GET", "/runs")
    items = answer.get("runs", []) if isinstance(answer, Mapping) else answer
    return [Run.from_wire(r) for r in items or []]


@dataclass(frozen=True)
class ServedModel:
    """A model the platform serves: its name, base, and OpenAI-compatible endpoint URL."""

    name: str
    endpoint: str
    base_model: str | None = None
    run: str | None = None

    def __str__(self) -> str:
        base = f" (base {self.base_model})" if self.base_model else ""
        return f"model {self.name} served at {self.endpoint}{base}"

    def as_endpoint(self, *, api_key: str | None = None) -> Any:
        """A ``wai.Endpoint`` pointed at it, ready for ``simulate`` and ``prove``."""
        from whileai_core.models.endpoint import Endpoint

        return Endpoint(self.name, url=self.endpoint, api_key=api_key)


def serve(name: str, run_or_id: Any, *, base_model: str | None = None, api_key: str | None = None,
          api_url: str | None = None, client: Client | None = None) -> ServedModel:
    """Serve a finished run's adapter (``POST /models {name, baseModel, adapter}``; the name is lowercased).

    Raises InvalidArgument for an unfinished run or one with no adapter, PlatformError when the service refuses."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument("name= must be a non-empty string naming the served model")
    with connect(client, api_key, api_url) as c:
        current = run_or_id if isinstance(run_or_id, Run) and run_or_id.adapter else run(str(
            getattr(run_or_id, "id", run_or_id)), client=c)
        if current.status != "succeeded" or not current.adapter:
            raise InvalidArgument(f"run {current.id} is {current.status!r} with no adapter yet; serve needs a "
                                  "succeeded run (train(..., wait=True), or platform.run(id) to check)")
        base = base_model or current.base_model
        answer = c.request("POST", "/models", json_body={"name": name.lower(), "baseModel": base,
                                                          "adapter": current.adapter})
    if not isinstance(answer, Mapping) or not answer.get("endpoint"):
        raise PlatformError("the answer named no endpoint", route="POST /models")
    return ServedModel(name=str(answer.get("name") or name.lower()), endpoint=str(answer["endpoint"]),
                       base_model=answer.get("baseModel") or base, run=current.id)
