"""A loopback fake of the Hugging Face Hub routes huggingface_hub's ``create_repo``, ``upload_file`` and
``upload_folder`` call (create the repo, ask each file's upload mode, commit the files inline), for
tests/test_hub.py and the reference programs (tests/sdk_programs/reference/_run.py). Files land in ``repos``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Self
from urllib.parse import urlsplit

from fakeserver import FakeServer


class FakeHub:
    """The Hub's routes huggingface_hub's create_repo / upload_file / upload_folder call; files land in ``repos``."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, object]] = {}
        self.auth: list[str | None] = []
        self.server = FakeServer(router=self.route)

    def route(self, method: str, target: str, headers: Mapping[str, str], raw: bytes) -> tuple[int, object]:
        path = urlsplit(target).path
        self.auth.append({k.lower(): v for k, v in headers.items()}.get("authorization"))
        if method == "POST" and path == "/api/repos/create":
            body = json.loads(raw)
            kind = body.get("type") or "model"
            repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else body["name"]
            private = body.get("private", body.get("visibility", "public") == "private")  # older / newer clients
            self.repos.setdefault(repo_id, {"type": kind, "private": private, "files": {}})
            prefix = "" if kind == "model" else f"{kind}s/"
            return 200, {"url": f"{self.server.url}/{prefix}{repo_id}"}
        parts = path.split("/")  # /api/{type}s/{ns}/{name}/{preupload|commit}/{revision}
        if method == "POST" and len(parts) == 7 and parts[1] == "api" and parts[5] in ("preupload", "commit"):
            repo_id = f"{parts[3]}/{parts[4]}"
            if repo_id not in self.repos:
                return 404, {"error": f"repository {repo_id} not found"}
            if parts[5] == "preupload":
                files = json.loads(raw)["files"]
                return 200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                       for f in files]}
            for line in raw.decode().splitlines():
                entry = json.loads(line)
                if entry["key"] == "file":
                    self.repos[repo_id]["files"][entry["value"]["path"]] = base64.b64decode(entry["value"]["content"])
            oid = f"{len(self.repos[repo_id]['files']):040x}"
            return 200, {"commitUrl": f"{self.server.url}/{repo_id}/commit/{oid}", "commitOid": oid}
        return 404, {"error": f"no route {method} {path}"}

    def __enter__(self) -> Self:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
