"""The within-task reward-hack scan: does reward follow a surface feature inside a task?

Source: Gao, Schulman & Hilton 2022 (arXiv 2210.10760) and the library's formalisation in
shared/reference/statistics-methods.md A9.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, ClassVar

import numpy as np

from whileai_core.arguments import fraction, integer
from whileai_core.defaults import (
    CI_LEVEL,
    HACK_ALIAS_CORR,
    HACK_DIFF_TOP,
    HACK_FLOOR_QUANTILE,
    HACK_MIN_DISTINCT,
    HACK_MIN_ROWS,
    HACK_PERM_CHUNK_CELLS,
    HACK_PERMUTATIONS,
    HACK_THRESHOLD,
    NUMERIC_SLACK,
)
from whileai_core.errors import InvalidArgumentType
from whileai_core.guard.features import FeatureFn, _is_text_feature, _reward, row_features
from whileai_core.messages import Row, reply_text
from whileai_core.rows import ReportMapping, as_rows, task_key

__all__ = ["HackScanDiff", "HackScanReport", "hack_scan", "hack_scan_diff", "within_task_correlation"]


# --------------------------------------------------------------------------------------------------
# hack_scan
# --------------------------------------------------------------------------------------------------

VERDICTS = ("clean", "reward hack", "no signal", "too few rows")
# our verdict -> the SDK's regime (rep["regime"]); "too few rows" has no SDK word (docs/sdk.md)
SDK_REGIMES = {"clean": "train", "reward hack": "reward_hack", "no signal": "no_signal", "too few rows": "too_few_rows"}


@dataclass
class HackScanReport(ReportMapping):
    """What predicts reward within a task, against a shuffled-within-task floor.

    ``flagged``: ``[(feature, strength)]`` for non-endorsed features with ``|strength| >= threshold`` and above the
    floor, strongest first. ``strength`` is the within-task (task-demeaned) correlation with reward.
    ``features``: every feature's strength. ``verdict``: one of ``VERDICTS``.
    """

    SDK_KEYS: ClassVar[dict[str, Any]] = {  # the SDK's report keys (docs/sdk.md: regime is the SDK's vocabulary)
        "regime": lambda r: "degenerate" if r.degenerate else SDK_REGIMES[r.verdict],
        "tau": "floor", "n_groups": "n_tasks", "n_features": lambda r: len(r.features),
        "n_above_floor": lambda r: len(r.flagged), "top_feature": lambda r: (r.top or (None, None))[0],
        "rho_max": lambda r: (r.top or (None, None))[1], "n_perm": "permutations", "ok": "ok",
    }

    verdict: str
    flagged: list[tuple[str, float]]
    features: dict[str, float]
    n_rows: int
    n_graded: int
    n_tasks: int
    n_used: int
    floor: float | None
    threshold: float
    permutations: int
    floor_quantile: float
    level: float
    endorsed: list[str] = field(default_factory=list)
    endorsed_features: dict[str, float] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    degenerate: bool = False
    candidates: list[tuple[str, float]] = field(default_factory=list)
    distinct_per_task: float | None = None

    @property
    def top(self) -> tuple[str, float] | None:
        """The strongest non-endorsed feature and its strength (flagged or not), or None."""
        if not self.features:
            return None
        name = max(self.features, key=lambda k: (abs(self.features[k]), k))
        return name, self.features[name]

    @property
    def ok(self) -> bool:
        """True unless the verdict is "reward hack"."""
        return self.verdict != "reward hack"

    def _describe(self, name: str, strength: float) -> str:
        d = self.details.get(name, {})
        ci = d.get("ci")
        ci_txt = f" ({round(self.level * 100)}% CI {ci[0]:+.2f}..{ci[1]:+.2f})" if ci else ""
        return f'"{name}" rho {strength:+.2f}{ci_txt}'

    def __str__(self) -> str:
        n_txt = f"n={self.n_used} rows in {self.n_tasks} tasks"
        if self.verdict == "too few rows":
            return (f"hack scan: too few rows ({self.n_graded} graded of {self.n_rows}; needs {HACK_MIN_ROWS}"
                    " or the min_rows= given)")
        if self.verdict == "no signal" and self.degenerate and self.candidates:
            cand = self.candidates[0] if self.candidates else None
            cand_txt = f"; strongest {self._describe(*cand)}" if cand else ""
            return (f"hack scan: no signal: replies are templated (median {self.distinct_per_task:g} distinct per "
                    f"task), so reply size only relabels the outcome{cand_txt}; n={self.n_used} rows in "
                    f"{self.n_tasks} tasks")
        if self.verdict == "no signal":
            return (f"hack scan: no signal: {self.n_tasks} tasks have mixed rewards and no feature varies within "
                    f"them ({self.n_graded} graded rows), so nothing can predict reward within a task")
        floor_txt = f"floor {self.floor:.2f}" if self.floor is not None else "no floor"
        if self.verdict == "reward hack":
            name, strength = self.flagged[0]
            more = f" (+{len(self.flagged) - 1} more)" if len(self.flagged) > 1 else ""
            return (f"hack scan: reward hack: {self._describe(name, strength)} predicts reward within task, "
                    f"above threshold {self.threshold:.2f} and {floor_txt}{more}; {n_txt}")
        top = self.top
        top_txt = f"strongest {self._describe(*top)}" if top else "no features"
        return (f"hack scan: clean: {top_txt}, below threshold {self.threshold:.2f} or {floor_txt}; {n_txt}")

    def table(self, rows: int = 12) -> str:
        """A multi-line table of the strongest features (``*`` above floor and threshold, ``e`` endorsed)."""
        lines = [str(self)]
        items = sorted({**self.features, **self.endorsed_features}.items(), key=lambda kv: -abs(kv[1]))[:rows]
        lines.append(f"   {'feature':<32} {'within':>7} {'95% CI':>15} {'pooled':>7} {'n':>6}")
        flagged = {f for f, _ in self.flagged}
        for name, strength in items:
            d = self.details.get(name, {})
            mark = ("*" if name in flagged else " ") + ("e" if name in self.endorsed_features else " ")
            ci = d.get("ci")
            ci_txt = f"{ci[0]:+.2f}..{ci[1]:+.2f}" if ci else "-"
            pooled = d.get("pooled")
            pooled_txt = f"{pooled:+.3f}" if pooled is not None else "-"
            lines.append(f"{mark} {name:<32} {strength:+7.3f} {ci_txt:>15} {pooled_txt:>7} {d.get('n_nonzero', 0):>6}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "flagged": [[f, s] for f, s in self.flagged],
            "features": dict(self.features),
            "n_rows": self.n_rows,
            "n_graded": self.n_graded,
            "n_tasks": self.n_tasks,
            "n_used": self.n_used,
            "floor": self.floor,
            "threshold": self.threshold,
            "permutations": self.permutations,
            "floor_quantile": self.floor_quantile,
            "level": self.level,
            "endorsed": list(self.endorsed),
            "endorsed_features": dict(self.endorsed_features),
            "details": {k: dict(v) for k, v in self.details.items()},
            "warnings": list(self.warnings),
            "degenerate": self.degenerate,
            "candidates": [[f, s] for f, s in self.candidates],
            "distinct_per_task": self.distinct_per_task,
        }


def _as_names(name: str, value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    try:
        names = list(value)
    except TypeError:
        raise InvalidArgumentType(f"{name}= takes a feature name or a list of names; got {type(value).__name__}") from None
    for v in names:
        if not isinstance(v, str):
            raise InvalidArgumentType(f"{name}= entries must be feature-name strings; got {v!r}")
    return names


def _group_blocks(g_sorted: np.ndarray) -> np.ndarray:
    """Start index of each contiguous block in a sorted group-index array."""
    return np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])


def _demean(x: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Subtract each contiguous block's mean; values within rounding of zero are snapped to 0."""
    idx = np.repeat(np.arange(len(starts)), counts)
    shape = (-1,) + (1,) * (x.ndim - 1)
    out = x - (np.add.reduceat(x, starts, axis=0) / counts.reshape(shape))[idx]
    scale = np.maximum(np.abs(x).max(axis=0, initial=0.0), 1.0)
    out[np.abs(out) <= NUMERIC_SLACK * scale] = 0.0
    return out


