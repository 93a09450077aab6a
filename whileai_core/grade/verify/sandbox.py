"""A process sandbox for model-written code: ``run_sandboxed`` says what it enforces and how it degrades.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from whileai_core.arguments import integer
from whileai_core.defaults import (
    CODE_CPU_S,
    CODE_FSIZE_MB,
    CODE_KILL_ROUNDS,
    CODE_MEM_MB,
    CODE_NOFILE,
    CODE_NPROC,
    CODE_OUTPUT_CAP,
    CODE_STDOUT_TAIL,
    CODE_TIMEOUT_S,
    CODE_TMPFS_MB,
    CODE_UID_BASE,
    CODE_UID_SPAN,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.grade.verify.contract import VerifierError

__all__ = ["SandboxResult", "run_sandboxed"]


# --------------------------------------------------------------------------------------------------
# The sandbox
# --------------------------------------------------------------------------------------------------

# The launcher runs as the caller (root when available) in a fresh interpreter, isolates itself, drops to the
# sandbox uid and execs the sandbox interpreter, which reads the program from stdin (a pipe: once read it is
# gone, so the code cannot re-read its hidden tests from disk or fd 0). A fresh interpreter, not preexec_fn,
# so this is safe to call from judge worker threads.
_LAUNCHER = r'''
import ctypes, json, os, resource, sys
cfg = json.loads(sys.argv[1])
st = {"uid": None, "user_dropped": False, "net_namespace": False, "mount_namespace": False,
      "private_tmp": False, "notes": []}
libc = ctypes.CDLL(None, use_errno=True)
NEWNS, NEWNET, NEWUSER = 0x00020000, 0x40000000, 0x10000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 16384, 1 << 18
root = os.geteuid() == 0
work = cfg["workdir"]
if cfg["isolate"]:
    if root and libc.unshare(NEWNET | NEWNS) == 0:
        st["net_namespace"] = st["mount_namespace"] = True
    elif root and libc.unshare(NEWNET) == 0:
        st["net_namespace"] = True
        st["notes"].append("no mount namespace: /tmp is shared (uid drop still blocks other users' files)")
    elif not root and libc.unshare(NEWUSER | NEWNET) == 0:
        st["net_namespace"] = True
        st["notes"].append("unprivileged user namespace: network isolated, no uid drop")
    else:
        st["notes"].append("no network namespace available (errno %d): network is NOT blocked" % ctypes.get_errno())
    if st["mount_namespace"]:
        # private propagation first, or the tmpfs mounts below would appear on the host
        if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0:
            opts = ("size=%dm,mode=1777" % cfg["tmpfs_mb"]).encode()
            done = []
            for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
                if os.path.isdir(d) and libc.mount(b"tmpfs", d.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts) == 0:
                    done.append(d)
            st["private_tmp"] = "/tmp" in done
            st["private_dirs"] = done
            if st["private_tmp"]:
                work = "/tmp/sandbox"
                os.mkdir(work, 0o700)
        else:
            st["notes"].append("could not make mounts private; no private /tmp")
uid = cfg["uid"]
if root:
    os.chown(work, uid, uid)
os.chdir(work)
lim = cfg["limits"]
for name, value in (("RLIMIT_CPU", (lim["cpu"], lim["cpu"] + 1)), ("RLIMIT_AS", (lim["as"], lim["as"])),
                    ("RLIMIT_FSIZE", (lim["fsize"], lim["fsize"])), ("RLIMIT_NOFILE", (lim["nofile"], lim["nofile"])),
                    ("RLIMIT_NPROC", (lim["nproc"], lim["nproc"])), ("RLIMIT_CORE", (0, 0))):
    resource.setrlimit(getattr(resource, name), value)
if root:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    st["uid"] = uid
    st["user_dropped"] = os.getuid() == uid and os.geteuid() == uid
else:
    st["uid"] = os.getuid()
    st["notes"].append("not root: no uid drop, so RLIMIT_NPROC counts all of this user's processes")
st["workdir"] = work
env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": work, "TMPDIR": work, "PYTHONDONTWRITEBYTECODE": "1",
       "PYTHONIOENCODING": "utf-8"}
os.write(cfg["status_fd"], json.dumps(st).encode())
os.close(cfg["status_fd"])
os.execve(cfg["python"], [cfg["python"], "-I", "-"], env)
'''


@dataclass
class SandboxResult:
    """What a sandboxed run did. ``isolation`` says which protections were in force."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    wall_s: float
    stdout_bytes: int
    stderr_bytes: int
    signal: str | None = None
    isolation: dict[str, Any] = field(default_factory=dict)
    survivors_killed: int = 0

    @property
    def output_truncated(self) -> bool:
        return self.stdout_bytes > len(self.stdout.encode()) or self.stderr_bytes > len(self.stderr.encode())

    def __str__(self) -> str:
        how = "timed out" if self.timed_out else (f"killed by {self.signal}" if self.signal else f"exit {self.returncode}")
        return (f"sandbox run: {how} after {self.wall_s:.2f} s, stdout {self.stdout_bytes} B, stderr "
                f"{self.stderr_bytes} B, uid {self.isolation.get('uid')}, network "
                f"{'blocked' if self.isolation.get('net_namespace') else 'NOT blocked'}")

    def to_dict(self) -> dict[str, Any]:
        return {"returncode": self.returncode, "stdout": self.stdout, "stderr": self.stderr,
                "timed_out": self.timed_out, "wall_s": self.wall_s, "stdout_bytes": self.stdout_bytes,
                "stderr_bytes": self.stderr_bytes, "signal": self.signal, "isolation": dict(self.isolation),
                "survivors_killed": self.survivors_killed, "output_truncated": self.output_truncated}


