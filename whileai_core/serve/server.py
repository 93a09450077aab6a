"""The served model's process: ``wai.serve`` starts it, health-checks it, and the handle stops it.

The engine runs as a child process in its own process group (a new session), writing its own log to a file.
The start polls ``GET /v1/models`` on the server until it lists the model, and fails with the log's last lines
when the process exits first or ``timeout_s`` passes. The handle stops the whole group (SIGTERM, then SIGKILL
after ``stop_grace_s``) when it closes, when it is garbage-collected, and at interpreter exit; on Linux the
child also gets ``PR_SET_PDEATHSIG`` (SIGKILL when the thread that started it dies), so it never outlives its
caller even when the caller is killed. Started from a thread other than the main one, the death signal is not
set (it would fire when that thread ends) and the exit hook alone stops it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from whileai_core.arguments import integer, positive
from whileai_core.defaults import (
    SERVE_HEALTH_TIMEOUT_S,
    SERVE_HOST,
    SERVE_LOG_TAIL_LINES,
    SERVE_POLL_S,
    SERVE_START_TIMEOUT_S,
    SERVE_STOP_GRACE_S,
)
from whileai_core.errors import InvalidArgumentType, ServeError
from whileai_core.serve.checkpoint import prepare
from whileai_core.serve.engines import Launch, choose, command

_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _death_signal() -> Any:
    """A preexec function that asks Linux to SIGKILL the child when its parent thread dies, or None.

    libc's ``prctl`` is looked up here, in the parent, so the child between fork and exec only calls it (no
    import, no lookup: nothing that could wait on a lock another thread held at fork)."""
    if sys.platform != "linux" or threading.current_thread() is not threading.main_thread():
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def _die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))

    return _die_with_parent


def _stop(proc: subprocess.Popen[bytes], grace_s: float, scratch: str | None, log: Any) -> None:
    """Stop ``proc``'s process group (SIGTERM, then SIGKILL), close its log, remove the scratch directory."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the group's other members (engine workers), and a stuck leader
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)
    with contextlib.suppress(OSError):
        log.close()
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _client_host(host: str) -> str:
    """Where a client on this machine reaches a server bound to ``host``."""
    if host in ("0.0.0.0", "", "::"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def _in_use(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=SERVE_HEALTH_TIMEOUT_S):
            return True
    except OSError:
        return False


def free_port(host: str = SERVE_HOST) -> int:
    """A TCP port that is free on ``host`` now (the OS picks it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class Server:
    """A running model server: ``.url`` (its OpenAI base URL), ``.endpoint`` (a ``wai.Endpoint`` on it),
    ``.model``, ``.engine``, ``.pid``, ``.notes``, ``log_tail()``, ``close()``; a context manager.

    Made by ``wai.serve``; closing it (or leaving the ``with`` block, or the interpreter exiting) stops the process
    group and removes its temp files. ``wai.serve`` fills in the constructor's arguments; you do not call it.

    Args:
        launch: the engine, its argv and the model id the server lists at ``/v1/models`` (``engines.command``).
        proc: the started server process (its own process group).
        host: the address the server is bound to; ``.url`` uses 127.0.0.1 for a wildcard bind.
        port: the TCP port the server listens on.
        log_path: the file holding the server's stdout and stderr (``log_tail()`` reads it).
        log: the open handle of ``log_path``, closed when the server stops.
        scratch: the temp directory removed when the server stops (None: nothing to remove).
        stop_grace_s: seconds between SIGTERM and SIGKILL on close (``serve`` passes its own, default
            ``defaults.SERVE_STOP_GRACE_S`` = 10).
        notes: what ``serve`` noted while preparing the checkpoint; the engine's notes are added after them.

    Example:
        ```pycon
        >>> with wai.serve("out/final") as server:   # doctest: +SKIP
        ...     print(server.url, server.model)
        ```
    """

    def __init__(self, launch: Launch, proc: subprocess.Popen[bytes], *, host: str, port: int, log_path: Path,
                 log: Any, scratch: str | None, stop_grace_s: float, notes: Sequence[str] = ()) -> None:
        self.engine = launch.engine
        self.model = launch.model
        self.argv = list(launch.argv)
        self.host = host
        self.port = port
        self.url = f"http://{_client_host(host)}:{port}/v1"
        self.log_path = log_path
        self.notes = [*notes, *launch.notes]
        self._proc = proc
        self._endpoint: Any = None
        self._finalizer = weakref.finalize(self, _stop, proc, stop_grace_s, scratch, log)

    @property
    def pid(self) -> int:
        return int(self._proc.pid)

    @property
    def alive(self) -> bool:
        """True while the server process runs."""
        return self._proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return self._proc.poll()

    @property
    def endpoint(self) -> Any:
        """A ``wai.Endpoint`` pointed at this server, ready for ``simulate``, ``prove`` and the plugin."""
        if self._endpoint is None:
            from whileai_core.models.endpoint import Endpoint

            provider = "vllm" if self.engine == "vllm" else "endpoint"
            self._endpoint = Endpoint(self.model, url=self.url, provider=provider)
        return self._endpoint

    def log_tail(self, lines: int = SERVE_LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of the server's own log (stdout and stderr)."""
        try:
            text = self.log_path.read_bytes()[-200_000:].decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.replace("\r", "\n").splitlines()[-lines:])

    def wait(self, timeout: float | None = None) -> int | None:
        """Block until the server exits (or ``timeout`` passes); its exit status, or None while it runs."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self._proc.wait(timeout=timeout)
        return None

    def close(self) -> None:
        """Stop the server's process group and remove its temp files (idempotent)."""
        if self._endpoint is not None:
            with contextlib.suppress(Exception):
                self._endpoint.close()
        self._finalizer()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.alive else f"stopped (exit {self.returncode})"
        return f"Server(engine={self.engine!r}, model={self.model!r}, url={self.url!r}, pid={self.pid}, {state})"

    __str__ = __repr__


