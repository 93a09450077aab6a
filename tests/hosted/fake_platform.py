"""A loopback fake of the While platform's routes (reference §5.5), served by tests/fakeserver.py's router hook.

It holds its state in memory and checks what the real service would: the ``X-Api-Key`` header on every account
route (401 otherwise, and the 401 message echoes the key it was given, so the tests can prove the client scrubs
it), no key on the presigned upload, finalize before download. Unknown ids are 404 with
``{"error": "not_found", "message": ...}``, the error shape the client reads. ``token_script`` is what
``POST /device/token`` answers, in order (an RFC 8628 error code, or ``"ok"`` for the key).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fakeserver import FakeServer

KEY = "zp_test_4f9c2a7d1e8b_secret"


class FakePlatform:
    """``with FakePlatform() as fake: fake.url`` ... (a FakeServer with a router; stopped on exit)."""

    def __init__(self, *, token_script: tuple[str, ...] = ("ok",), run_polls_to_finish: int = 2) -> None:
        self.token_script = list(token_script)
        self.run_polls_to_finish = run_polls_to_finish
        self.datasets: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.models: dict[str, dict[str, Any]] = {}
        self.agents: dict[str, dict[str, Any]] = {}
        self.server = FakeServer(router=self.route)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self) -> list[dict[str, Any]]:
        return list(self.server.requests)

    def __enter__(self) -> FakePlatform:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    # ---- routing -------------------------------------------------------------------------------
    def route(self, method: str, target: str, headers: Mapping[str, str], raw: bytes) -> tuple[int, Any]:
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        if path.startswith("/upload/"):
            return self._upload(method, path.rsplit("/", 1)[1], headers, raw)
        if path.startswith("/blob/"):
            ds = self.datasets.get(path.rsplit("/", 1)[1])
            return (200, ds["blob"]) if ds else (404, {"error": "not_found", "message": "no such blob"})
        body = json.loads(raw) if raw else {}
        if path == "/device/code" and method == "POST":
            return 200, {"device_code": "dev-123", "user_code": "WDJB-MJHT", "verification_uri": self.url + "/device",
                         "verification_uri_complete": self.url + "/device?user_code=WDJB-MJHT", "expires_in": 60,
                         "interval": 0}
        if path == "/device/token" and method == "POST":
            step = self.token_script.pop(0) if self.token_script else "expired_token"
            if body.get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code":
                return 400, {"error": "unsupported_grant_type"}
            return (200, {"api_key": KEY}) if step == "ok" else (400, {"error": step})
        given = headers.get("x-api-key")
        if given != KEY:
            return 401, {"error": "unauthorized", "message": f"key {given!r} is not valid"}
        return self._account_route(method, path, query, body)

    def _account_route(self, method: str, path: str, query: Mapping[str, list[str]], body: Any) -> tuple[int, Any]:
        if (method, path) == ("GET", "/me"):
            return 200, {"email": "dev@example.com"}
        if (method, path) == ("POST", "/datasets"):
            ds_id = f"ds_{len(self.datasets) + 1}"
            self.datasets[ds_id] = {"meta": body, "blob": None, "finalized": False}
            return 201, {"datasetId": ds_id, "uploadUrl": f"{self.url}/upload/{ds_id}?sig=abc"}
        if (method, path) == ("GET", "/datasets"):
            return 200, {"datasets": [{"id": k, **v["meta"]} for k, v in self.datasets.items()]}
        m = re.fullmatch(r"/datasets/([^/]+)/(finalize|download|train)", path)
        if m:
            return self._dataset_route(method, m.group(1), m.group(2), body)
        m = re.fullmatch(r"/runs/([^/]+)(/train|/evals)?", path)
        if m:
            return self._run_route(method, m.group(1), m.group(2), body)
        if (method, path) == ("GET", "/runs"):
            agent = (query.get("agent") or [None])[0]
            return 200, {"runs": [r for r in self.runs.values() if agent is None or r.get("agentId") == agent]}
        if (method, path) == ("POST", "/runs"):
            run_id = f"r_{len(self.runs) + 1}"
            self.runs[run_id] = {"runId": run_id, "status": "running", "points": [], "evals": [], **body}
            return 201, {"runId": run_id}
        if (method, path) == ("POST", "/models"):
            self.models[body["name"]] = body
            return 201, {"name": body["name"], "baseModel": body["baseModel"],
                         "endpoint": f"{self.url}/models/{body['name']}/v1"}
        if (method, path) == ("POST", "/agents"):
            agent_id = f"ag_{len(self.agents) + 1}"
            self.agents[agent_id] = {"name": body["name"], "behaviors": {}}
            return 201, {"agentId": agent_id}
        m = re.fullmatch(r"/agents/([^/]+)/behaviors/([^/]+)", path)
        if m and method == "PUT" and m.group(1) in self.agents:
            self.agents[m.group(1)]["behaviors"][m.group(2)] = body
            return 200, {}
        return 404, {"error": "not_found", "message": f"no route {method} {path}"}

    def _upload(self, method: str, ds_id: str, headers: Mapping[str, str], raw: bytes) -> tuple[int, Any]:
        if method != "PUT" or ds_id not in self.datasets:
            return 404, {"error": "not_found", "message": "no such upload"}
        if "x-api-key" in headers:  # a presigned URL belongs to a storage host: the key must never go there
            return 400, {"error": "key_sent_to_storage", "message": "the account key reached the upload URL"}
        if headers.get("content-type") != "application/jsonl":
            return 400, {"error": "bad_content_type", "message": headers.get("content-type", "")}
        self.datasets[ds_id]["blob"] = raw
        return 200, {}

    def _dataset_route(self, method: str, ds_id: str, action: str, body: Any) -> tuple[int, Any]:
        ds = self.datasets.get(ds_id)
        if ds is None:
            return 404, {"error": "not_found", "message": f"no dataset {ds_id}"}
        if action == "finalize" and method == "POST":
            if ds["blob"] is None:
                return 409, {"error": "not_uploaded", "message": f"nothing was uploaded to {ds_id}"}
            ds["finalized"] = True
            return 200, {"datasetId": ds_id, "rows": ds["blob"].count(b"\n")}
        if not ds["finalized"]:
            return 409, {"error": "not_finalized", "message": f"dataset {ds_id} is not finalized"}
        if action == "download" and method == "GET":
            return 200, {"downloadUrl": f"{self.url}/blob/{ds_id}"}
        if action == "train" and method == "POST":
            run_id = f"r_{len(self.runs) + 1}"
            self.runs[run_id] = {"runId": run_id, "status": "queued", "datasetId": ds_id, "polls": 0,
                                 "baseModel": body.get("base") or "Qwen/Qwen3-0.6B", "request": body}
            return 201, {"training": {"runId": run_id, "status": "queued"}}
        return 404, {"error": "not_found", "message": f"no route {method} /datasets/{ds_id}/{action}"}

    def _run_route(self, method: str, run_id: str, action: str | None, body: Any) -> tuple[int, Any]:
        run = self.runs.get(run_id)
        if run is None:
            return 404, {"error": "not_found", "message": f"no run {run_id}"}
        if action is None and method == "GET":
            if "polls" in run:  # a platform training run moves queued -> running -> succeeded as it is polled
                run["polls"] += 1
                if run["polls"] >= self.run_polls_to_finish:
                    run.update(status="succeeded", adapter=f"adapters/{run_id}")
                else:
                    run["status"] = "running"
            return 200, {k: v for k, v in run.items() if k not in ("polls", "request")}
        if action is None and method == "PATCH":
            run.update(body)
            return 200, {}
        if action == "/train" and method == "POST":
            run["points"].extend(body["points"])
            return 200, {}
        if action == "/evals" and method == "POST":
            run["evals"].append(body)
            return 200, {}
        return 404, {"error": "not_found", "message": f"no route {method} /runs/{run_id}{action or ''}"}