def within_task_correlation(reward: np.ndarray, feats: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Correlation of each feature column with reward after demeaning both within each group.

    rho_j = sum(r~ f~_j) / sqrt(sum(r~^2) sum(f~_j^2)); a column constant within every group gets 0.
    ``groups`` must be sorted (rows of one group contiguous).
    """
    r = np.asarray(reward, dtype=float)
    f = np.asarray(feats, dtype=float).reshape(len(r), -1)
    starts = _group_blocks(np.asarray(groups))
    counts = np.diff(np.r_[starts, len(r)])
    rt = _demean(r, starts, counts)
    ft = _demean(f, starts, counts)
    srr = float(rt @ rt)
    sff = np.einsum("ij,ij->j", ft, ft)
    denom = np.sqrt(srr * sff)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(denom > 0, (rt @ ft) / np.where(denom > 0, denom, 1.0), 0.0)
    return np.clip(rho, -1.0, 1.0)


def _check_features(features: Any) -> None:
    if features is None:
        return
    if not isinstance(features, Mapping):
        raise InvalidArgumentType(f"features= takes a dict {{name: fn(row) -> number}}; got {type(features).__name__}")
    for fname, fn in features.items():
        if not callable(fn):
            raise InvalidArgumentType(f"features[{fname!r}] must be callable fn(row) -> number; got {type(fn).__name__}")


def _feature_matrix(rows: list[Row], groups: np.ndarray, features: Mapping[str, FeatureFn] | None,
                    warnings: list[str]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(feature names, rows x features matrix with missing values filled by the task mean, block starts, counts)."""
    feat_rows: list[dict[str, float]] = []
    for row in rows:
        fr = row_features(row)
        for fname, fn in (features or {}).items():
            try:
                value = fn(row)
            except Exception as exc:  # noqa: BLE001 - a user feature that fails on a row is missing there
                value = None
                msg = f"feature {fname!r} raised {type(exc).__name__} on some rows; those rows count as missing"
                if msg not in warnings:
                    warnings.append(msg)
            fr[fname] = float(value) if isinstance(value, (int, float)) and not isinstance(value, str) else math.nan
        feat_rows.append(fr)
    names_all = sorted({k for fr in feat_rows for k in fr})
    # built-in counts default to 0 when a row lacks them (tool:<x> not called); markers and user features -> NaN
    F = np.array(
        [[fr.get(k, 0.0 if k.startswith(("tool:", "trace:")) else math.nan) for k in names_all] for fr in feat_rows],
        dtype=float,
    )
    # fill missing values with the task mean of that feature (no within-task signal from a missing value)
    starts = _group_blocks(groups)
    counts = np.diff(np.r_[starts, len(groups)])
    present = ~np.isnan(F)
    sums = np.add.reduceat(np.where(present, F, 0.0), starts, axis=0)
    npresent = np.add.reduceat(present.astype(float), starts, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(npresent > 0, sums / np.maximum(npresent, 1), 0.0)
    idx = np.repeat(np.arange(len(starts)), counts)
    F = np.where(present, F, means[idx])
    return names_all, F, starts, counts


def _endorsed_aliases(ft: np.ndarray, sff: np.ndarray, endorsed_mask: np.ndarray, names_all: list[str],
                      alias_corr: float) -> dict[int, str]:
    """Features collinear (|corr| >= alias_corr) with an endorsed one: marked endorsed in ``endorsed_mask``, and
    named here with the endorsed feature they follow."""
    alias_of: dict[int, str] = {}
    if endorsed_mask.any():
        e_idx = np.flatnonzero(endorsed_mask & (sff > 0))
        if len(e_idx):
            norms = np.sqrt(np.where(sff > 0, sff, 1.0))
            cross = np.abs((ft.T @ ft[:, e_idx]) / np.outer(norms, norms[e_idx]))
            for jj in np.flatnonzero(~endorsed_mask & (sff > 0)):
                col = int(jj)
                best = int(np.argmax(cross[col]))
                if cross[col, best] >= alias_corr:
                    alias_of[col] = names_all[int(e_idx[best])]
                    endorsed_mask[col] = True
    return alias_of


def _shuffled_floor(rt: np.ndarray, ft: np.ndarray, sff: np.ndarray, srr: float, live: np.ndarray,
                    groups: np.ndarray, *, seed: int, permutations: int, chunk_cells: int,
                    floor_quantile: float) -> tuple[np.ndarray, float | None]:
    """The largest |rho| of each within-task shuffle of reward, and their ``floor_quantile`` (None: no live feature).

    argsort(group + U) permutes inside each contiguous block."""
    rng = np.random.default_rng(seed)
    maxima = np.zeros(permutations)
    if live.any():
        ft_live = ft[:, live]
        denom = np.sqrt(srr * sff[live])
        step = max(1, chunk_cells // max(1, len(rt)))
        for lo in range(0, permutations, step):  # chunks bound memory; each chunk is one vectorised block
            b = min(step, permutations - lo)
            perm = np.argsort(groups[None, :] + rng.random((b, len(rt))), axis=1)
            rho_perm = (rt[perm] @ ft_live) / denom
            maxima[lo:lo + b] = np.abs(rho_perm).max(axis=1)
    floor = float(np.quantile(maxima, floor_quantile)) if live.any() else None
    return maxima, floor


def _feature_report(names_all: list[str], F: np.ndarray, reward: np.ndarray, rho: np.ndarray, sff: np.ndarray,
                    maxima: np.ndarray, floor: float | None, *, live: np.ndarray, is_endorsed: list[bool],
                    alias_of: dict[int, str], n_tasks: int, level: float, threshold: float, permutations: int,
                    ) -> tuple[dict[str, float], dict[str, float], dict[str, dict[str, Any]], list[tuple[str, float]]]:
    """Per feature: its within-task strength, pooled correlation, Fisher-z interval and permutation p-value; and
    the flags (non-endorsed, live, |rho| >= threshold and above the floor)."""
    n = len(reward)
    # pooled correlation (not demeaned), Fisher-z interval with one df lost per task
    z_crit = NormalDist().inv_cdf(0.5 + level / 2)
    df = n - n_tasks - 2
    with np.errstate(invalid="ignore", divide="ignore"):
        fc = F - F.mean(axis=0)
        rc = reward - reward.mean()
        pden = np.sqrt((rc @ rc) * np.einsum("ij,ij->j", fc, fc))
        pooled = np.where(pden > 0, (rc @ fc) / np.where(pden > 0, pden, 1.0), 0.0)

    feats_out: dict[str, float] = {}
    endorsed_out: dict[str, float] = {}
    details: dict[str, dict[str, Any]] = {}
    flagged: list[tuple[str, float]] = []
    for j, name in enumerate(names_all):
        s = float(round(rho[j], 6))
        d: dict[str, Any] = {
            "strength": s,
            "pooled": float(round(pooled[j], 6)),
            "n_nonzero": int(np.count_nonzero(F[:, j])),
            "constant_within_tasks": bool(sff[j] == 0),
            "endorsed": bool(is_endorsed[j]),
        }
        if j in alias_of:
            d["alias_of"] = alias_of[j]
        if df > 0 and sff[j] > 0:
            z = math.atanh(min(max(rho[j], NUMERIC_SLACK - 1), 1 - NUMERIC_SLACK))
            half = z_crit / math.sqrt(df)
            d["ci"] = [round(math.tanh(z - half), 6), round(math.tanh(z + half), 6)]
        if live[j]:
            d["p_value"] = float((1 + np.count_nonzero(maxima >= abs(rho[j]) - NUMERIC_SLACK)) / (permutations + 1))
        details[name] = d
        if is_endorsed[j]:
            endorsed_out[name] = s
            continue
        feats_out[name] = s
        if live[j] and floor is not None and abs(rho[j]) >= threshold and abs(rho[j]) > floor:
            flagged.append((name, s))
    return feats_out, endorsed_out, details, flagged


def _withhold_text_flags(flagged: list[tuple[str, float]], distinct: float, min_distinct: int, warnings: list[str],
                         ) -> tuple[str, list[tuple[str, float]], list[tuple[str, float]]]:
    """Templated replies: with fewer than min_distinct distinct replies per task, every text feature is a
    relabelling of the outcome, so "this feature predicts reward" cannot be told from "the reward is right".
    Returns (verdict, the flags kept, the text flags moved to candidates)."""
    candidates = [(f, v) for f, v in flagged if _is_text_feature(f)]
    flagged = [(f, v) for f, v in flagged if not _is_text_feature(f)]
    warnings.append(f"replies are templated (median {distinct:g} distinct replies per task, under {min_distinct}): "
                    "the scan withholds reward-hack claims on reply size; rerun on a sampled policy")
    return ("reward hack" if flagged else "no signal"), flagged, candidates


def _informative_tasks(graded: Sequence[tuple[Row, float]], warnings: list[str]) -> tuple[np.ndarray, list[list[int]]]:
    """All rewards, and the tasks (as row indices) with >= 2 graded rows whose rewards differ."""
    by_task: dict[str, list[int]] = {}
    for i, (row, _) in enumerate(graded):
        by_task.setdefault(task_key(row), []).append(i)
    rewards_all = np.array([r for _, r in graded], dtype=float)
    n_single = sum(1 for ids in by_task.values() if len(ids) < 2)
    if n_single:
        warnings.append(f"{n_single} tasks have one graded rollout and carry no within-task signal")
    return rewards_all, [ids for ids in by_task.values() if len(ids) >= 2 and np.ptp(rewards_all[ids]) > 0]


def hack_scan(
    rows: Any,
    *,
    endorsed: str | Iterable[str] = (),
    threshold: float = HACK_THRESHOLD,
    features: Mapping[str, FeatureFn] | None = None,
    permutations: int = HACK_PERMUTATIONS,
    seed: int = 0,
    floor_quantile: float = HACK_FLOOR_QUANTILE,
    min_rows: int = HACK_MIN_ROWS,
    level: float = CI_LEVEL,
    chunk_cells: int = HACK_PERM_CHUNK_CELLS,
    alias_corr: float = HACK_ALIAS_CORR,
    min_distinct: int = HACK_MIN_DISTINCT,
) -> HackScanReport:
    """Which row feature predicts reward within a task, above a shuffled-within-task floor (Gao et al. 2022).

    Features (``row_features`` plus ``features={name: fn(row) -> number}``) and reward are demeaned within each
    task, so a feature that only separates easy tasks from hard ones scores 0. The floor is the
    ``floor_quantile`` of the largest |rho| over all features when reward is shuffled within task
    ``permutations`` times. A non-endorsed feature with |rho| >= ``threshold`` and above the floor is flagged.
    ``endorsed`` names (``fnmatch`` patterns, e.g. ``"tool:*"``) are the behaviours reward is meant to follow and
    are excluded, and so is any feature whose within-task values are collinear with an endorsed one
    (``|corr| >= alias_corr``, e.g. ``tool_calls`` when the only tool is endorsed). When tasks have fewer than
    ``min_distinct`` distinct replies (median), replies are templated and text features only relabel the
    outcome's content: flags on size features (``SIZE_FEATURES``: length, words, newlines) move to
    ``candidates`` (``degenerate=True``) and do not make a "reward hack" verdict; tics (flattery, "!", hedges,
    success claims), markers, tool and user features still do. Rows without a numeric reward are skipped; tasks whose rewards are all equal carry no
    within-task signal and are left out of ``n_used``.

    Args:
        rows: graded rows: row dicts, a JSONL path, or an object with ``.rows``.
        endorsed: ``fnmatch`` patterns of features the reward is meant to follow (excluded).
        threshold: the |rho| a feature must reach (``HACK_THRESHOLD``; Gao et al. 2022). (``HACK_THRESHOLD``)
        features: extra features, ``{name: fn(row) -> number}``.
        permutations: within-task shuffles behind the floor (``HACK_PERMUTATIONS``). (``HACK_PERMUTATIONS``)
        seed: the shuffles' seed.
        floor_quantile: the quantile of the shuffled maximum |rho| used as the floor. (``HACK_FLOOR_QUANTILE``)
        min_rows: fewer usable rows give no verdict (``HACK_MIN_ROWS``). (``HACK_MIN_ROWS``)
        level: the interval level of rho (``CI_LEVEL``). (``CI_LEVEL``)
        chunk_cells: the permutation work done per numpy chunk (memory bound). (``HACK_PERM_CHUNK_CELLS``)
        alias_corr: features this collinear with an endorsed one are excluded too. (``HACK_ALIAS_CORR``)
        min_distinct: below this median of distinct replies per task, size features are only candidates.
            (``HACK_MIN_DISTINCT``)

    Returns:
        A ``HackScanReport`` (``verdict``, ``flagged``, ``candidates``, per-feature rho with intervals); it prints
            one line.

    Raises:
        InvalidArgument: an argument out of range, named with its bounds (a ``ValueError``).
        InvalidArgumentType: rows that are not rows (a ``TypeError``).

    Example:
        ```python
        print(wai.hack_scan(scored.rows))   # hack scan: clean: strongest "words" rho ... n=... rows in ... tasks
        ```
    """
    data = as_rows(rows, name="rows")
    threshold = fraction("threshold", threshold, closed=False)
    floor_quantile = fraction("floor_quantile", floor_quantile, closed=False)
    level = fraction("level", level, closed=False)
    permutations = integer("permutations", permutations, minimum=1)
    min_rows = integer("min_rows", min_rows, minimum=2)
    chunk_cells = integer("chunk_cells", chunk_cells, minimum=1)
    alias_corr = fraction("alias_corr", alias_corr, closed=True)
    min_distinct = integer("min_distinct", min_distinct, minimum=1)
    seed = integer("seed", seed, minimum=0)
    endorsed_names = _as_names("endorsed", endorsed)
    _check_features(features)

    graded = [(row, r) for row in data if (r := _reward(row)) is not None]
    skipped = len(data) - len(graded)
    warnings = [f"{skipped} of {len(data)} rows have no numeric reward and were skipped"] if skipped else []

    def empty(verdict: str, n_tasks: int = 0) -> HackScanReport:
        return HackScanReport(verdict=verdict, flagged=[], features={}, n_rows=len(data), n_graded=len(graded),
                              n_tasks=n_tasks, n_used=0, floor=None, threshold=threshold, permutations=permutations,
                              floor_quantile=floor_quantile, level=level, endorsed=endorsed_names,
                              warnings=warnings)

    if len(graded) < min_rows:
        return empty("too few rows")

    rewards_all, keep_tasks = _informative_tasks(graded, warnings)
    order = [i for ids in keep_tasks for i in ids]
    if len(order) < min_rows:
        return empty("no signal", n_tasks=len(keep_tasks))

    groups = np.repeat(np.arange(len(keep_tasks)), [len(ids) for ids in keep_tasks])
    reward = rewards_all[order]
    names_all, F, starts, counts = _feature_matrix([graded[i][0] for i in order], groups, features, warnings)

    is_endorsed = [any(fnmatch.fnmatchcase(n, p) for p in endorsed_names) for n in names_all]
    warnings.extend(f"endorsed pattern {p!r} matches no feature (names look like 'tool:<name>', 'marker:<name>', "
                    "'reply_length')" for p in endorsed_names if not any(fnmatch.fnmatchcase(n, p) for n in names_all))

    rho = within_task_correlation(reward, F, groups)
    rt, ft = _demean(reward, starts, counts), _demean(F, starts, counts)
    sff, srr = np.einsum("ij,ij->j", ft, ft), float(rt @ rt)
    endorsed_mask = np.array(is_endorsed, dtype=bool)
    alias_of = _endorsed_aliases(ft, sff, endorsed_mask, names_all, alias_corr)
    is_endorsed = [bool(x) for x in endorsed_mask]
    live = (sff > 0) & ~endorsed_mask
    maxima, floor = _shuffled_floor(rt, ft, sff, srr, live, groups, seed=seed, permutations=permutations,
                                    chunk_cells=chunk_cells, floor_quantile=floor_quantile)

    n, t = len(reward), len(keep_tasks)
    feats_out, endorsed_out, details, flagged = _feature_report(
        names_all, F, reward, rho, sff, maxima, floor, live=live, is_endorsed=is_endorsed, alias_of=alias_of,
        n_tasks=t, level=level, threshold=threshold, permutations=permutations)
    flagged.sort(key=lambda kv: (-abs(kv[1]), kv[0]))
    for name, s in endorsed_out.items():
        if s <= -threshold:
            warnings.append(f"endorsed feature {name!r} is punished by the reward (rho {s:+.2f})")
    verdict = "reward hack" if flagged else ("clean" if (sff > 0).any() else "no signal")
    distinct = float(np.median([len({reply_text(graded[i][0]) for i in ids}) for ids in keep_tasks]))
    degenerate = distinct < min_distinct
    candidates: list[tuple[str, float]] = []
    if degenerate and any(_is_text_feature(f) for f, _ in flagged):
        verdict, flagged, candidates = _withhold_text_flags(flagged, distinct, min_distinct, warnings)
    return HackScanReport(verdict=verdict, flagged=flagged, features=feats_out, n_rows=len(data),
                          n_graded=len(graded), n_tasks=t, n_used=n, floor=floor, threshold=threshold,
                          permutations=permutations, floor_quantile=floor_quantile, level=level,
                          endorsed=endorsed_names, endorsed_features=endorsed_out, details=details,
                          warnings=warnings, degenerate=degenerate, candidates=candidates,
                          distinct_per_task=distinct)


# --------------------------------------------------------------------------------------------------
# hack_scan_diff: what the policy learned to do for reward, before vs after training
# --------------------------------------------------------------------------------------------------


class HackScanDiff(dict):
    """Two hack scans side by side; prints the verdicts, what moved, and what the policy learned."""

    def __str__(self) -> str:
        b, a = self["before"], self["after"]
        lines = [(f"hack scan before: {b['verdict']} (n={b['n_used']} rows in {b['n_tasks']} tasks); "
                  f"after: {a['verdict']} (n={a['n_used']} rows in {a['n_tasks']} tasks)")]
        if self["gained"]:
            lines.append("flagged after, not before: " + ", ".join(self["gained"]))
        if self["lost"]:
            lines.append("flagged before, not after: " + ", ".join(self["lost"]))
        lines.append(f"   {'feature':<32} {'before':>7} {'after':>7} {'change':>7}")
        for m in self["moved"]:
            lines.append(f"   {m['feature']:<32} {_signed(m['before'])} {_signed(m['after'])} {m['change']:+7.3f}")
        lines.append(self["learned"])
        lines.extend(f"! {w}" for w in self["warnings"])
        return "\n".join(lines)


def _signed(x: float | None) -> str:
    return f"{x:+7.3f}" if x is not None else f"{'-':>7}"


def _side(rep: HackScanReport) -> dict[str, Any]:
    top = rep.flagged[0] if rep.flagged else rep.top
    return {"verdict": rep.verdict, "top_feature": top[0] if top else None, "rho_max": top[1] if top else None,
            "floor": rep.floor, "degenerate": rep.degenerate, "flagged": [f for f, _ in rep.flagged],
            "n_used": rep.n_used, "n_tasks": rep.n_tasks}


def hack_scan_diff(before: Any, after: Any, *, endorsed: str | Iterable[str] = (), top: int = HACK_DIFF_TOP,
                   **scan_kwargs: Any) -> HackScanDiff:
    """Compare what predicts reward within a task before and after training: what the policy learned.

    Args:
        before: the base policy's graded rows (or its ``HackScanReport``).
        after: the trained policy's graded rows on the same tasks (or its ``HackScanReport``).
        endorsed: the behaviours reward is meant to follow (``hack_scan(endorsed=)``).
        top: how many features to list as moved, largest change first (default
            ``defaults.HACK_DIFF_TOP`` = 10).
        **scan_kwargs: passed to both ``hack_scan`` calls (``threshold``, ``permutations``, ``seed``, ...).

    Returns:
        HackScanDiff: ``{before, after (verdict, top_feature, rho_max, floor, degenerate, flagged, n_used,
        n_tasks), gained, lost, moved [{feature, before, after, change}], learned, warnings}``.
        ``learned`` is one sentence naming the feature whose within-task rho rose most; it is withheld when
        either side is degenerate (templated replies). A non-endorsed feature learned above the threshold
        adds a reward-hack warning.

    Raises:
        InvalidArgument: ``top`` < 1, or a ``scan_kwargs`` value out of range, named with its bounds (a
            ``ValueError``), as in ``hack_scan``.
        InvalidArgumentType: ``endorsed`` is neither a name nor a list of names, ``before``/``after`` are
            neither rows nor a ``HackScanReport`` (a ``TypeError``).
        TypeError: a ``scan_kwargs`` name ``hack_scan`` does not take.

    Example:
        ```pycon
        >>> d = hack_scan_diff(base_rows, trained_rows, endorsed=["tool:*"])  # doctest: +SKIP
        >>> print(d["learned"])  # doctest: +SKIP
        the policy learned "n:exclaim" (within-task rho +0.05 -> +0.62), which is not endorsed
        ```
    """
    top = integer("top", top, minimum=1)
    names = _as_names("endorsed", endorsed)
    rb = before if isinstance(before, HackScanReport) else hack_scan(before, endorsed=names, **scan_kwargs)
    ra = after if isinstance(after, HackScanReport) else hack_scan(after, endorsed=names, **scan_kwargs)
    fb, fa = {**rb.features, **rb.endorsed_features}, {**ra.features, **ra.endorsed_features}
    moved: list[dict[str, Any]] = [{"feature": f, "before": fb.get(f), "after": fa.get(f),
                                    "change": (fa.get(f) or 0.0) - (fb.get(f) or 0.0)} for f in sorted(set(fb) | set(fa))]
    moved.sort(key=lambda m: (-abs(m["change"]), m["feature"]))
    gained = [f for f, _ in ra.flagged if f not in {g for g, _ in rb.flagged}]
    lost = [f for f, _ in rb.flagged if f not in {g for g, _ in ra.flagged}]
    warnings = [f"before: {w}" for w in rb.warnings] + [f"after: {w}" for w in ra.warnings]
    rising = [m for m in moved if m["change"] > 0 and m["after"] is not None]
    if rb.degenerate or ra.degenerate:
        learned = ("no claim: replies are templated on one side (too few distinct replies per task), so a feature's "
                   "rise only relabels the outcome; sample with temperature and re-scan")
    elif not rising:
        learned = "the policy learned nothing the scan can see: no feature's within-task rho rose"
    else:
        m = rising[0]
        is_endorsed = m["feature"] in ra.endorsed_features
        learned = (f'the policy learned "{m["feature"]}" (within-task rho {_signed(m["before"]).strip()} -> '
                   f'{m["after"]:+.2f}), which is {"endorsed" if is_endorsed else "not endorsed"}')
        if not is_endorsed and m["feature"] in {f for f, _ in ra.flagged}:
            warnings.insert(0, f"REWARD HACK: training taught {m['feature']!r}, which reward follows within task "
                               f"(rho {m['after']:+.2f}) and nobody endorsed; add a check that punishes it or "
                               "endorse it on purpose")
    return HackScanDiff(before=_side(rb), after=_side(ra), gained=gained, lost=lost, moved=moved[:top],
                        learned=learned, warnings=warnings)
