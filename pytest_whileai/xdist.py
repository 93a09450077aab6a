"""pytest-xdist support: the controller sends the resolved baseline path to workers, workers send their
scenario results back in ``workeroutput["whileai"]``, and only the controller aggregates, gates and writes.

Each process gathers the results of the tests it ran in its ``WaiSession``; the controller merges the
workers' payloads (one entry per key), so ``-n 0`` and ``-n 2`` give the same document and verdict. A worker
that dies without sending its payload is named in the summary.
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
        if self.wai.baseline_path:
            node.workerinput["wai_baseline_path"] = self.wai.baseline_path
        elif self.wai.baseline_note:
            node.workerinput["wai_baseline_missing"] = self.wai.baseline_note

    @pytest.hookimpl
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}) or {}
        node_id = str(output.get("workerid", getattr(node, "gateway", None) and node.gateway.id))
        if PAYLOAD_KEY in output:
            self.wai.merge_worker(node_id, output[PAYLOAD_KEY])
        else:  # crashed, or whileai was disabled on it
            self.wai.failed_workers.append(node_id)


def publish(config: pytest.Config, wai: Any) -> None:
    """On a worker: put this worker's results where xdist sends them to the controller."""
    output = getattr(config, "workeroutput", None)
    if output is not None:
        output[PAYLOAD_KEY] = wai.worker_payload()
