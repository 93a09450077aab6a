"""The baseline store and the versioned run document.

Layout under the store directory (default ``.whileai/``, ini ``wai_storage``)::

    .whileai/.gitignore            "runs/" (named baselines may be committed; autosaved runs are not)
    .whileai/baselines/<NAME>.json  --wai-save=NAME
    .whileai/runs/NNNN_<branch>_<commit>.json   --wai-autosave

A run document (``schema: "whileai.run/1"``) holds the whileai version, commit and machine info, the run info
and its fingerprint, the gate settings, and one entry per scenario with every trial's reward. Writes are atomic.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import platform
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from whileai_core import defaults as D
from whileai_core.rows import atomic_write_text, stable_id

SCHEMA = D.RUN_SCHEMA
_RUN_FILE = re.compile(r"^(\d{4,})_.*\.json$")
_SAVE_NAME = re.compile(r"^[A-Za-z0-9._\-]+$")
_REQUIRED_TOP: dict[str, type] = {"schema": str, "scenarios": list, "fingerprint": dict}
_REQUIRED_SCENARIO: dict[str, type] = {"key": str, "k": int, "rewards": list}


class BaselineError(Exception):
    """Base class of the store's errors (each message names the file and the fix)."""


class CorruptBaseline(BaselineError):
    """A baseline file that is not a valid run document."""


class NonFiniteReward(CorruptBaseline):
    """A run document with a NaN or infinite reward: not a score, so never counted as a pass or a failure."""


class MissingBaseline(BaselineError):
    """No stored run matches the requested baseline; ``names`` lists what the store does hold (empty when the
    store is empty: a first run)."""

    def __init__(self, message: str, names: list[str] | None = None) -> None:
        super().__init__(message)
        self.names = list(names or [])


class IncompatibleBaseline(BaselineError):
    """A baseline measured under different conditions (schema, k, judge or config fingerprint)."""


def whileai_version() -> str:
    from whileai_core import distribution_version

    return distribution_version()


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


def machine_info() -> dict[str, Any]:
    return {"node": platform.node(), "system": platform.system(), "machine": platform.machine(),
            "python": platform.python_version(), "implementation": platform.python_implementation(),
            "executable": sys.executable}


def fingerprint(run_info: Mapping[str, Any], extra: str = "") -> dict[str, Any]:
    """What must match for two runs to be compared: the schema major, the run info and ``--wai-fingerprint``."""
    items = {"schema": SCHEMA.split("/")[-1].split(".")[0], "run_info": dict(run_info), "fingerprint": extra}
    return {"config": stable_id(items, length=16), "items": items}


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_document(results: Iterable[Mapping[str, Any]], *, settings: Mapping[str, Any], commit: Mapping[str, Any],
                 machine: Mapping[str, Any], run_info: Mapping[str, Any], fingerprint_extra: str = "",
                 name: str | None = None, gate: Mapping[str, Any] | None = None,
                 store: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """A JSON-able run document from per-scenario results (sorted by key, so files diff cleanly).

    ``store`` is the absolute store directory of the run, so CI steps find the saved baseline without
    guessing where pytest's rootdir put it."""
    scenarios = sorted((dict(r) for r in results), key=lambda r: r["key"])
    return {
        "schema": SCHEMA,
        "whileai_version": whileai_version(),
        "created": utc_now(),
        "name": name,
        "store": None if store is None else os.path.abspath(store),
        "commit_info": dict(commit),
        "machine_info": dict(machine),
        "run_info": dict(run_info),
        "fingerprint": fingerprint(run_info, fingerprint_extra),
        "settings": dict(settings),
        "gate": dict(gate) if gate is not None else None,
        "scenarios": scenarios,
    }


def validate_document(doc: Any, *, source: str) -> dict[str, Any]:
    """Check a loaded document's shape; anything off is a ``CorruptBaseline`` naming the field."""
    fix = "delete it, or re-save it with --wai-save=NAME"
    if not isinstance(doc, dict):
        raise CorruptBaseline(f"{source}: a run document must be a JSON object, got {type(doc).__name__}; {fix}")
    for key, kind in _REQUIRED_TOP.items():
        if not isinstance(doc.get(key), kind):
            raise CorruptBaseline(f"{source}: field {key!r} missing or not a {kind.__name__}; {fix}")
    if not doc["schema"].startswith("whileai.run/"):
        raise CorruptBaseline(f"{source}: schema {doc['schema']!r} is not a whileai run document; {fix}")
    for i, sc in enumerate(doc["scenarios"]):
        if not isinstance(sc, dict):
            raise CorruptBaseline(f"{source}: scenarios[{i}] is not an object; {fix}")
        for key, kind in _REQUIRED_SCENARIO.items():
            if not isinstance(sc.get(key), kind):
                raise CorruptBaseline(f"{source}: scenarios[{i}].{key} missing or not a {kind.__name__}; {fix}")
        for j, r in enumerate(sc["rewards"]):
            if isinstance(r, float) and not math.isfinite(r):
                raise NonFiniteReward(f"{source}: scenario {sc['key']!r} (scenarios[{i}]) has reward {r!r} at "
                                      f"rewards[{j}]; NaN and infinity are not scores and are never counted as "
                                      "failures: write null for an unscored trial, or fix what wrote it")
            if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r <= 1):
                raise CorruptBaseline(f"{source}: scenario {sc['key']!r} (scenarios[{i}]) has reward {r!r} at "
                                      f"rewards[{j}], not in [0, 1]; {fix}")
    return doc


