"""A headless Chromium driven over the DevTools protocol (aiohttp's websocket client): load a page from disk,
gather console errors and uncaught exceptions, evaluate expressions in it, take a screenshot.

One ``Chromium`` per test module (start: ~1 s); the browser is Debian's ``chromium`` (``.ci/run`` installs it),
started on 127.0.0.1 with a fresh profile and no network services, and stopped by the fixture that started it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0"]
WINDOW = (1200, 900)  # the report's checks; the docs site's are made at the width users reported (1400 px)
START_TIMEOUT_S = 90.0  # a hang guard: a loaded 2-core box starts Chromium slower
PAGE_TIMEOUT_S = 60.0


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    def __init__(self, binary: str, window: tuple[int, int] = WINDOW) -> None:
        self.profile = tempfile.mkdtemp(prefix="wai-chromium-")
        self.proc = subprocess.Popen([binary, *FLAGS, f"--window-size={window[0]},{window[1]}",
                                      f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("chromium did not start (no DevToolsActivePort)")
            time.sleep(0.05)
        self.port = int(port_file.read_text().splitlines()[0])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def inspect(self, path: os.PathLike[str] | str, expressions: dict[str, str], *,
                screenshot: os.PathLike[str] | str | None = None) -> dict[str, Any]:
        """Open ``path``, wait for load, and return {"errors": [...], name: value of each expression}."""
        return asyncio.run(asyncio.wait_for(self._inspect(Path(path), expressions, screenshot), PAGE_TIMEOUT_S))

    async def _inspect(self, path: Path, expressions: dict[str, str], screenshot: Any) -> dict[str, Any]:
        import aiohttp

        async with aiohttp.ClientSession() as http:
            async with http.put(f"http://127.0.0.1:{self.port}/json/new?about:blank") as resp:
                target = await resp.json(content_type=None)
            try:
                async with http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                    return await _drive(ws, path, expressions, screenshot)
            finally:
                async with http.get(f"http://127.0.0.1:{self.port}/json/close/{target['id']}") as resp:
                    await resp.read()


async def _drive(ws: Any, path: Path, expressions: dict[str, str], screenshot: Any) -> dict[str, Any]:
    ids = iter(range(1, 10**6))
    pending: dict[int, asyncio.Future[Any]] = {}
    errors: list[str] = []
    loaded = asyncio.get_running_loop().create_future()

    async def reader() -> None:
        async for msg in ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in pending:
                pending.pop(data["id"]).set_result(data)
            method = data.get("method")
            params = data.get("params", {})
            if method == "Runtime.exceptionThrown":
                errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(json.dumps(params.get("args", []))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                errors.append(str(params["entry"].get("text"))[:500])
            elif method == "Page.loadEventFired" and not loaded.done():
                loaded.set_result(True)

    async def call(method: str, **params: Any) -> Any:
        i = next(ids)
        pending[i] = asyncio.get_running_loop().create_future()
        await ws.send_str(json.dumps({"id": i, "method": method, "params": params}))
        data = await pending[i]
        if "error" in data:
            raise RuntimeError(f"{method}: {data['error']}")
        return data.get("result", {})

    task = asyncio.create_task(reader())
    try:
        for domain in ("Page", "Runtime", "Log"):
            await call(f"{domain}.enable")
        await call("Page.navigate", url=path.resolve().as_uri())
        await loaded
        await asyncio.sleep(0.3)  # let Plotly's first draw finish
        out: dict[str, Any] = {}
        for name, expr in expressions.items():
            res = await call("Runtime.evaluate", expression=expr, returnByValue=True)
            if "exceptionDetails" in res:
                raise RuntimeError(f"{name}: {res['exceptionDetails']}")
            out[name] = res["result"].get("value")
        if screenshot is not None:
            shot = await call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
            Path(screenshot).write_bytes(base64.b64decode(shot["data"]))
        out["errors"] = list(errors)
        return out
    finally:
        task.cancel()
