"""A process sandbox for model-written code: ``run_sandboxed`` says what it enforces and how it degrades.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from whileai_core.arguments import integer
from whileai_core.defaults import (
    CODE_BWRAP_PROBE_S,
    CODE_CHANNEL_GRACE_S,
    CODE_CPU_S,
    CODE_FSIZE_MB,
    CODE_KILL_ROUNDS,
    CODE_MEM_MB,
    CODE_NOFILE,
    CODE_NPROC,
    CODE_OUTPUT_CAP,
    CODE_REPORT_CAP,
    CODE_START_S,
    CODE_STDOUT_TAIL,
    CODE_TIMEOUT_S,
    CODE_TMPFS_MB,
    CODE_UID_BASE,
    CODE_UID_SPAN,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType, IsolationUnavailable
from whileai_core.grade.verify.contract import VerifierError

__all__ = ["NO_BWRAP_ENV", "NO_NAMESPACES_ENV", "SandboxResult", "run_sandboxed"]

# The engine's own switches (environment variables set to "1"): run as if bubblewrap were not installed, or as if
# the kernel refused every namespace (a locked-down CI runner). Both only ever lower the level, so with both set a
# run refuses (``IsolationUnavailable``) unless isolation="none"; they exist to exercise the fallback and the refusal.
NO_BWRAP_ENV = "WHILEAI_SANDBOX_NO_BWRAP"
NO_NAMESPACES_ENV = "WHILEAI_SANDBOX_NO_NAMESPACES"

_HOW_TO_ISOLATE = ("install bubblewrap (apt-get install bubblewrap), or allow unprivileged user namespaces "
                   "(sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0), "
                   "or run as root; or pass isolation='none' to accept running model-written code with rlimits only")


# --------------------------------------------------------------------------------------------------
# The sandbox
# --------------------------------------------------------------------------------------------------

# The launcher runs as the caller (root when available) in a fresh interpreter, isolates itself, drops to the
# sandbox uid and execs the sandbox interpreter, which reads the program from stdin (a pipe: once read it is
# gone, so the code cannot re-read its hidden tests from disk or fd 0). A fresh interpreter, not preexec_fn,
# so this is safe to call from judge worker threads.
_LAUNCHER = r'''
import ctypes, fcntl, json, os, resource, sys
cfg = json.loads(sys.argv[1])
st = {"level": "none", "uid": None, "user_dropped": False, "net_namespace": False, "mount_namespace": False,
      "pid_namespace": False, "private_tmp": False, "host_fs_hidden": False, "notes": []}
# the status pipe goes to fd 5, the secret and report pipes (CodeExec's harness) to fds 3 and 4
high = {k: fcntl.fcntl(v, fcntl.F_DUPFD, 100) for k, v in cfg["fds"].items() if v >= 0}
for k, v in cfg["fds"].items():
    if v >= 0:
        os.close(v)
for k, target in (("secret", 3), ("report", 4), ("status", 5)):
    if k in high:
        os.dup2(high[k], target)
        os.close(high[k])
libc = ctypes.CDLL(None, use_errno=True)
root = os.geteuid() == 0
ns_root = False  # root of an unprivileged user namespace (the caller's uid outside): mounts, no uid drop
real_uid, real_gid = os.getuid(), os.getgid()
def map_root():
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", "0 %d 1" % real_uid), ("gid_map", "0 %d 1" % real_gid)):
            with open("/proc/self/" + name, "w") as fh:
                fh.write(text)
        return True
    except OSError:
        return False
lim = cfg["limits"]
def set_limits():
    for name, value in (("RLIMIT_CPU", (lim["cpu"], lim["cpu"] + 1)), ("RLIMIT_AS", (lim["as"], lim["as"])),
                        ("RLIMIT_FSIZE", (lim["fsize"], lim["fsize"])), ("RLIMIT_NOFILE", (lim["nofile"], lim["nofile"])),
                        ("RLIMIT_NPROC", (lim["nproc"], lim["nproc"])), ("RLIMIT_CORE", (0, 0))):
        resource.setrlimit(getattr(resource, name), value)
try:
    for d in cfg["cgroups"]:
        with open(os.path.join(d, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))
    if cfg["cgroups"]:
        st["memory_limit"] = cfg["cgroup_kind"]
except OSError as exc:
    st["notes"].append("could not join the cgroup (%s): memory is limited per process" % exc)
if cfg["bwrap"]:
    st["level"] = "bwrap"
    st.update(net_namespace=True, mount_namespace=True, pid_namespace=True, private_tmp=True, host_fs_hidden=True)
    set_limits()
    os.execve(cfg["bwrap"][0], cfg["bwrap"] + [cfg["python"], "-I", "-S", "-c", cfg["stage2"],
                                                json.dumps({**cfg, "status": st})], {"PATH": "/usr/bin:/bin"})
work = cfg["workdir"]
NEWNS, NEWNET, NEWUSER, NEWPID = 0x00020000, 0x40000000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
def blocked_at(path):
    parts = path.split("/")
    for k in range(2, len(parts) + 1):
        anc = "/".join(parts[:k])
        try:
            if not os.stat(anc).st_mode & 0o001:
                return anc
        except FileNotFoundError:  # under the fresh private /tmp: made below, searchable
            return None
    return None
def open_paths(paths):
    # O_PATH handles taken before the private /tmp hides what lives there (a venv under /tmp)
    out = []
    for p in paths:
        try:
            out.append((p, os.open(p, os.O_PATH)))
        except OSError:
            pass
    return out
def expose(opened):
    # the caller's interpreter under a private dir (/root/...) or under /tmp: cover the first unsearchable parent
    # with an empty tmpfs (which also hides the rest of it) and bind the interpreter's dirs back, read-only
    try:
        handles = [(p, blocked_at(p), fd) for p, fd in opened]
        covered = set()
        for p, anc, fd in handles:
            if anc is None and os.path.exists(p):
                continue  # reachable as it is
            if anc is not None and anc not in covered:
                if libc.mount(b"tmpfs", anc.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=0755,size=1m") != 0:
                    return False
                covered.add(anc)
            if os.path.isdir("/proc/self/fd/%d" % fd):
                os.makedirs(p, 0o755, exist_ok=True)
            elif not os.path.exists(p):
                os.makedirs(os.path.dirname(p), 0o755, exist_ok=True)
                open(p, "a").close()
            src = ("/proc/self/fd/%d" % fd).encode()
            if libc.mount(src, p.encode(), None, MS_BIND | MS_REC, None) != 0 or libc.mount(
                    None, p.encode(), None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC, None) != 0:
                return False
        return True
    except OSError:
        return False
MS_BIND, MS_REMOUNT, MS_RDONLY = 4096, 32, 1
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(os.uname().machine)
def bind_ro(src, dst):
    if libc.mount(src.encode(), dst.encode(), None, MS_BIND | MS_REC, None) != 0:
        return False
    # keep the source's nosuid/nodev/noexec/atime flags: in a user namespace they are locked, and a read-only
    # remount that drops them is refused
    try:
        f = os.statvfs(dst).f_flag
    except OSError:
        f = 0
    keep = (f & (2 | 4 | 8 | 1024 | 2048)) | (2097152 if f & 4096 else 0)
    return libc.mount(None, dst.encode(), None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC | keep, None) == 0
def minimal_root(fds):
    # a new root holding only the system dirs, the interpreter's paths and ro_paths (read-only), a few devices, a
    # fresh /proc and a size-capped /tmp; pivot into it, so no other host file or unix socket is reachable
    if PIVOT_ROOT is None:
        return False
    new = "/tmp/.whileai-root"
    try:
        os.mkdir(new, 0o755)
        if libc.mount(b"tmpfs", new.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=0755,size=1m") != 0:
            return False
        for d in cfg["system_dirs"]:
            if os.path.islink(d):
                os.symlink(os.readlink(d), new + d)
            elif os.path.isdir(d):
                os.makedirs(new + d, 0o755)
                if not bind_ro(d, new + d):
                    return False
        for f in cfg["system_files"] + ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"]:
            if os.path.exists(f):
                os.makedirs(os.path.dirname(new + f), 0o755, exist_ok=True)
                open(new + f, "a").close()
                if libc.mount(f.encode(), (new + f).encode(), None, MS_BIND, None) != 0:
                    return False
        # /proc and the capped /tmp before the interpreter's paths: a venv under /tmp is bound on top of this /tmp
        # (made after it, the bind would be hidden, and making /tmp again would fail)
        os.makedirs(new + "/proc", 0o555)
        os.makedirs(new + "/tmp", 0o1777)
        opts = ("size=%dm,mode=1777" % cfg["tmpfs_mb"]).encode()
        if libc.mount(b"proc", (new + "/proc").encode(), b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0 or \
                libc.mount(b"tmpfs", (new + "/tmp").encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts) != 0:
            return False
        for p, fd in fds:
            src = "/proc/self/fd/%d" % fd
            if os.path.isdir(src):
                os.makedirs(new + p, 0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(new + p), 0o755, exist_ok=True)
                open(new + p, "a").close()
            if not bind_ro(src, new + p):
                return False
        os.mkdir(new + "/.old")
        if libc.syscall(PIVOT_ROOT, new.encode(), (new + "/.old").encode()) != 0:
            return False
        os.chdir("/")
        libc.umount2(b"/.old", 2)  # MNT_DETACH
        os.rmdir("/.old")
        libc.mount(None, b"/", None, MS_BIND | MS_REMOUNT | MS_RDONLY, None)
        return True
    except OSError:
        return False
if cfg["isolate"]:
    st["level"] = "namespaces"
    if not cfg["namespaces"]:
        st["level"] = "rlimits"
        st["notes"].append("namespaces switched off (%s): network is NOT blocked" % cfg["namespaces_switch"])
    elif root and libc.unshare(NEWNET | NEWNS | NEWPID) == 0:
        st["net_namespace"] = st["mount_namespace"] = st["pid_namespace"] = True
    elif root and libc.unshare(NEWNET) == 0:
        st["net_namespace"] = True
        st["notes"].append("no mount namespace: /tmp is shared (uid drop still blocks other users' files)")
    elif not root and libc.unshare(NEWUSER | NEWNET | NEWNS | NEWPID) == 0:
        # as for root, in a user namespace of our own: its root (the caller's uid outside) may mount, so the
        # same private /proc, /tmp and new root hide the host; the pid namespace hides (and shields) the grader
        st["net_namespace"] = st["mount_namespace"] = st["pid_namespace"] = True
        ns_root = map_root()
        st["notes"].append("unprivileged user namespace: network, mounts and pids isolated, no uid drop")
    elif not root and libc.unshare(NEWUSER | NEWNET) == 0:
        st["net_namespace"] = True
        st["notes"].append("unprivileged user namespace: network isolated, no uid drop")
    else:
        st["level"] = "rlimits"
        st["notes"].append("no network namespace available (errno %d): network is NOT blocked" % ctypes.get_errno())
    if st["pid_namespace"]:
        # the first child is pid 1 of the new namespace (the init, which ignores signals it has no handler for),
        # so it forks the worker and reports the worker's wait status; this process then ends the same way
        r, w = os.pipe()
        if os.fork():
            os.close(w)
            if "status" in high:
                os.close(5)
            raw = os.read(r, 64)
            os.wait()
            code = int(raw or b"-9")
            if code < 0:
                import signal
                signal.signal(-code, signal.SIG_DFL)
                os.kill(os.getpid(), -code)
            os._exit(code)
        os.close(r)
        worker = os.fork()
        if worker:
            if "status" in high:
                os.close(5)
            while True:
                pid, status = os.wait()
                if pid == worker:
                    os.write(w, str(os.waitstatus_to_exitcode(status)).encode())
                    os._exit(0)
        os.close(w)
    opened = open_paths(cfg["expose"])
    root_fds = open_paths(cfg["root_paths"]) if root or ns_root else []
    if st["mount_namespace"]:
        # private propagation first, or the mounts below would appear on the host
        if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0:
            opts = ("size=%dm,mode=1777" % cfg["tmpfs_mb"]).encode()
            done = []
            for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
                if os.path.isdir(d) and libc.mount(b"tmpfs", d.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts) == 0:
                    done.append(d)
            st["private_tmp"] = "/tmp" in done
            st["private_dirs"] = done
            if st["pid_namespace"] and libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
                st["notes"].append("could not mount a private /proc: other processes stay visible")
            if st["private_tmp"]:
                work = "/tmp/sandbox"
                os.mkdir(work, 0o700)
            if st["private_tmp"] and st["pid_namespace"] and minimal_root(root_fds):
                st["host_fs_hidden"] = True
                work = "/tmp/sandbox"
                os.makedirs(work, 0o700, exist_ok=True)
                st["python_exposed"] = True
            else:
                st["python_exposed"] = expose(opened)
        else:
            st["notes"].append("could not make mounts private; no private /tmp")
    if not st["host_fs_hidden"]:
        st["notes"].append("built-in namespaces (no bubblewrap): host files readable by any user stay readable outside /tmp and the interpreter")
if st["level"] in ("rlimits", "none") and not cfg["allow_none"]:
    # neither bubblewrap nor namespaces isolate here: refuse before any candidate code runs
    st["refused"] = True
    os.write(5, json.dumps(st).encode())
    os._exit(97)
uid = cfg["uid"]
if root:
    os.chown(work, uid, uid)
os.chdir(work)
set_limits()
if root:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    st["uid"] = uid
    st["user_dropped"] = os.getuid() == uid and os.geteuid() == uid
else:
    st["uid"] = real_uid  # the uid outside (root inside a user namespace of our own maps to it)
    st["notes"].append("not root: no uid drop, so RLIMIT_NPROC counts all of this user's processes")
st["workdir"] = work
python = cfg["python"]
if cfg["expose"] and not st.get("python_exposed") and cfg["python_fallback"]:
    python = cfg["python_fallback"]
    st["notes"].append("the caller's interpreter is not reachable by the sandbox uid here: ran %s" % python)
st["python"] = python
env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": work, "TMPDIR": work, "PYTHONDONTWRITEBYTECODE": "1",
       "PYTHONIOENCODING": "utf-8"}
os.write(5, json.dumps(st).encode())
os.close(5)
os.execve(python, [python, "-I", "-"], env)
'''

# The second stage inside bubblewrap (root there when the caller is root: it makes the working dir, drops to the
# per-run uid, reports and execs the sandbox interpreter, which reads the program from stdin).
_STAGE2 = r'''
import json, os, sys
cfg = json.loads(sys.argv[1])
st = cfg["status"]
work = "/tmp/sandbox"
os.mkdir(work, 0o700)
uid = cfg["uid"]
if os.geteuid() == 0:
    os.chown(work, uid, uid)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    st["user_dropped"] = os.getuid() == uid and os.geteuid() == uid
else:
    st["notes"].append("not root: bubblewrap in an unprivileged user namespace, no uid drop")
st["uid"] = os.getuid()
st["workdir"] = work
st["python"] = cfg["python"]
os.chdir(work)
env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": work, "TMPDIR": work, "PYTHONDONTWRITEBYTECODE": "1",
       "PYTHONIOENCODING": "utf-8"}
os.write(5, json.dumps(st).encode())
os.close(5)
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
    report: bytes = b""

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


def sandbox_python(bwrap: bool = False) -> str:
    """The caller's interpreter (``sys.executable``, with its packages) when the sandbox uid can run it: always under
    bubblewrap (which binds its prefix with searchable parents) or without root; else the first one whose binary
    and lib dir are world-searchable (as root, a Python under /root may give way to the system one)."""
    if bwrap or os.geteuid() != 0:
        return sys.executable
    for c in (sys.executable, shutil.which("python3") or "", "/usr/bin/python3", "/usr/local/bin/python3"):
        if c and _world_usable(c):
            lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(c))), "lib")
            if _searchable(lib):
                return c
    raise VerifierError("no Python interpreter is reachable by an unprivileged uid (the current one lives under a "
                        "private directory); pass python='/usr/bin/python3' or install one world-readable")


def _fallback_python() -> str | None:
    try:
        return sandbox_python()
    except VerifierError:
        return None


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


# uids handed to runs of this process that have not ended: two judge threads must never share one (the check in
# ``_fresh_uid`` and the uid drop are apart, and ``_kill_uid`` at the end of one run would kill the other's code)
_UIDS_IN_USE: set[int] = set()
_UIDS_LOCK = threading.Lock()


def _fresh_uid() -> int:
    """A sandbox uid no process has and no other run of this process holds; release it with ``_release_uid``."""
    with _UIDS_LOCK:
        for _ in range(100):
            uid = CODE_UID_BASE + secrets.randbelow(CODE_UID_SPAN)
            if uid not in _UIDS_IN_USE and not _pids_of_uid(uid):
                _UIDS_IN_USE.add(uid)
                return uid
    raise RuntimeError("could not find an unused sandbox uid")


def _release_uid(uid: int) -> None:
    with _UIDS_LOCK:
        _UIDS_IN_USE.discard(uid)


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


def _check_run_arguments(program: Any, timeout: Any, start_timeout: Any, channel_grace: Any, **limits: Any) -> None:
    if not isinstance(program, str):
        raise InvalidArgumentType(f"program= must be Python source text; got {type(program).__name__}")
    for arg, v, lo in (("timeout", timeout, 0.01), ("start_timeout", start_timeout, 0.01),
                       ("channel_grace", channel_grace, 0.0)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= lo:
            raise InvalidArgument(f"{arg}= must be a number of seconds >= {lo}; got {v!r}")
    for arg, v in limits.items():
        integer(arg, v, minimum=1)


def _check_ro_paths(ro_paths: Any) -> tuple[str, ...]:
    """``ro_paths=``: host paths (data, a package dir) the sandbox may read, bound read-only where they are."""
    if isinstance(ro_paths, (str, bytes)) or not all(isinstance(p, str) and os.path.isabs(p) for p in ro_paths):
        raise InvalidArgument(f"ro_paths= must be a list of absolute paths; got {ro_paths!r}")
    missing = [p for p in ro_paths if not os.path.exists(p)]
    if missing:
        raise InvalidArgument(f"ro_paths= names paths that do not exist: {missing[:3]}")
    return tuple(ro_paths)


def _read_status(r_fd: int, status_raw: bytes = b"") -> dict[str, Any]:
    """The launcher's isolation report: ``status_raw`` (read while it started) and the rest of its status pipe ({}
    when it never wrote one)."""
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


def _ro_paths(python: str) -> list[str]:
    """The interpreter's prefixes and site-packages: what the sandbox sees of the host, read-only."""
    import site
    import sysconfig

    paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    if os.path.realpath(python) != os.path.realpath(sys.executable):
        # another interpreter: its own prefix (two levels above bin/python)
        paths = {os.path.dirname(os.path.dirname(os.path.realpath(python)))}
    else:
        paths.update(os.path.realpath(p) for p in site.getsitepackages() + [sysconfig.get_paths()["purelib"]])
    paths.add(os.path.dirname(os.path.realpath(python)))
    # the system dirs are bound whole; keep only the other paths, outermost first, none inside another
    out: list[str] = []
    for p in sorted(paths, key=len):
        if os.path.isdir(p) and not any(p == q or p.startswith(q + os.sep) for q in out + list(_SYSTEM_DIRS)):
            out.append(p)
    return out