def _health(server: Server, timeout_s: float, poll_s: float) -> None:
    """Poll ``GET /v1/models`` until it lists the model; raise ServeError (with the log tail) otherwise."""
    import httpx

    deadline = time.monotonic() + timeout_s
    seen = "no answer yet"
    while True:
        if not server.alive:
            raise ServeError(f"the {server.engine} server exited with status {server.returncode} before it answered "
                             f"GET {server.url}/models", engine=server.engine, log_tail=server.log_tail(),
                             returncode=server.returncode)
        try:
            reply = httpx.get(f"{server.url}/models", timeout=SERVE_HEALTH_TIMEOUT_S)
            ids = [m.get("id") for m in reply.json().get("data", [])] if reply.status_code == 200 else []
            if server.model in ids:
                return
            seen = f"HTTP {reply.status_code}, models {ids}"
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            seen = type(exc).__name__
        if time.monotonic() >= deadline:
            raise ServeError(f"the {server.engine} server did not list {server.model!r} at GET {server.url}/models "
                             f"within timeout_s={timeout_s:g} (last answer: {seen}); raise timeout_s= for a large "
                             "model", engine=server.engine, log_tail=server.log_tail())
        time.sleep(poll_s)


def _child_env(env: Mapping[str, str] | None) -> dict[str, str]:
    out = {**os.environ, **_OFFLINE, "PYTHONUNBUFFERED": "1"}
    out.update(env or {})
    return out


def serve(checkpoint_or_model: Any, engine: str = "auto", port: int | None = None, host: str = SERVE_HOST, *,
          timeout_s: float = SERVE_START_TIMEOUT_S, poll_s: float = SERVE_POLL_S,
          stop_grace_s: float = SERVE_STOP_GRACE_S, args: Sequence[str] = (),
          env: Mapping[str, str] | None = None) -> Server:
    """Start an OpenAI-compatible server for a local checkpoint and return its handle once it answers.

    Args:
        checkpoint_or_model: a checkpoint directory (full weights, or a PEFT LoRA adapter whose base is a local
            directory), a ``TrainResult`` or a ``LocalModel`` loaded from a path.
        engine: ``"auto"`` (vLLM when it is installed and a CUDA GPU is visible, else transformers),
            ``"transformers"`` (``transformers serve``, CPU or GPU) or ``"vllm"``.
        port: the TCP port; None picks a free one.
        host: where to bind; default ``SERVE_HOST`` (127.0.0.1, loopback). Any other address is warned about.
        timeout_s: how long to wait for ``GET /v1/models`` to list the model (``SERVE_START_TIMEOUT_S`` 300).
        poll_s: seconds between health checks (``SERVE_POLL_S`` 0.25).
        stop_grace_s: SIGTERM to SIGKILL on close (``SERVE_STOP_GRACE_S`` 10).
        args: extra command-line flags for the engine (e.g. ``["--device", "cpu"]``).
        env: extra environment for the server; ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` are always set.

    Returns:
        A ``Server``: ``.endpoint`` (a ``wai.Endpoint``), ``.url``, ``.model``, ``.log_tail()``, ``.close()``;
        use it as a context manager. A LoRA adapter under transformers is merged first (``.notes`` says so).

    Raises:
        InvalidArgument: an unknown engine, a bad port/timeout, or a path that is not a local checkpoint.
        InvalidArgumentType: an object that carries no checkpoint directory.
        ServeError: the engine (or peft, for an adapter) is not installed, or the server exited or missed its
            health check; the message carries the last lines of the server's own log.

    Example:
        ```pycon
        >>> with wai.serve("out/final", engine="transformers") as server:   # doctest: +SKIP
        ...     data = wai.simulate(server.endpoint, tools=[get_order], system_prompt=SYSTEM)
        ```
    """
    engine = choose(engine)
    positive("timeout_s", timeout_s)
    positive("poll_s", poll_s)
    positive("stop_grace_s", stop_grace_s)
    if not isinstance(host, str) or not host:
        raise InvalidArgumentType(f"host= must be an address string such as '127.0.0.1'; got {host!r}")
    port = free_port(host) if port is None else integer("port", port, minimum=1)
    if _in_use(_client_host(host).strip("[]"), port):
        raise ServeError(f"port {port} on {host} is already in use (another server would answer the health check); "
                         "pass another port= or port=None for a free one", engine=engine)
    if not _loopback(host):
        warnings.warn(f"serve(host={host!r}) binds beyond loopback: anyone who reaches this machine on port {port} "
                      "can call the model, with no key. Use the default host='127.0.0.1' unless you mean it",
                      UserWarning, stacklevel=2)
    scratch = tempfile.mkdtemp(prefix="whileai-serve-")
    try:
        ckpt = prepare(checkpoint_or_model, engine, Path(scratch))
        launch = command(engine, ckpt.model_dir, host=host, port=port, adapter=ckpt.adapter,
                         adapter_rank=ckpt.adapter_rank, args=list(args))
        log_path = Path(scratch) / "server.log"
        log = open(log_path, "wb")  # noqa: SIM115 - closed by the handle
        proc = subprocess.Popen(launch.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=_child_env(env), start_new_session=True,
                                preexec_fn=_death_signal())  # noqa: PLW1509 - only prctl, looked up before the fork
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    server = Server(launch, proc, host=host, port=port, log_path=log_path, log=log, scratch=scratch,
                    stop_grace_s=stop_grace_s, notes=ckpt.notes)
    try:
        _health(server, timeout_s, poll_s)
    except BaseException:
        server.close()
        raise
    return server


__all__ = ["Server", "free_port", "serve"]