def _world_usable(path: str) -> bool:
    """True when every directory on the path is world-searchable and the file world-executable."""
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        return False
    parts = real.split(os.sep)
    for i in range(2, len(parts)):
        d = os.sep.join(parts[:i]) or os.sep
        try:
            if not os.stat(d).st_mode & 0o001:
                return False
        except OSError:
            return False
    return bool(os.stat(real).st_mode & 0o001)


def _searchable(directory: str) -> bool:
    parts = os.path.realpath(directory).split(os.sep)
    for i in range(2, len(parts) + 1):
        try:
            if not os.stat(os.sep.join(parts[:i])).st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


def sandbox_python() -> str:
    """An interpreter the unprivileged sandbox uid can run (its binary and its lib dir world-searchable)."""
    if os.geteuid() != 0:
        return sys.executable
    for c in (sys.executable, shutil.which("python3") or "", "/usr/bin/python3", "/usr/local/bin/python3"):
        if c and _world_usable(c):
            lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(c))), "lib")
            if _searchable(lib):
                return c
    raise VerifierError("no Python interpreter is reachable by an unprivileged uid (the current one lives under a "
                        "private directory); pass python='/usr/bin/python3' or install one world-readable")


def _pids_of_uid(uid: int) -> list[int]:
    """Live (non-zombie) processes whose /proc entry belongs to ``uid``."""
    out: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for e in entries:
        if not e.isdigit():
            continue
        try:
            if os.stat(f"/proc/{e}").st_uid != uid:
                continue
            with open(f"/proc/{e}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            out.append(int(e))
    return out


def _kill_uid(uid: int, rounds: int = CODE_KILL_ROUNDS) -> int:
    """SIGKILL every process of the (per-run, otherwise unused) sandbox uid until none is left."""
    killed: set[int] = set()
    for _ in range(rounds):
        pids = _pids_of_uid(uid)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.005)
    return len(killed)


def _fresh_uid() -> int:
    for _ in range(100):
        uid = CODE_UID_BASE + secrets.randbelow(CODE_UID_SPAN)
        if not _pids_of_uid(uid):
            return uid
    raise RuntimeError("could not find an unused sandbox uid")


def _read_capped(fh: Any, cap: int) -> tuple[str, int]:
    fh.flush()
    size = os.fstat(fh.fileno()).st_size
    fh.seek(0)
    head = fh.read(cap)
    return head.decode("utf-8", "replace"), size


def _tail(fh: Any, n: int) -> str:
    size = os.fstat(fh.fileno()).st_size
    fh.seek(max(0, size - n))
    return fh.read(n).decode("utf-8", "replace")


def _check_run_arguments(program: Any, timeout: Any, **limits: Any) -> None:
    if not isinstance(program, str):
        raise InvalidArgumentType(f"program= must be Python source text; got {type(program).__name__}")
    for arg, v, lo in (("timeout", timeout, 0.01),):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= lo:
            raise InvalidArgument(f"{arg}= must be a number of seconds >= {lo}; got {v!r}")
    for arg, v in limits.items():
        integer(arg, v, minimum=1)


def _read_status(r_fd: int) -> dict[str, Any]:
    """The launcher's isolation report, read from its status pipe ({} when it never wrote one)."""
    status_raw = b""
    while True:
        chunk = os.read(r_fd, 65536)
        if not chunk:
            break
        status_raw += chunk
    try:
        return json.loads(status_raw.decode()) if status_raw else {}
    except json.JSONDecodeError:
        return {}