_SYSTEM_DIRS = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/nsswitch.conf", "/etc/mime.types")


def find_bwrap() -> str | None:
    """bubblewrap's path when it is installed and starts a sandbox here (user namespaces may be refused)."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    try:
        ok = subprocess.run([path, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
                            + ([] if os.geteuid() == 0 else ["--unshare-user"])
                            + ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
                            check=False, capture_output=True, timeout=CODE_BWRAP_PROBE_S).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return path if ok else None


def _bwrap_argv(bwrap: str, python: str, tmpfs_mb: int, ro_paths: tuple[str, ...] = ()) -> list[str]:
    """bubblewrap's command line: new ipc/pid/net/uts(/user) namespaces, an empty root with the system dirs, a
    private tmpfs /tmp of ``tmpfs_mb``, then the interpreter's prefix and site-packages and ``ro_paths`` read-only
    wherever they live (a venv under /tmp too: bound after the tmpfs, so on top of it), a fresh /proc and /dev, and
    a new session (no terminal)."""
    argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session"]
    if os.geteuid() != 0:
        argv.append("--unshare-user")
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            argv += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            argv += ["--ro-bind", d, d]
    for f in _SYSTEM_FILES:
        argv += ["--ro-bind-try", f, f]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(tmpfs_mb << 20), "--tmpfs", "/tmp"]
    made: set[str] = {"/", "/tmp", "/proc", "/dev"}
    for p in _outermost(_ro_paths(python) + [os.path.realpath(x) for x in ro_paths]):
        parts = p.split(os.sep)
        for k in range(2, len(parts)):
            anc = os.sep.join(parts[:k])
            if anc not in made:
                argv += ["--perms", "0755", "--dir", anc]  # ancestors searchable by the sandbox uid
                made.add(anc)
        argv += ["--ro-bind", p, p]
        made.add(p)
    argv += ["--chdir", "/"]
    return argv


def _outermost(paths: list[str]) -> list[str]:
    """Existing paths outside the system dirs, outermost first, none inside another."""
    out: list[str] = []
    for p in sorted(set(paths), key=len):
        if os.path.exists(p) and not any(p == q or p.startswith(q + os.sep) for q in out + list(_SYSTEM_DIRS)):
            out.append(p)
    return out


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w") as fh:
            fh.write(value)
        return True
    except OSError:
        return False


def _cgroups(mem_mb: int, nproc: int) -> tuple[list[str], str | None]:
    """Fresh cgroups holding the whole sandbox to ``mem_mb`` (and ``nproc`` tasks): one cgroup v2 when the kernel
    offers a writable one with the memory controller, else the v1 memory (and pids) hierarchies when writable.
    Returns (dirs, "cgroup v2" | "cgroup v1" | None)."""
    base, name = "/sys/fs/cgroup", "whileai-" + secrets.token_hex(6)
    try:
        with open(os.path.join(base, "cgroup.controllers")) as fh:
            controllers = fh.read().split()
    except OSError:
        controllers = []
    if "memory" in controllers:
        path = os.path.join(base, name)
        try:
            os.mkdir(path)
        except OSError:
            return [], None
        if _write(os.path.join(path, "memory.max"), str(mem_mb << 20)):
            _write(os.path.join(path, "memory.swap.max"), "0")
            if "pids" in controllers:
                _write(os.path.join(path, "pids.max"), str(nproc))
            return [path], "cgroup v2"
        _drop_cgroups([path])
        return [], None
    mem = os.path.join(base, "memory", name)
    try:
        os.mkdir(mem)
    except OSError:
        return [], None
    if not _write(os.path.join(mem, "memory.limit_in_bytes"), str(mem_mb << 20)):
        _drop_cgroups([mem])
        return [], None
    _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), str(mem_mb << 20))
    dirs = [mem]
    pids = os.path.join(base, "pids", name)
    try:
        os.mkdir(pids)
        if _write(os.path.join(pids, "pids.max"), str(nproc)):
            dirs.append(pids)
        else:
            os.rmdir(pids)
    except OSError:
        pass
    return dirs, "cgroup v1"


def _drop_cgroups(paths: list[str]) -> None:
    """Kill what is left in the sandbox's cgroups and remove them."""
    for path in paths:
        _write(os.path.join(path, "cgroup.kill"), "1")
        for _ in range(CODE_KILL_ROUNDS):
            try:
                with open(os.path.join(path, "cgroup.procs")) as fh:
                    for pid in fh.read().split():
                        os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.005)


