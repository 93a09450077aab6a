"""The baseline store: a directory of run documents (``whileai_core.gate.document``), and the commit and
machine info a run document records.

Layout under the store directory (default ``.whileai/``, ini ``wai_storage``)::

    .whileai/.gitignore            "runs/" (named baselines may be committed; autosaved runs are not)
    .whileai/baselines/<NAME>.json  --wai-save=NAME
    .whileai/runs/NNNN_<branch>_<commit>.json   --wai-autosave

Writes are atomic; a run number is claimed race-free, so parallel sessions never share one.
"""

from __future__ import annotations

import difflib
import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.errors import MissingBaseline
from whileai_core.gate.document import dump_document, load_document
from whileai_core.rows import atomic_write_text

_RUN_FILE = re.compile(r"^(\d{4,})_.*\.json$")
_HISTORY = re.compile(r"^(?P<branch>[^~]+)~(?P<n>\d*)$")
_SAVE_NAME = re.compile(r"^[A-Za-z0-9._\-]+$")


def _git(*args: str, cwd: str | os.PathLike[str] | None = None) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def commit_info(cwd: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """``{"id", "branch", "dirty", "time"}`` from git (CI branch variables win on a detached head); never raises."""
    info: dict[str, Any] = {"id": None, "branch": None, "dirty": None, "time": None}
    commit = _git("rev-parse", "HEAD", cwd=cwd)
    if commit is None:
        info["error"] = "not a git checkout (or git missing)"
    else:
        info["id"] = commit
        info["time"] = _git("show", "-s", "--pretty=%cI", "HEAD", cwd=cwd)
        status = _git("status", "--porcelain", "--untracked-files=no", cwd=cwd)
        info["dirty"] = bool(status) if status is not None else None
        branch = _git("rev-parse", "--abbrev-ref", "HEAD", cwd=cwd)
        info["branch"] = None if branch in (None, "HEAD") else branch
    for var in ("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BRANCH_NAME"):
        if not info["branch"] and os.environ.get(var):
            info["branch"] = os.environ[var]
    return info


def commits_behind(commit: str | None, cwd: str | os.PathLike[str] | None = None) -> int | None:
    """Commits from ``commit`` to HEAD (``git rev-list --count``), or None outside git or for an unknown commit."""
    if not commit:
        return None
    out = _git("rev-list", "--count", f"{commit}..HEAD", cwd=cwd)
    return int(out) if out and out.isdigit() else None


def machine_info() -> dict[str, Any]:
    return {"node": platform.node(), "system": platform.system(), "machine": platform.machine(),
            "python": platform.python_version(), "implementation": platform.python_implementation(),
            "executable": sys.executable}


class Store:
    """A directory of run documents: named baselines and autosaved runs."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    @property
    def baselines(self) -> Path:
        return self.root / "baselines"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    def _prepare(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            try:
                atomic_write_text(ignore, "# written by pytest-whileai: autosaved runs stay local\nruns/\n")
            except FileExistsError:
                pass  # another process wrote it first

    def save(self, doc: Mapping[str, Any], name: str) -> Path:
        """Write ``baselines/<name>.json`` (replacing an older one, atomically)."""
        self._prepare()
        return atomic_write_text(self.baselines / f"{name}.json", dump_document(doc), overwrite=True)

    def run_files(self) -> list[Path]:
        if not self.runs.is_dir():
            return []
        files = [p for p in self.runs.iterdir() if _RUN_FILE.match(p.name)]
        return sorted(files, key=lambda p: int(_RUN_FILE.match(p.name).group(1)))  # type: ignore[union-attr]

    def autosave(self, doc: Mapping[str, Any], *, attempts: int = D.STORE_CLAIM_ATTEMPTS) -> Path:
        """Write ``runs/NNNN_<branch>_<commit>.json`` with the next free number, race-free.

        A number is claimed by creating ``runs/.NNNN.claim`` exclusively (``O_CREAT|O_EXCL``); the holder
        checks that no finished run has that number, links its file into place (``atomic_write_text``), and
        drops the claim. So processes autosaving at once never share a number nor lose a run.
        """
        self._prepare()
        self.runs.mkdir(parents=True, exist_ok=True)
        info = doc.get("commit_info") or {}
        branch = re.sub(r"[^A-Za-z0-9._-]+", "-", str(info.get("branch") or "nobranch"))
        commit = str(info.get("id") or "nocommit")[:12] + ("-dirty" if info.get("dirty") else "")
        text = dump_document(doc)
        number = self._next_number()
        for _ in range(attempts):
            claim = self.runs / f".{number:04d}.claim"
            try:
                os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                number = max(number + 1, self._next_number())
                continue
            try:
                if not self._taken(number):
                    return atomic_write_text(self.runs / f"{number:04d}_{branch}_{commit}.json", text)
            finally:
                claim.unlink()
            number = max(number + 1, self._next_number())
        raise OSError(f"could not claim a run number under {self.runs} in {attempts} attempts; "
                      f"remove stale .NNNN.claim files there")

    def _next_number(self) -> int:
        files = self.run_files()
        return int(_RUN_FILE.match(files[-1].name).group(1)) + 1 if files else 1  # type: ignore[union-attr]

    def _taken(self, number: int) -> bool:
        return any(int(_RUN_FILE.match(p.name).group(1)) == number for p in self.run_files())  # type: ignore[union-attr]

    def resolve(self, spec: str, *, head: str | None = None) -> Path:
        """Find the baseline file for ``spec``: a path, a saved name, ``latest``, or the latest run of a branch.

        For a branch, runs at a commit other than ``head`` are preferred (the baseline of a rerun is the
        previous commit's run), falling back to the newest run of that branch. When nothing matches, the
        ``MissingBaseline`` names what the store holds and the closest name to ``spec``.
        """
        spec = str(spec).strip()
        path = Path(spec)
        if spec.endswith(".json") or os.sep in spec or "/" in spec:
            if path.is_file():
                return path
            raise self._missing(spec, f"no baseline file at {path}")
        named = self.baselines / f"{spec}.json"
        if named.is_file():
            return named
        runs = self.run_files()
        if spec in ("latest", "last"):
            if runs:
                return runs[-1]
            raise self._missing(spec, f"--wai-baseline={spec}: no autosaved runs under {self.runs} yet "
                                      "(run once with --wai-autosave)")
        on_branch = [p for p, branch in self._run_branches(runs) if branch == spec]
        if on_branch:
            others = [p for p in on_branch if head is None or not _same_commit(p, head)]
            return (others or on_branch)[-1]
        raise self._missing(spec, f"--wai-baseline={spec}: no saved baseline {named} and no autosaved run of "
                                  f"branch {spec!r} under {self.runs}")

    def resolve_history(self, spec: str, *, head: str | None = None
                        ) -> tuple[list[Path], int, list[tuple[str, str]]] | None:
        """For ``BRANCH~N`` (N runs, ``HISTORY_RUNS`` when N is empty): the last N complete green autosaved runs
        of the branch, oldest first, N, and the (file name, reason) of each newer run it skipped (red, incomplete,
        at ``head``). ``None`` when ``spec`` is not of that form; a ``MissingBaseline`` when the branch has no
        usable run; a ``CorruptBaseline``/``EditedBaseline`` naming a run file of the branch that cannot be read
        or was edited (a pool never silently loses a run)."""
        match = _HISTORY.match(str(spec).strip())
        if match is None:
            return None
        n = int(match.group("n") or D.HISTORY_RUNS)
        if n < 1:
            raise self._missing(spec, f"--wai-baseline={spec}: pool at least one run (BRANCH~N with N >= 1)")
        branch = match.group("branch")
        self._check_branch_files(branch)
        on_branch = [p for p, b in self._run_branches(self.run_files()) if b == branch]
        if not on_branch:
            raise self._missing(branch, f"--wai-baseline={spec}: no autosaved run of branch {branch!r} under "
                                        f"{self.runs}")
        others = [p for p in on_branch if head is None or not _same_commit(p, head)]
        skipped = [(p.name, "a run of the commit under test") for p in on_branch if p not in others]
        pooled: list[Path] = []
        for p in reversed(others or on_branch):
            why = None if len(pooled) < n else "older than the N runs pooled"
            why = why or unpoolable(load_document(p))
            if why is None:
                pooled.append(p)
            elif why != "older than the N runs pooled":
                skipped.append((p.name, why))
        if not pooled:
            listing = "; ".join(f"{name}: {why}" for name, why in skipped)
            raise MissingBaseline(f"--wai-baseline={spec}: no complete green autosaved run of branch {branch!r} "
                                  f"under {self.runs} to pool (skipped {listing})", [branch])
        return pooled[::-1], n, skipped

    def _check_branch_files(self, branch: str) -> None:
        """A run file named for ``branch`` that does not load is an error naming it, never a silent skip."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "-", branch)
        for p in self.run_files():
            if p.name.split("_", 1)[-1].rsplit("_", 1)[0] == safe:
                load_document(p)

    def saved_names(self) -> list[str]:
        if not self.baselines.is_dir():
            return []
        return sorted(p.stem for p in self.baselines.glob("*.json") if p.is_file())

    def _run_branches(self, runs: list[Path]) -> list[tuple[Path, str | None]]:
        out = []
        for p in runs:
            try:
                info = json.loads(p.read_text(encoding="utf-8")).get("commit_info") or {}
            except (OSError, ValueError, AttributeError):
                continue  # a broken autosave never shadows a good one; it is reported if named directly
            out.append((p, info.get("branch")))
        return out

    def _missing(self, spec: str, what: str) -> MissingBaseline:
        """The error for a baseline that is not there: with the names the store holds and the closest one, or,
        for an empty store (a first run), how to save one."""
        saved = self.saved_names()
        runs = self.run_files()
        branches = sorted({b for _, b in self._run_branches(runs) if b})
        names = saved + [b for b in branches if b not in saved] + (["latest"] if runs else [])
        if not names:
            return MissingBaseline(f"{what}; the store {self.root} is empty (a first run?): save a baseline with "
                                   f"--wai-save={spec if _SAVE_NAME.match(spec) else 'NAME'} (or --wai-autosave) "
                                   "and compare to it with --wai-baseline=NAME")
        close = difflib.get_close_matches(spec, names, n=1, cutoff=0.5)
        hint = f"did you mean --wai-baseline={close[0]}? " if close else ""
        listing = []
        if saved:
            listing.append("saved baselines: " + ", ".join(saved))
        if branches:
            listing.append("branches with autosaved runs: " + ", ".join(branches))
        if runs:
            listing.append("'latest' (the newest autosaved run)")
        new = f" (or create it: --wai-save={spec})" if _SAVE_NAME.match(spec) else ""
        return MissingBaseline(f"{what}; {hint}the store {self.root} holds " + "; ".join(listing) + new, names)


def unpoolable(doc: Mapping[str, Any]) -> str | None:
    """Why a run document is not pooled into a ``BRANCH~N`` baseline (None when it is: a complete green run).
    A run records its outcome (exit status, green, complete); an older one without it is judged by its gate."""
    outcome = doc.get("outcome")
    if isinstance(outcome, dict):
        if outcome.get("complete") is False:
            return "incomplete: " + "; ".join(outcome.get("refused") or ["partial run"])
        if not outcome.get("green"):
            status = (doc.get("gate") or {}).get("status")
            return f"red (exit status {outcome.get('exit_status')}, gate {status or 'not evaluated'})"
        return None
    status = (doc.get("gate") or {}).get("status")
    if status in ("regression", "incompatible"):
        return f"red (gate {status})"
    return None


def _same_commit(path: Path, head: str) -> bool:
    try:
        info = json.loads(path.read_text(encoding="utf-8")).get("commit_info") or {}
    except (OSError, ValueError):
        return False
    return info.get("id") == head