def _signal_name(rc: int | None, timed_out: bool) -> str | None:
    if rc is None or rc >= 0 or timed_out:
        return None
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def run_sandboxed(
    program: str,
    *,
    timeout: float = CODE_TIMEOUT_S,
    cpu_seconds: int = CODE_CPU_S,
    mem_mb: int = CODE_MEM_MB,
    nproc: int = CODE_NPROC,
    fsize_mb: int = CODE_FSIZE_MB,
    nofile: int = CODE_NOFILE,
    output_cap: int = CODE_OUTPUT_CAP,
    tmpfs_mb: int = CODE_TMPFS_MB,
    python: str | None = None,
    isolate: bool = True,
    require_isolation: bool = False,
) -> SandboxResult:
    """Run a Python program in a sandbox and return what it did.

    Enforced on Linux as root: a new network namespace (no interfaces: no network, loopback included) and mount
    namespace with private tmpfs over /tmp, /var/tmp, /dev/shm and /run/lock; an empty private working dir;
    a fresh unused uid (so RLIMIT_NPROC binds and no other user's files are writable); RLIMIT_CPU/AS/FSIZE/
    NOFILE/NPROC and no core files; a minimal environment; a wall-clock ``timeout`` after which the process
    group and every process of the sandbox uid is killed; stdout/stderr go to files capped by RLIMIT_FSIZE and
    are read back up to ``output_cap`` bytes. Weaker fallbacks (recorded in ``isolation["notes"]``): without
    root there is no uid drop and no mount namespace (an unprivileged user namespace may still cut the
    network); without namespaces the network is not blocked. ``require_isolation=True`` refuses to run then.
    This contains the host; it does not make the reward tamper-proof against code that inspects its tests.
    """
    _check_run_arguments(program, timeout, cpu_seconds=cpu_seconds, mem_mb=mem_mb, nproc=nproc, fsize_mb=fsize_mb,
                         nofile=nofile, output_cap=output_cap, tmpfs_mb=tmpfs_mb)
    if sys.platform != "linux":
        raise RuntimeError("run_sandboxed needs Linux (namespaces and rlimits); run CodeExec on a Linux host")
    py = python or sandbox_python()
    is_root = os.geteuid() == 0
    uid = _fresh_uid() if is_root else os.getuid()
    cfg = {"workdir": "", "isolate": bool(isolate), "uid": uid, "python": py, "tmpfs_mb": tmpfs_mb,
           "limits": {"cpu": cpu_seconds, "as": mem_mb << 20, "fsize": fsize_mb << 20, "nofile": nofile,
                      "nproc": nproc}}
    host_dir = tempfile.mkdtemp(prefix="whileai-sandbox-")
    work = os.path.join(host_dir, "work")
    os.mkdir(work, 0o700)
    cfg["workdir"] = work
    r_fd, w_fd = os.pipe()
    cfg["status_fd"] = w_fd
    out_f = tempfile.TemporaryFile(dir=host_dir)  # noqa: SIM115 - closed in the finally below
    err_f = tempfile.TemporaryFile(dir=host_dir)  # noqa: SIM115
    started = time.monotonic()
    timed_out = False
    killed = 0
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _LAUNCHER, json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=out_f, stderr=err_f, close_fds=True, pass_fds=(w_fd,),
            start_new_session=True, env={"PATH": "/usr/bin:/bin"},
        )
        os.close(w_fd)
        w_fd = -1
        try:
            assert proc.stdin is not None
            proc.stdin.write(program.encode("utf-8"))
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
        if is_root:
            killed = _kill_uid(uid)
        wall = time.monotonic() - started
        isolation = _read_status(r_fd)
        stdout, n_out = _read_capped(out_f, output_cap)
        stderr, n_err = _read_capped(err_f, output_cap)
        tail = _tail(out_f, CODE_STDOUT_TAIL)
        if n_out > output_cap:
            stdout = stdout + "\n...[" + str(n_out - output_cap) + " bytes omitted]...\n" + tail
    finally:
        if w_fd >= 0:
            os.close(w_fd)
        os.close(r_fd)
        out_f.close()
        err_f.close()
        shutil.rmtree(host_dir, ignore_errors=True)
    if not isolation:
        raise VerifierError(f"the sandbox did not start: {stderr.strip().splitlines()[-1:] or ['no output']}")
    if require_isolation and not (isolation.get("net_namespace") and isolation.get("user_dropped")):
        raise VerifierError("require_isolation=True but this host gives no network namespace or uid drop: "
                            + "; ".join(isolation.get("notes", [])))
    rc = proc.returncode
    return SandboxResult(returncode=rc, stdout=stdout, stderr=stderr, timed_out=timed_out, wall_s=round(wall, 4),
                         stdout_bytes=n_out, stderr_bytes=n_err, signal=_signal_name(rc, timed_out),
                         isolation=isolation,
                         survivors_killed=killed)