_BWRAP: dict[str, str | None] = {}


def _isolation_backend(isolation: str) -> str | None:
    """bubblewrap's path for ``isolation="auto"``/``"bwrap"`` when it works here, else None (built-in namespaces)."""
    if isolation == "namespaces":
        return None
    if os.environ.get(NO_BWRAP_ENV) == "1":
        if isolation == "bwrap":
            raise IsolationUnavailable(f"isolation='bwrap' but bubblewrap is switched off ({NO_BWRAP_ENV}=1)")
        return None
    if "path" not in _BWRAP:
        _BWRAP["path"] = find_bwrap()
    if isolation == "bwrap" and _BWRAP["path"] is None:
        raise IsolationUnavailable("isolation='bwrap' but bubblewrap is not installed or cannot start a sandbox "
                                   "here (apt-get install bubblewrap; user namespaces may be restricted)")
    return _BWRAP["path"]


def _read_all(fd: int, cap: int) -> bytes:
    out = b""
    while len(out) < cap:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        out += chunk
    return out[:cap]


def _launcher_config(python: str | None, isolate: bool, isolation: str, is_root: bool, tmpfs_mb: int,
                     limits: dict[str, int], ro_paths: tuple[str, ...] = ()) -> dict[str, Any]:
    """What the launcher needs: the level to try, the interpreter, the uid, the limits and the cgroups."""
    bwrap = _isolation_backend(isolation) if isolate else None
    expose = python is None and bwrap is None and isolate and is_root
    py = python or sandbox_python(bwrap is not None or expose)
    cgroups, cgroup_kind = _cgroups(limits["as"] >> 20, limits["nproc"]) if is_root and isolate else ([], None)
    return {"workdir": "", "isolate": bool(isolate), "uid": _fresh_uid() if is_root else os.getuid(), "python": py,
            "tmpfs_mb": tmpfs_mb, "limits": limits, "expose": _outermost(_ro_paths(py) + [os.path.realpath(p) for p in ro_paths]) if expose else [],
            "root_paths": _outermost(_ro_paths(py) + [os.path.realpath(p) for p in ro_paths] + [os.path.realpath(py)]),
            "system_dirs": list(_SYSTEM_DIRS), "system_files": list(_SYSTEM_FILES),
            "python_fallback": _fallback_python() if expose else None, "cgroups": cgroups,
            "cgroup_kind": cgroup_kind, "stage2": _STAGE2, "bwrap": _bwrap_argv(bwrap, py, tmpfs_mb, ro_paths) if bwrap else None}


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
    isolation: str = "auto",
    secret: bytes | None = None,
    channel: Any = None,
    ro_paths: Any = (),
    start_timeout: float = CODE_START_S,
    channel_grace: float = CODE_CHANNEL_GRACE_S,
) -> SandboxResult:
    """Run a Python program in a sandbox and return what it did.

    ``isolation="auto"`` (default) uses bubblewrap when it is installed and starts here, else the built-in
    namespaces; ``"bwrap"`` requires bubblewrap; ``"namespaces"`` forces the built-in ones; when neither can
    isolate (no namespaces at all) the run is refused with ``IsolationUnavailable`` (a ``WaiError`` naming the
    fix; ``NO_BWRAP_ENV``/``NO_NAMESPACES_ENV`` simulate such a host) before any code runs, unless
    ``isolation="none"`` (or ``isolate=False``) accepts running with rlimits only. The level that ran is
    ``result.isolation["level"]`` (``bwrap``, ``namespaces``, ``rlimits`` or ``none``).

    With bubblewrap (as root): new pid, network, ipc and uts namespaces; an empty root holding only the system
    dirs (/usr, /lib...) and the interpreter's prefix and site-packages, read-only (so no host file outside them
    is visible: no ``.env``, no unix socket on the host); a fresh /proc (only the sandbox's own processes) and
    /dev; a private size-capped tmpfs /tmp; a new session; then a drop to a fresh unused uid. The built-in
    namespaces (root): new network, mount and pid namespaces, pivoted into a new root built the same way; the uid
    drop. Both: RLIMIT_CPU/AS/FSIZE/
    NOFILE/NPROC, no core files, a minimal environment, the program read from stdin (then empty), a wall-clock
    ``timeout`` (counted from the moment the sandbox reports it started, so a loaded host's slow start-up is not
    charged to the code; a start past ``start_timeout`` raises ``VerifierError``, the code never having run) after
    which the process group and every process of the sandbox uid is killed, stdout/stderr
    capped by RLIMIT_FSIZE and read back up to ``output_cap`` bytes. Memory: one ``memory.max`` for the whole
    sandbox when the kernel offers a writable cgroup (``isolation["memory_limit"]`` is ``"cgroup v2"``, else the
    v1 memory hierarchy, ``"cgroup v1"``; ``pids.max`` = ``nproc`` too), else ``"per-process"``: RLIMIT_AS per process, so the sandbox as a whole may use up to ``nproc`` × ``mem_mb``. Without root there is no
    uid drop; without namespaces the network is not blocked. ``require_isolation=True`` refuses to run then.

    ``secret=`` bytes are readable once on fd 3; what it writes to fd 4 comes back as ``result.report``.
    ``channel=`` instead is called on a thread while the program runs with (write end of its fd
    3, read end of its fd 4), CodeExec's split-mode link, once the sandbox has started (a deadline it takes then
    is the sandbox's; the sandbox itself is killed ``channel_grace`` seconds after ``timeout``, so the channel's
    side stops first); it must close the write end when done. ``ro_paths=``:
    host paths bound read-only.
    """
    _check_run_arguments(program, timeout, start_timeout, channel_grace, cpu_seconds=cpu_seconds, mem_mb=mem_mb,
                         nproc=nproc, fsize_mb=fsize_mb, nofile=nofile, output_cap=output_cap, tmpfs_mb=tmpfs_mb)
    _check_isolation(isolation, secret)
    isolate = isolate and isolation != "none"
    is_root = os.geteuid() == 0
    cfg = _launcher_config(python, isolate, isolation, is_root, tmpfs_mb,
                           {"cpu": cpu_seconds, "as": mem_mb << 20, "fsize": fsize_mb << 20, "nofile": nofile,
                            "nproc": nproc}, _check_ro_paths(ro_paths))
    cfg["allow_none"] = isolation == "none" or not isolate
    cfg["namespaces"], cfg["namespaces_switch"] = os.environ.get(NO_NAMESPACES_ENV) != "1", NO_NAMESPACES_ENV + "=1"
    uid, cgroups = cfg["uid"], cfg["cgroups"]
    host_dir = tempfile.mkdtemp(prefix="whileai-sandbox-")
    work = os.path.join(host_dir, "work")
    os.mkdir(work, 0o700)
    cfg["workdir"] = work
    pipes = {"status": os.pipe(), "secret": os.pipe(), "report": os.pipe()}
    child_ends = {"status": pipes["status"][1], "secret": pipes["secret"][0], "report": pipes["report"][1]}
    if secret is not None:
        os.write(pipes["secret"][1], secret)
    if channel is None:
        os.close(pipes["secret"][1])
    cfg["fds"] = child_ends
    out_f = tempfile.TemporaryFile(dir=host_dir)  # noqa: SIM115 - closed in the finally below
    err_f = tempfile.TemporaryFile(dir=host_dir)  # noqa: SIM115
    started = time.monotonic()
    killed = 0
    reader: _ReportReader | _ChannelThread | None = None
    try:
        reader = _ReportReader(pipes["report"][0]) if channel is None else \
            _ChannelThread(channel, pipes["secret"][1], pipes["report"][0])
        wait_s = timeout + (channel_grace if channel is not None else 0.0)
        proc, timed_out, raw_status, in_time = _start_and_wait(cfg, program, (start_timeout, wait_s), out_f, err_f,
                                                               reader.start, child_ends, pipes["status"][0])
        child_ends = {}
        if is_root:
            killed = _kill_uid(uid)
        _drop_cgroups(cgroups)
        cgroups = []
        report = reader.finish()
        wall = time.monotonic() - started
        status = _read_status(pipes["status"][0], raw_status)
        stdout, n_out, stderr, n_err = _read_outputs(out_f, err_f, output_cap)
    finally:
        _drop_cgroups(cgroups)
        if is_root:
            _release_uid(uid)
        for fd in child_ends.values():
            os.close(fd)
        os.close(pipes["status"][0])
        if reader is None or not reader.thread.is_alive():
            # a reader or channel still running past finish()'s wait keeps its fd: closed here, the number could
            # be reused by another run's pipe and read (or closed) by this thread
            os.close(pipes["report"][0])
        out_f.close()
        err_f.close()
        shutil.rmtree(host_dir, ignore_errors=True)
    if not status and not in_time:
        raise VerifierError(f"the sandbox did not start within start_timeout={start_timeout:g} s (the host is "
                            "overloaded, or the launcher hung): the code never ran, so it is not scored")
    return _result(proc.returncode, stdout, stderr, timed_out, wall, n_out, n_err, status, killed, report,
                   require_isolation, nproc, mem_mb)


