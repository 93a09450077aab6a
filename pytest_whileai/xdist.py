"""pytest-xdist support: the controller sends the resolved baseline path to workers, and only the controller
aggregates, gates and writes.

Each scenario's entry leaves its worker on the test's own report (``session.attach_entry``), so the controller
has every finished scenario even when a worker crashes later; ``-n 0`` and ``-n 2`` give the same document and
verdict. At session end each worker also sends its results in ``workeroutput["whileai"]`` as a cross-check. A
worker that goes down with an error, or without that payload, is a crashed worker: the gate is red
(``incomplete``) and the partial run is not saved.
"""

from __future__ import annotations

from typing import Any

import pytest

PAYLOAD_KEY = "whileai"


class XdistHooks:
    """Registered only when xdist is active (the docs' deferred-plugin pattern)."""

    def __init__(self, wai: Any) -> None:
        self.wai = wai

    @pytest.hookimpl
    def pytest_configure_node(self, node: Any) -> None:
        if self.wai.seq_dir:
            node.workerinput["wai_seq_dir"] = self.wai.seq_dir
        if self.wai.baseline_requested is not None:
            node.workerinput["wai_baseline_paths"] = list(self.wai.baseline_paths)
            node.workerinput["wai_baseline_requested"] = self.wai.baseline_requested
        elif self.wai.baseline_path:
            node.workerinput["wai_baseline_path"] = self.wai.baseline_path
        elif self.wai.baseline_note:
            node.workerinput["wai_baseline_missing"] = self.wai.baseline_note

    @pytest.hookimpl
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.wai.rounds is not None:
            from pytest_whileai.collect import round_of

            self.wai.rounds.expect(ids, round_of)

    @pytest.hookimpl
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}) or {}
        node_id = str(output.get("workerid", getattr(node, "gateway", None) and node.gateway.id))
        if error is None and PAYLOAD_KEY in output:
            self.wai.merge_worker(node_id, output[PAYLOAD_KEY])
        else:  # crashed (error is its reason), or whileai was disabled on it
            self.wai.failed_workers.append(node_id)
            if self.wai.rounds is not None:  # its pending items go behind later rounds: no worker may wait now
                self.wai.rounds.release(f"xdist worker {node_id} crashed")


def publish(config: pytest.Config, wai: Any) -> None:
    """On a worker: put this worker's results where xdist sends them to the controller."""
    output = getattr(config, "workeroutput", None)
    if output is not None:
        output[PAYLOAD_KEY] = wai.worker_payload()