def load_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingBaseline(f"no baseline file at {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptBaseline(f"{p}: cannot be read ({exc}); delete it, or re-save it with --wai-save=NAME") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptBaseline(f"{p}: not valid JSON (line {exc.lineno}: {exc.msg}); the file is corrupted or "
                              "truncated; delete it, or re-save it with --wai-save=NAME") from None
    return validate_document(doc, source=str(p))


def dump_document(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=False, allow_nan=False) + "\n"


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


def _same_commit(path: Path, head: str) -> bool:
    try:
        info = json.loads(path.read_text(encoding="utf-8")).get("commit_info") or {}
    except (OSError, ValueError):
        return False
    return info.get("id") == head


def baseline_index(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Scenario entries of a run document by key."""
    return {sc["key"]: sc for sc in doc.get("scenarios", [])}


def check_compatible(baseline: Mapping[str, Any], *, fingerprint_now: Mapping[str, Any], source: str) -> None:
    """Refuse a baseline from another schema major or another config fingerprint, saying what differs."""
    major_then = str(baseline.get("schema", "")).split("/")[-1].split(".")[0]
    major_now = SCHEMA.split("/")[-1].split(".")[0]
    if major_then != major_now:
        raise IncompatibleBaseline(f"baseline {source} has schema {baseline.get('schema')!r}, this plugin writes "
                                   f"{SCHEMA!r}; re-save the baseline with this version (--wai-save=NAME)")
    then = baseline.get("fingerprint") or {}
    if then.get("config") != fingerprint_now.get("config"):
        a = (then.get("items") or {})
        b = dict(fingerprint_now.get("items") or {})
        diffs = []
        for field in ("run_info", "fingerprint"):
            va, vb = a.get(field), b.get(field)
            if isinstance(va, dict) and isinstance(vb, dict):
                for k in sorted(set(va) | set(vb)):
                    if va.get(k) != vb.get(k):
                        diffs.append(f"run_info.{k}: baseline {va.get(k)!r}, now {vb.get(k)!r}")
            elif va != vb:
                diffs.append(f"{field}: baseline {va!r}, now {vb!r}")
        what = "; ".join(diffs) or "config fingerprint differs"
        raise IncompatibleBaseline(f"baseline {source} was measured under another configuration ({what}); "
                                   "compare runs of one configuration, or re-save the baseline (--wai-save=NAME)")


def scenario_incompatibility(then: Mapping[str, Any], now: Mapping[str, Any]) -> str | None:
    """Why one scenario's baseline entry cannot be paired with the current one (``None`` if it can)."""
    if int(then.get("k", -1)) != int(now.get("k", -2)):
        return (f"k={now.get('k')} trials now but k={then.get('k')} in the baseline; run with "
                f"--wai-trials={then.get('k')} or re-save the baseline")
    if (then.get("judge") or None) != (now.get("judge") or None):
        return (f"judge {now.get('judge')!r} now but {then.get('judge')!r} in the baseline; "
                "a baseline graded by another judge is not comparable; re-save it")
    return None