def _check_isolation(isolation: Any, secret: Any) -> None:
    if isolation not in ("auto", "bwrap", "namespaces", "none"):
        raise InvalidArgument(f"isolation= must be 'auto', 'bwrap', 'namespaces' or 'none'; got {isolation!r}")
    if secret is not None and not isinstance(secret, bytes):
        raise InvalidArgumentType(f"secret= must be bytes; got {type(secret).__name__}")
    if sys.platform != "linux":
        raise RuntimeError("run_sandboxed needs Linux (namespaces and rlimits); run CodeExec on a Linux host")


def _read_outputs(out_f: Any, err_f: Any, cap: int) -> tuple[str, int, str, int]:
    """stdout and stderr read back up to ``cap`` bytes (stdout keeps its tail past the cap), with their sizes."""
    stdout, n_out = _read_capped(out_f, cap)
    stderr, n_err = _read_capped(err_f, cap)
    if n_out > cap:
        stdout = stdout + "\n...[" + str(n_out - cap) + " bytes omitted]...\n" + _tail(out_f, CODE_STDOUT_TAIL)
    return stdout, n_out, stderr, n_err


def _start_and_wait(cfg: dict[str, Any], program: str, timeouts: tuple[float, float], out_f: Any, err_f: Any,
                    on_start: Callable[[], None], child_ends: dict[str, int],
                    status_fd: int) -> tuple[Any, bool, bytes, bool]:
    """Start the launcher, close our copies of its pipe ends, wait up to ``timeouts[0]`` for its status (written
    just before the sandbox interpreter starts), start the reader or channel (``on_start``), hand the program over
    on stdin, wait up to ``timeouts[1]``, then kill its process group. Returns (the process, whether the code
    timed out, the status bytes read so far, whether the start-up ended in time)."""
    start_timeout, timeout = timeouts
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _LAUNCHER, json.dumps(cfg)],
        stdin=subprocess.PIPE, stdout=out_f, stderr=err_f, close_fds=True, pass_fds=tuple(cfg["fds"].values()),
        start_new_session=True, env={"PATH": "/usr/bin:/bin"},
    )
    for fd in child_ends.values():
        os.close(fd)
    raw_status, in_time = _await_start(status_fd, start_timeout)
    on_start()
    timed_out = False
    if in_time:
        try:
            assert proc.stdin is not None
            proc.stdin.write(program.encode("utf-8", "replace"))
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
    try:
        if proc.stdin is not None:
            proc.stdin.close()  # never written when the start-up ran past its bound
    except OSError:
        pass
    return proc, timed_out, raw_status, in_time


