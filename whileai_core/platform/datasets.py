"""Datasets on the platform: push rows (create, presigned upload, finalize), pull them back, list them.

Push is three calls (reference §5.5): ``POST /datasets {name, purpose, mode, agent, description, parentDatasetId}``
answers ``{datasetId, uploadUrl}``; the rows go as JSONL to ``PUT <uploadUrl>`` (no key header, a timeout of
PLATFORM_PUT_TIMEOUT_S + PLATFORM_PUT_S_PER_MB per MB); ``POST /datasets/{id}/finalize`` seals it.
``holdout=`` pushes a second dataset, purpose ``holdout``, linked to the first by ``parentDatasetId``, split by
task with ``wai.holdout`` (every rollout of a task on one side; the SDK splits by a sha256 bucket of the scenario
id, the same idea).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from whileai_core.arguments import choice
from whileai_core.defaults import HOLDOUT_FRACTION, PLATFORM_PUT_S_PER_MB, PLATFORM_PUT_TIMEOUT_S, TRAIN_SEED
from whileai_core.errors import InvalidArgument, PlatformError
from whileai_core.platform.client import Client, connect
from whileai_core.rowlist import RowList
from whileai_core.rows import as_rows, group_rows, jsonl_text

PURPOSES = ("train", "holdout", "eval")  # reference §5.5
MODES = ("explore", "sft", "rl", "adaptive")  # reference §5.5
JSONL = "application/jsonl"  # the upload's Content-Type (reference §5.5)


@dataclass(frozen=True)
class Dataset:
    """A pushed dataset: its id, name, purpose, rows and tasks sent, and the linked holdout when one was pushed."""

    id: str
    name: str
    purpose: str
    n_rows: int
    n_tasks: int
    holdout: Dataset | None = None

    def __str__(self) -> str:
        line = f"dataset {self.id} ({self.name!r}, {self.purpose}): {self.n_rows} rows over {self.n_tasks} tasks"
        if self.holdout is not None:
            line += f"; holdout {self.holdout.id}: {self.holdout.n_rows} rows over {self.holdout.n_tasks} tasks"
        return line


def _upload(c: Client, rows: list[dict[str, Any]], *, name: str, purpose: str, mode: str, agent: str | None,
            description: str | None, parent: str | None, put_timeout_s: float, put_s_per_mb: float) -> Dataset:
    body = jsonl_text(rows).encode("utf-8")
    made = c.request("POST", "/datasets", json_body={"name": name, "purpose": purpose, "mode": mode, "agent": agent,
                                                      "description": description, "parentDatasetId": parent})
    if not isinstance(made, Mapping) or not made.get("datasetId") or not made.get("uploadUrl"):
        raise PlatformError("POST /datasets did not answer a datasetId and an uploadUrl", route="POST /datasets")
    ds_id = str(made["datasetId"])
    c.put_presigned(str(made["uploadUrl"]), body, content_type=JSONL,
                    timeout=put_timeout_s + put_s_per_mb * len(body) / 1e6)
    c.request("POST", f"/datasets/{ds_id}/finalize")
    return Dataset(id=ds_id, name=name, purpose=purpose, n_rows=len(rows), n_tasks=len(group_rows(rows)))


def push(rows: Any, name: str, *, purpose: str = "train", mode: str = "rl", holdout: Any = None,
         agent: str | None = None, description: str | None = None, seed: int = TRAIN_SEED,
         put_timeout_s: float = PLATFORM_PUT_TIMEOUT_S, put_s_per_mb: float = PLATFORM_PUT_S_PER_MB,
         api_key: str | None = None, api_url: str | None = None, client: Client | None = None) -> Dataset:
    """Upload rows as a platform dataset.

    Args:
        rows: rows, a RowList/ScoredData/Selection, or a JSONL path.
        name: the dataset's name.
        purpose: ``train`` (default), ``holdout`` or ``eval``.
        mode: ``explore``, ``sft``, ``rl`` (default) or ``adaptive``.
        holdout: None (no holdout), True (hold out HOLDOUT_FRACTION of tasks), a fraction in (0, 1), or rows
            already held out. The holdout is pushed as a second dataset linked to the first.
        agent: shown on the platform.
        description: shown on the platform.
        seed: the seed of the task split (TRAIN_SEED).
        put_timeout_s: the upload timeout's base.
        put_s_per_mb: the upload timeout added per MB.
        api_key: see ``Client``.
        api_url: see ``Client``.
        client: an open ``Client`` to reuse.

    Returns:
        the ``Dataset`` (with ``.holdout`` when one was pushed).

    Raises:
        InvalidArgument: a bad purpose/mode, no rows, or a holdout that cannot be split.
        PlatformError: the service refused a call (its status and message).

    Example::

        ds = platform.push(scored, "support-v3", holdout=0.2)
        print(ds)
    """
    choice("purpose", purpose, PURPOSES)
    choice("mode", mode, MODES)
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument("name= must be a non-empty string naming the dataset")
    data = [dict(r) for r in as_rows(rows, name="rows")]
    if not data:
        raise InvalidArgument("nothing to push: rows is empty")
    held: list[dict[str, Any]] | None = None
    if holdout is not None and holdout is not False:
        data, held = _split(rows, data, holdout, seed)
    with connect(client, api_key, api_url) as c:
        main = _upload(c, data, name=name, purpose=purpose, mode=mode, agent=agent, description=description,
                       parent=None, put_timeout_s=put_timeout_s, put_s_per_mb=put_s_per_mb)
        if held is None:
            return main
        side = _upload(c, held, name=f"{name}-holdout", purpose="holdout", mode=mode, agent=agent,
                       description=description, parent=main.id, put_timeout_s=put_timeout_s,
                       put_s_per_mb=put_s_per_mb)
        return Dataset(id=main.id, name=main.name, purpose=main.purpose, n_rows=main.n_rows, n_tasks=main.n_tasks,
                       holdout=side)


def _split(source: Any, data: list[dict[str, Any]], holdout: Any,
           seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train rows, holdout rows) from ``holdout=``: True, a fraction, or rows."""
    if holdout is True or isinstance(holdout, float):
        from whileai_core.train.holdout import holdout as split_by_task

        split = split_by_task(data, HOLDOUT_FRACTION if holdout is True else holdout, seed=seed)
        return list(split.train), list(split.holdout)
    held = [dict(r) for r in as_rows(holdout, name="holdout")]
    if not held:
        raise InvalidArgument("holdout= rows are empty; pass None for no holdout")
    return data, held