def _await_start(fd: int, start_timeout: float) -> tuple[bytes, bool]:
    """The launcher's status as soon as it is whole (its JSON parses), or what came before the pipe closed (the
    launcher ended without one); and False when ``start_timeout`` passed first."""
    raw = b""
    end = time.monotonic() + start_timeout
    while True:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return raw, False
        chunk = os.read(fd, 65536)
        if not chunk:
            return raw, True
        raw += chunk
        try:
            json.loads(raw.decode())
            return raw, True
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue


class _ReportReader:
    """Drains the report pipe on a thread while the program runs (a full pipe must not block the harness)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.data = b""
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        try:
            self.data = _read_all(self.fd, CODE_REPORT_CAP)
        except OSError:
            pass

    def finish(self) -> bytes:
        self.thread.join(CODE_BWRAP_PROBE_S)
        return self.data


class _ChannelThread:
    """Runs ``channel(request_write_fd, reply_read_fd)`` on a thread while the program runs."""

    def __init__(self, channel: Callable[[int, int], None], req_w: int, rep_r: int) -> None:
        self.req_w = req_w
        self.thread = threading.Thread(target=channel, args=(req_w, rep_r), daemon=True)

    def start(self) -> None:
        self.thread.start()

    def finish(self) -> bytes:
        self.thread.join(CODE_BWRAP_PROBE_S)  # the channel closes its write end itself
        return b""


def _result(rc: int | None, stdout: str, stderr: str, timed_out: bool, wall: float, n_out: int, n_err: int,
            isolation: dict[str, Any], killed: int, report: bytes, require_isolation: bool, nproc: int,
            mem_mb: int) -> SandboxResult:
    if not isolation:
        raise VerifierError(f"the sandbox did not start: {stderr.strip().splitlines()[-1:] or ['no output']}")
    if isolation.get("refused"):
        raise IsolationUnavailable("neither bubblewrap nor namespaces can isolate code on this host (no network or "
                                   "mount namespace): refusing to run model-written code unsandboxed; to fix, "
                                   + _HOW_TO_ISOLATE + " (" + "; ".join(isolation.get("notes", [])) + ")")
    if require_isolation and not (isolation.get("net_namespace") and isolation.get("user_dropped")):
        raise VerifierError("require_isolation=True but this host gives no network namespace or uid drop: "
                            + "; ".join(isolation.get("notes", [])))
    if isolation.get("level") == "bwrap" and rc is not None and 128 < rc < 128 + signal.NSIG:
        rc = 128 - rc  # bubblewrap exits 128+N when the program was killed by signal N; report it as Popen would
    if not str(isolation.get("memory_limit", "")).startswith("cgroup"):
        isolation["memory_limit"] = "per-process"
        isolation["memory_bound_mb"] = nproc * mem_mb
    else:
        isolation["memory_bound_mb"] = mem_mb
    return SandboxResult(returncode=rc, stdout=stdout, stderr=stderr, timed_out=timed_out, wall_s=round(wall, 4),
                         stdout_bytes=n_out, stderr_bytes=n_err, signal=_signal_name(rc, timed_out),
                         isolation=isolation, survivors_killed=killed, report=report)