def pull(dataset: Any, *, api_key: str | None = None, api_url: str | None = None,
         client: Client | None = None) -> RowList:
    """The rows of a platform dataset (``GET /datasets/{id}/download``, then its presigned ``downloadUrl``).

    ``dataset`` is a dataset id or a ``Dataset``. Raises PlatformError (e.g. 404 for an unknown id)."""
    ds_id = dataset.id if isinstance(dataset, Dataset) else str(dataset)
    with connect(client, api_key, api_url) as c:
        where = c.request("GET", f"/datasets/{ds_id}/download")
        if not isinstance(where, Mapping) or not where.get("downloadUrl"):
            raise PlatformError("the answer named no downloadUrl", route=f"GET /datasets/{ds_id}/download")
        raw = c.get_presigned(str(where["downloadUrl"]))
    rows = []
    for lineno, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                raise PlatformError(f"line {lineno} of dataset {ds_id} is not JSON",
                                    route=f"GET /datasets/{ds_id}/download") from None
    return RowList(rows)


def datasets(*, api_key: str | None = None, api_url: str | None = None,
             client: Client | None = None) -> list[dict[str, Any]]:
    """The account's datasets (``GET /datasets``), as the service describes them."""
    with connect(client, api_key, api_url) as c:
        answer = c.request("GET", "/datasets")
    if isinstance(answer, Mapping):
        answer = answer.get("datasets", [])
    return list(answer or [])
