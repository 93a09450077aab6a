"""Is the judge trustworthy? ``judge_trust(rows, judge=None, ...)``: agreement with gold (Wilson 1927 score
interval), Cohen's kappa (Cohen 1960; interval from the asymptotic standard error of Fleiss, Cohen & Everitt
1969), held-out halves, length bias, re-judge flips and exploit probes (``grade.probes``); ``ok`` only when the
floors are met by the lower bounds and nothing is flagged; says how many labels would settle a short bound
(``grade.labels.labels_needed``).

Floors: the Wilson lower bound of agreement >= 0.8 (``JUDGE_MIN_AGREEMENT``: human-human agreement on MT-Bench
is 81%, Zheng et al. 2023, arXiv 2306.05685) and kappa's lower bound >= 0.6 (``JUDGE_MIN_KAPPA``: Landis & Koch
1977 "substantial"), the floors of the whileai SDK's ``judge_trust``.
"""

from __future__ import annotations

import copy
import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from whileai_core.arguments import fraction, integer
from whileai_core.defaults import (
    CI_LEVEL,
    JUDGE_FLIP_FLAG,
    JUDGE_GUESSING_KAPPA,
    JUDGE_HALF_MIN,
    JUDGE_HALVES_GAP,
    JUDGE_LABEL_SEARCH_MAX,
    JUDGE_LEAK_WARN,
    JUDGE_LENGTH_ALPHA,
    JUDGE_LENGTH_GAP,
    JUDGE_LENGTH_MIN_PER_LABEL,
    JUDGE_MAX_SKIPPED_SHARE,
    JUDGE_MIN_AGREEMENT,
    JUDGE_MIN_GOLD,
    JUDGE_MIN_KAPPA,
    JUDGE_PASS_CUT,
    JUDGE_REJUDGE_SAMPLE,
    JUDGE_SIGN_ALPHA,
)
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.grade.labels import (
    Judge,
    Row,
    _binary,
    _judge_reward,
    _rate_ci,
    _sign_test_p,
    _two_prop_p,
    labels_needed,
    row_label_key,
)
from whileai_core.grade.probes import (
    ProbeReport,
    _probe_row,
    _sample,
    _with_reply,
    judge_probes,
)
from whileai_core.measure.stats import cohen_kappa, cohen_kappa_interval, wilson_interval
from whileai_core.messages import reply_text
from whileai_core.options import Stats, with_stats
from whileai_core.rows import ReportMapping, as_rows, task_key

__all__ = ["JudgeTrustReport", "judge_trust"]


@dataclass
class JudgeTrustReport(ReportMapping):
    """How far the judge can be trusted against gold labels. ``ok`` is the gate; ``warnings`` say why not."""

    SDK_KEYS: ClassVar[dict[str, Any]] = {  # the SDK's judge_trust keys over ours
        "skipped": "n_skipped", "held_out_halves": "halves", "length_sensitivity": "length",
        "exploitable_by": "exploitable_by",
        "agreement": lambda r: {"n": r.n_labeled - r.n_skipped, "n_skipped": r.n_skipped, "agreement": r.agreement,
                                "kappa": r.kappa, "confusion": r.confusion, "ci95": r.agreement_ci, "ok": r.ok,
                                "gold_kind": r.gold_kind, "warnings": r.warnings},
    }

    ok: bool
    verdict: str
    n_rows: int
    n_labeled: int
    n_skipped: int
    gold_kind: str
    agreement: float | None
    agreement_ci: tuple[float, float] | None
    kappa: float | None
    confusion: dict[str, int]
    floors: dict[str, float]
    level: float
    kappa_ci: tuple[float, float] | None = None
    labels_needed: int | None = None
    halves: dict[str, Any] = field(default_factory=dict)
    length: dict[str, Any] = field(default_factory=dict)
    perturbation: dict[str, Any] = field(default_factory=dict)
    probes: ProbeReport | None = None
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def exploitable_by(self) -> list[str]:
        return self.probes.exploitable_by if self.probes else []

    def __str__(self) -> str:
        head = self.verdict
        if self.agreement is None:
            return f"judge trust: {head}: no usable gold labels in {self.n_rows} rows"
        lo, hi = self.agreement_ci or (float("nan"), float("nan"))
        level = f"{round(self.level * 100)}% CI"
        if self.kappa is None or math.isnan(self.kappa):
            kappa = "kappa undefined (one label throughout)"
        elif self.kappa_ci is None:
            kappa = f"kappa {self.kappa:.2f} (no interval, n={self.n_labeled})"
        else:
            flat = f"; zero width: {self._flat_kappa()}" if self.kappa_ci[0] == self.kappa_ci[1] else ""
            kappa = (f"kappa {self.kappa:.2f} ({level} {self.kappa_ci[0]:.2f}..{self.kappa_ci[1]:.2f}, "
                     f"n={self.n_labeled}{flat})")
        return (f"judge trust: {head}: agreement {self.agreement:.0%} ({level} {lo:.0%}..{hi:.0%}, "
                f"n={self.n_labeled}), {kappa}; floors on the lower bounds: agreement >= "
                f"{self.floors['min_agreement']:.0%}, kappa >= {self.floors['min_kappa']:.2f}"
                + (f"; {len(self.warnings)} warning(s)" if self.warnings else ""))

    def _flat_kappa(self) -> str:
        """Why every resample gave one kappa: all items agreed, or the judge gave one label throughout (kappa 0
        in every resample, whatever the agreement: at 67% agreement "every item agreed" was false)."""
        if self.agreement == 1.0:
            return "every item agreed"
        c = self.confusion or {}
        said_pass, said_fail = c.get("tp", 0) + c.get("fp", 0), c.get("fn", 0) + c.get("tn", 0)
        if not said_fail or not said_pass:
            label = "pass" if not said_fail else "fail"
            return f"the judge said {label} on every item, so kappa is 0 in every resample"
        return "every resample gave the same kappa"

    def table(self) -> str:
        lines = [str(self)]
        c = self.confusion
        if self.agreement is not None:
            lines.append(f"  confusion tp={c['tp']} fp={c['fp']} fn={c['fn']} tn={c['tn']}")
        for half in ("a", "b"):
            h = self.halves.get(half)
            if h and h.get("agreement") is not None:
                lines.append(f"  half {half}: agreement {_rate_ci(round(h['agreement'] * h['n']), h['n'], self.level)}")
        for label, d in self.length.get("by_gold", {}).items():
            short = _rate_ci(round(d["pass_short"] * d["n_short"]), d["n_short"], self.level)
            long_ = _rate_ci(round(d["pass_long"] * d["n_long"]), d["n_long"], self.level)
            lines.append(f"  gold={label}: judge pass short {short} vs long {long_}, p={d['p']:.3f}")
        if self.perturbation:
            p = self.perturbation
            flips = _rate_ci(p["consistency_flips"], p["n"], self.level)
            lines.append(f"  re-judge flips {flips}; filler flips +{p['filler_up']}/-{p['filler_down']} of "
                         f"{p['n']} (sign test p={p['filler_p']:.3g})")
        if self.probes:
            lines.append("  " + str(self.probes).replace("\n", "\n  "))
        if self.disagreements:
            lines.append(f"  disagreements to review: {len(self.disagreements)}")
        lines.extend(f"! {w}" for w in self.warnings)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "verdict": self.verdict, "n_rows": self.n_rows, "n_labeled": self.n_labeled,
            "n_skipped": self.n_skipped, "gold_kind": self.gold_kind, "agreement": self.agreement,
            "agreement_ci": list(self.agreement_ci) if self.agreement_ci else None, "kappa": self.kappa,
            "kappa_ci": list(self.kappa_ci) if self.kappa_ci else None,
            "confusion": dict(self.confusion), "floors": dict(self.floors), "level": self.level,
            "labels_needed": self.labels_needed, "halves": copy.deepcopy(self.halves),
            "length": copy.deepcopy(self.length), "perturbation": dict(self.perturbation),
            "probes": self.probes.to_dict() if self.probes else None, "exploitable_by": self.exploitable_by,
            "disagreements": [dict(d) for d in self.disagreements], "warnings": list(self.warnings),
        }


def _gold_values(data: Sequence[Row], gold: Any) -> tuple[list[Any], str | None]:
    """Per-row gold label (or None) and a forced gold kind when gold came from a second row list."""
    if isinstance(gold, str):
        return [r.get(gold) for r in data], None
    other = as_rows(gold, name="gold")
    by_key = {row_label_key(r): r.get("gold_reward", r.get("reward")) for r in other}
    return [by_key.get(row_label_key(r)) for r in data], "model"


def _gold_kind(rows: list[Row]) -> str:
    kinds = {r.get("gold_kind") for r in rows}
    if not kinds or kinds == {None}:
        return "unknown"
    if len(kinds) == 1:
        return str(next(iter(kinds)))
    return "mixed"


def _labeled(data: Sequence[Row], golds: list[Any]) -> tuple[list[tuple[Row, int, int]], int, list[Row]]:
    """(rows with a 0/1 judge reward and a 0/1 gold as (row, judge, gold), gold rows whose reward is not 0/1,
    every row with a 0/1 gold)."""
    labeled: list[tuple[Row, int, int]] = []
    skipped = 0
    with_gold: list[Row] = []
    for row, g in zip(data, golds):
        gb = _binary(g)
        if gb is None:
            continue
        with_gold.append(row)
        jb = _binary(row.get("reward"))
        if jb is None:
            skipped += 1
            continue
        labeled.append((row, jb, gb))
    return labeled, skipped, with_gold


def _halves(labeled: list[tuple[Row, int, int]], j: np.ndarray, g: np.ndarray, *, half_min: int, halves_gap: float,
            warnings: list[str]) -> tuple[dict[str, Any], bool]:
    """Agreement on two held-out halves (split by task hash, so a task never straddles them), and whether
    they differ by ``halves_gap`` or more."""
    flagged = False
    halves: dict[str, Any] = {}
    side = np.array([int(hashlib.sha256(task_key(r).encode()).hexdigest()[:8], 16) % 2 for r, _, _ in labeled])
    for s, name in ((0, "a"), (1, "b")):
        m = side == s
        halves[name] = {"n": int(m.sum()), "agreement": float(np.mean(j[m] == g[m])) if m.any() else None}
    if halves["a"]["n"] >= half_min and halves["b"]["n"] >= half_min:
        gap = abs(halves["a"]["agreement"] - halves["b"]["agreement"])
        halves["gap"] = gap
        if gap >= halves_gap:
            flagged = True
            warnings.append(f"held-out halves disagree: {halves['a']['agreement']:.0%} (n={halves['a']['n']}) vs "
                            f"{halves['b']['agreement']:.0%} (n={halves['b']['n']}) (gap {gap:.0%} >= {halves_gap:.0%})")
    return halves, flagged


def _length_bias(labeled: list[tuple[Row, int, int]], j: np.ndarray, g: np.ndarray, *, gap: float, alpha: float,
                 min_per_label: int, level: float, warnings: list[str]) -> dict[str, Any]:
    """With the gold label fixed, does the judge pass long replies more (or less) than short ones?"""
    length: dict[str, Any] = {"by_gold": {}, "flagged": False}
    lens = np.array([len(reply_text(r)) for r, _, _ in labeled])
    for label in (0, 1):
        m = g == label
        if m.sum() < min_per_label:
            continue
        med = np.median(lens[m])
        short, long_ = m & (lens <= med), m & (lens > med)
        if long_.sum() == 0:  # ties at the median: put them on the long side instead
            short, long_ = m & (lens < med), m & (lens >= med)
        if short.sum() == 0 or long_.sum() == 0:
            continue
        ps, pl = float(j[short].mean()), float(j[long_].mean())
        p = _two_prop_p(int(j[long_].sum()), int(long_.sum()), int(j[short].sum()), int(short.sum()))
        d = {"n_short": int(short.sum()), "n_long": int(long_.sum()), "pass_short": ps, "pass_long": pl,
             "gap": pl - ps, "p": p}
        length["by_gold"][label] = d
        if abs(pl - ps) >= gap and p < alpha:
            length["flagged"] = True
    if length["flagged"]:
        worst = max(length["by_gold"].values(), key=lambda d: abs(d["gap"]))
        long_ = _rate_ci(round(worst["pass_long"] * worst["n_long"]), worst["n_long"], level)
        short = _rate_ci(round(worst["pass_short"] * worst["n_short"]), worst["n_short"], level)
        warnings.append(f"length bias: with the gold label fixed, the judge passes long replies {long_} vs short "
                        f"{short} (p={worst['p']:.3g})")
    return length


def _rejudge(judge: Judge, data: Sequence[Row], labeled: list[tuple[Row, int, int]], *, sample: int, seed: int,
             probes: Any, rubric: str | None, level: float, flip_flag: float, sign_alpha: float,
             warnings: list[str]) -> tuple[dict[str, Any], Any, bool]:
    """Run the judge again: is it the judge that graded the rows, does it flip on the same rows, does filler move
    it, and (with ``probes``) can it be gamed. Returns (perturbation, probe report or None, flagged)."""
    flagged = _other_judge(judge, data, warnings)
    probe_report = None
    picked = _sample([r for r, _, _ in labeled], sample, seed)
    perturbation, unstable = _perturbation(judge, picked, flip_flag=flip_flag, sign_alpha=sign_alpha,
                                           warnings=warnings)
    flagged = flagged or unstable
    if probes:
        probe_report = judge_probes([r for r, _, _ in labeled] if labeled else data, judge, probes=probes,
                                    sample=sample, seed=seed, rubric=rubric, level=level)
        if probe_report.exploitable_by:
            flagged = True
            warnings.append("the judge can be gamed by: " + ", ".join(probe_report.exploitable_by))
    return perturbation, probe_report, flagged


def _other_judge(judge: Judge, data: Sequence[Row], warnings: list[str]) -> bool:
    """True (with a warning) when ``judge`` is named and the rows name another judge."""
    names = {str(r["judge_name"]) for r in data if r.get("judge_name")}
    jn = getattr(judge, "__name__", None) or getattr(judge, "name", None)
    if jn and names and jn not in names and jn != "<lambda>":
        warnings.append(f"judge= is {jn!r} but the rows were graded by {sorted(names)}; grade with the judge "
                        "you are validating")
        return True
    return False


def _perturbation(judge: Judge, picked: list[Row], *, flip_flag: float, sign_alpha: float,
                  warnings: list[str]) -> tuple[dict[str, Any], bool]:
    """Re-judge the picked rows as they are and with filler appended: the verdict flips against the stored
    reward, the filler's net move and its sign test; flagged (with a warning) when either clears ``flip_flag``."""
    flagged = False
    stored = [_binary(r.get("reward")) for r in picked]
    again = [_judge_reward(judge, _with_reply(r, reply_text(r))) for r in picked]
    padded = [_judge_reward(judge, _probe_row("filler", r, [])) for r in picked]
    pairs = [(s, a, p) for s, a, p in zip(stored, again, padded) if s is not None and a is not None
             and p is not None]
    m = len(pairs)
    cut = JUDGE_PASS_CUT
    flips = sum(1 for s, a, _ in pairs if (a >= cut) != bool(s))
    up = sum(1 for _, a, p in pairs if a < cut <= p)
    down = sum(1 for _, a, p in pairs if p < cut <= a)
    perturbation = {"n": m, "consistency_flips": flips, "consistency_flip_rate": flips / m if m else 0.0,
                    "filler_up": up, "filler_down": down, "filler_net_rate": (up - down) / m if m else 0.0,
                    "filler_p": _sign_test_p(up, down)}
    if m and flips / m >= flip_flag:
        flagged = True
        warnings.append(f"re-judging the same rows flips {flips / m:.0%} of verdicts (n={m}); the judge is "
                        "unstable (set temperature 0 or average several calls)")
    if m and abs(up - down) / m >= flip_flag and perturbation["filler_p"] < sign_alpha:
        flagged = True
        warnings.append(f"appending filler moves the verdict: +{up}/-{down} of {m} (sign test "
                        f"p={perturbation['filler_p']:.3g})")
    return perturbation, flagged


def _agreement_checks(agreement: float, ci: tuple[float, float], kappa: float, kappa_ci: tuple[float, float] | None,
                      n: int, *, min_agreement: float,
                      min_kappa: float, min_gold: int, level: float, label_search_max: int, gold_degenerate: bool,
                      first_gold: int, trusted: bool, kind: str, warnings: list[str]) -> tuple[bool, bool, int | None]:
    """Agreement's and kappa's lower bounds against their floors, with a warning for each miss (and how many more
    labels would clear the agreement floor). Returns (agreement ok, kappa ok, labels needed or None)."""
    need = None
    if n < min_gold:
        warnings.append(f"only {n} gold labels (under {min_gold}): the estimate is coarse")
    if gold_degenerate:
        warnings.append(f"every gold label is {first_gold}: kappa and the length check are uninformative; label "
                        "rows of both outcomes")
    if not trusted:
        warnings.append(f"gold is {kind!r}, not human or program labels; pass allow_model_gold=True to accept it")
    agreement_ok = ci[0] >= min_agreement
    kappa_ok = kappa_ci is not None and kappa_ci[0] >= min_kappa
    if not agreement_ok:
        need = labels_needed(agreement, min_agreement, level=level, search_max=label_search_max)
        if need is not None:
            warnings.append(f"agreement {agreement:.0%} but its lower bound {ci[0]:.0%} is under "
                            f"{min_agreement:.0%}. The judge is not the problem; the sample is. Label about "
                            f"{need - n} more rows ({need} in all) at this rate to clear the floor")
        else:
            warnings.append(f"agreement {agreement:.0%} (lower bound {ci[0]:.0%}) is under the {min_agreement:.0%} "
                            "floor; more labels will not fix it, the judge or its rubric must change")
    if not kappa_ok and not gold_degenerate and kappa_ci is None:
        warnings.append(f"kappa is undefined (judge and gold both constant): it cannot clear {min_kappa:.2f}")
    elif not kappa_ok and not gold_degenerate:
        assert kappa_ci is not None
        msg = (f"kappa {kappa:.2f} ({round(level * 100)}% CI {kappa_ci[0]:.2f}..{kappa_ci[1]:.2f}, n={n}): its lower "
               f"bound is under {min_kappa:.2f}")
        if kappa >= min_kappa:
            msg += "; the estimate clears the floor but the sample is too small to show it"
        if kappa < JUDGE_GUESSING_KAPPA:
            msg += ": the judge is guessing (agreement beyond chance is slight)"
        warnings.append(msg)
    return agreement_ok, kappa_ok, need


def _check_trust_arguments(judge: Any, min_kappa: Any, **shares: Any) -> None:
    """The judge is callable, kappa's floor is in [-1, 1], and every share or p-value threshold is in [0, 1]."""
    for name, v in shares.items():
        fraction(name, v, closed=True)
    if isinstance(min_kappa, bool) or not isinstance(min_kappa, (int, float)) or not -1 <= min_kappa <= 1:
        raise InvalidArgument(f"min_kappa= must be a number in [-1, 1]; got {min_kappa!r}")
    if judge is not None and not callable(judge):
        raise InvalidArgumentType(f"judge= must be a callable judge(row) -> verdict; got {type(judge).__name__}")


def _confusion(j: np.ndarray, g: np.ndarray) -> dict[str, int]:
    """Counts of (judge, gold) = (1, 1), (1, 0), (0, 1), (0, 0)."""
    return {"tp": int(np.sum((j == 1) & (g == 1))), "fp": int(np.sum((j == 1) & (g == 0))),
            "fn": int(np.sum((j == 0) & (g == 1))), "tn": int(np.sum((j == 0) & (g == 0)))}


def _leak(confusion: Mapping[str, int], leak_warn: float, level: float, warnings: list[str]) -> None:
    """A warning when the judge passes ``leak_warn`` or more of the rows gold fails (with its interval and n)."""
    gold_fails = confusion["fp"] + confusion["tn"]
    if confusion["fp"] and confusion["fp"] / gold_fails >= leak_warn:
        warnings.append(f"the judge passes {_rate_ci(confusion['fp'], gold_fails, level)} of rows gold fails "
                        "(leak rate)")


def _inconclusive(skipped: int, n_gold: int, max_skipped_share: float, warnings: list[str]) -> bool:
    """Too many gold rows whose judge reward is not 0/1 to say anything."""
    share = skipped / max(1, n_gold)
    if share > max_skipped_share:
        warnings.append(f"{skipped} of {n_gold} gold rows have a judge reward that is not 0/1 "
                        f"({share:.0%} > {max_skipped_share:.0%}); use a pass/fail judge (a hard criterion)")
    return share > max_skipped_share


def judge_trust(
    rows: Any,
    judge: Judge | None = None,
    *,
    gold: str | Any = "gold_reward",
    sample: int = JUDGE_REJUDGE_SAMPLE,
    seed: int = 0,
    probes: str | Iterable[str] | None = None,
    rubric: str | None = None,
    min_agreement: float = JUDGE_MIN_AGREEMENT,
    min_kappa: float = JUDGE_MIN_KAPPA,
    allow_model_gold: bool = False,
    length_gap: float = JUDGE_LENGTH_GAP,
    length_alpha: float = JUDGE_LENGTH_ALPHA,
    length_min_per_label: int = JUDGE_LENGTH_MIN_PER_LABEL,
    flip_flag: float = JUDGE_FLIP_FLAG,
    sign_alpha: float = JUDGE_SIGN_ALPHA,
    halves_gap: float = JUDGE_HALVES_GAP,
    half_min: int = JUDGE_HALF_MIN,
    max_skipped_share: float = JUDGE_MAX_SKIPPED_SHARE,
    leak_warn: float = JUDGE_LEAK_WARN,
    min_gold: int = JUDGE_MIN_GOLD,
    label_search_max: int = JUDGE_LABEL_SEARCH_MAX,
    level: float = CI_LEVEL,
    stats: Stats | None = None,
) -> JudgeTrustReport:
    """Agreement of the stored judge rewards with gold labels, and whether the judge clears the floors.

    Uses rows where both ``reward`` and the gold (``row[gold]``, or a second row list matched by
    ``row_label_key``) are 0/1. ``ok`` needs: labels, trusted gold (human or program, or any with
    ``allow_model_gold``), Wilson lower bound of agreement >= ``min_agreement``, the lower bound of kappa's
    interval (Fleiss, Cohen & Everitt 1969 standard error) >= ``min_kappa``, no
    held-out-halves gap, no length bias, and, with ``judge=``, no unstable re-judging and no exploitable
    probe (``probes="all"`` or names from ``PROBES``). A short bound says how many labels would lift it.

    Args:
        rows: graded rows with gold labels (``wai.attach_labels``): row dicts, a JSONL path, or an object with
            ``.rows``.
        judge: the judge itself, to re-judge a sample (flip rate) and run the probes; None: only the stored
            rewards.
        gold: the row field holding the gold label, or a second row list matched by ``row_label_key``.
        sample: rows re-judged for flips and probes (``JUDGE_REJUDGE_SAMPLE``). (``JUDGE_REJUDGE_SAMPLE``)
        seed: the sampling seed.
        probes: ``"all"`` or names from ``PROBES`` to run with ``judge``.
        rubric: the rubric, for the keyword probe.
        min_agreement: the floor on agreement's Wilson lower bound (``JUDGE_MIN_AGREEMENT`` 0.8).
            (``JUDGE_MIN_AGREEMENT``)
        min_kappa: the floor on kappa's lower bound (``JUDGE_MIN_KAPPA`` 0.6; Landis & Koch 1977).
            (``JUDGE_MIN_KAPPA``)
        allow_model_gold: accept gold labels written by a model.
        length_gap: the short-versus-long pass-rate gap that flags length bias (``JUDGE_LENGTH_GAP``).
            (``JUDGE_LENGTH_GAP``)
        length_alpha: the length-bias test's level (``JUDGE_LENGTH_ALPHA``). (``JUDGE_LENGTH_ALPHA``)
        length_min_per_label: rows per gold label needed for the length test (``JUDGE_LENGTH_MIN_PER_LABEL``).
            (``JUDGE_LENGTH_MIN_PER_LABEL``)
        flip_flag: the re-judge flip rate that flags instability (``JUDGE_FLIP_FLAG``). (``JUDGE_FLIP_FLAG``)
        sign_alpha: the level of the exact sign tests (``JUDGE_SIGN_ALPHA``). (``JUDGE_SIGN_ALPHA``)
        halves_gap: the agreement gap between held-out halves that flags (``JUDGE_HALVES_GAP``).
            (``JUDGE_HALVES_GAP``)
        half_min: rows per half needed for the halves check (``JUDGE_HALF_MIN``). (``JUDGE_HALF_MIN``)
        max_skipped_share: above this share of skipped gold rows the verdict is inconclusive
            (``JUDGE_MAX_SKIPPED_SHARE``). (``JUDGE_MAX_SKIPPED_SHARE``)
        leak_warn: warn when the judge passes this share of rows gold fails (``JUDGE_LEAK_WARN``).
            (``JUDGE_LEAK_WARN``)
        min_gold: fewer gold labels draw a warning (``JUDGE_MIN_GOLD``). (``JUDGE_MIN_GOLD``)
        label_search_max: the largest label count searched for ``labels_needed`` (``JUDGE_LABEL_SEARCH_MAX``).
            (``JUDGE_LABEL_SEARCH_MAX``)
        level: the interval level (``CI_LEVEL``). (``CI_LEVEL``)
        stats: a ``wai.Stats``; its ``level`` and ``seed`` are used. A keyword set beside it to another value is
            an error naming both.

    Returns:
        A ``JudgeTrustReport``: ``ok``, ``verdict``, agreement and kappa with intervals, ``warnings``,
            ``labels_needed``; it prints one line.

    Raises:
        InvalidArgument: an argument out of range, named with its bounds (a ``ValueError``).
        InvalidArgumentType: rows that are not rows, or a ``judge`` that is not callable (a ``TypeError``).

    Example:
        ```python
        labeled = wai.attach_labels(scored.rows, gold, kind="human")
        report = wai.judge_trust(labeled, judge=my_judge, probes="all")
        print(report)
        ```
    """
    if stats is not None:
        given = with_stats(stats, {"level": level, "seed": seed}, {"level": CI_LEVEL, "seed": 0}, where="judge_trust")
        level, seed = given["level"], given["seed"]
    data = as_rows(rows, name="rows")
    _check_trust_arguments(judge, min_kappa, min_agreement=min_agreement, length_gap=length_gap,
                           flip_flag=flip_flag, halves_gap=halves_gap, max_skipped_share=max_skipped_share,
                           length_alpha=length_alpha, sign_alpha=sign_alpha)
    sample, min_agreement = integer("sample", sample, minimum=1), float(min_agreement)
    golds, forced_kind = _gold_values(data, gold)
    warnings: list[str] = []
    floors = {"min_agreement": min_agreement, "min_kappa": float(min_kappa)}

    labeled, skipped, with_gold = _labeled(data, golds)
    kind = forced_kind or _gold_kind(with_gold)
    trusted = kind in ("human", "program") or allow_model_gold
    confusion = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}

    def report(ok: bool, verdict: str, **kw: Any) -> JudgeTrustReport:
        return JudgeTrustReport(ok=ok, verdict=verdict, n_rows=len(data), n_labeled=len(labeled),
                                n_skipped=skipped, gold_kind=kind, floors=floors, level=level,
                                warnings=warnings, **kw)

    if not labeled:
        warnings.append("judge trust is unmeasured: `ok` is false for want of evidence, not for a failed check. "
                        "Label some graded rows (wai.attach_labels(rows, labels)) and rerun")
        return report(False, "NOT MEASURED", agreement=None, agreement_ci=None, kappa=None, confusion=confusion)

    j, g, agreement, ci, kappa, kappa_ci = _agreement_stats(labeled, level)
    confusion = _confusion(j, g)
    flagged = False
    gold_degenerate = len(set(g.tolist())) == 1
    agreement_ok, kappa_ok, need = _agreement_checks(
        agreement, ci, kappa, kappa_ci, len(labeled), min_agreement=min_agreement, min_kappa=min_kappa, min_gold=min_gold,
        level=level, label_search_max=label_search_max, gold_degenerate=gold_degenerate, first_gold=int(g[0]),
        trusted=trusted, kind=kind, warnings=warnings)

    halves, halves_flag = _halves(labeled, j, g, half_min=half_min, halves_gap=halves_gap, warnings=warnings)
    flagged = flagged or halves_flag

    length = _length_bias(labeled, j, g, gap=length_gap, alpha=length_alpha, min_per_label=length_min_per_label,
                          level=level, warnings=warnings)
    flagged = flagged or length["flagged"]

    perturbation: dict[str, Any] = {}
    probe_report = None
    if judge is not None:
        perturbation, probe_report, judge_flag = _rejudge(
            judge, data, labeled, sample=sample, seed=seed, probes=probes, rubric=rubric, level=level,
            flip_flag=flip_flag, sign_alpha=sign_alpha, warnings=warnings)
        flagged = flagged or judge_flag

    inconclusive = _inconclusive(skipped, len(with_gold), max_skipped_share, warnings)
    _leak(confusion, leak_warn, level, warnings)
    ok = bool(trusted and agreement_ok and kappa_ok and not flagged and not inconclusive and not gold_degenerate)
    verdict = "INCONCLUSIVE" if inconclusive else ("PASS" if ok else "FAIL")
    return report(ok, verdict, agreement=agreement, agreement_ci=ci, kappa=None if math.isnan(kappa) else kappa,
                  kappa_ci=kappa_ci,
                  confusion=confusion, labels_needed=need, halves=halves, length=length,
                  perturbation=perturbation, probes=probe_report, disagreements=_disagreements(labeled))


def _agreement_stats(labeled: list[tuple[Row, int, int]], level: float
                     ) -> tuple[np.ndarray, np.ndarray, float, tuple[float, float], float, tuple[float, float] | None]:
    """The judge's and the gold labels as arrays, agreement with its Wilson interval, and Cohen's kappa with its
    interval (Fleiss, Cohen & Everitt 1969 standard error)."""
    j = np.array([x[1] for x in labeled])
    g = np.array([x[2] for x in labeled])
    agree = int(np.sum(j == g))
    ci = wilson_interval(agree, len(labeled), level=level)
    kappa = cohen_kappa(list(j), list(g), labels=[0, 1])
    kappa_ci = cohen_kappa_interval(list(j), list(g), labels=[0, 1], level=level)
    assert ci is not None
    return j, g, agree / len(labeled), ci, kappa, kappa_ci


def _disagreements(labeled: list[tuple[Row, int, int]]) -> list[dict[str, Any]]:
    """The labeled rows where judge and gold disagree: task, both labels, the judge's reason, the reply's start."""
    return [{"task": task_key(r), "gold": gb, "judge": jb, "reason": r.get("reason"),
             "final_text": reply_text(r)[:200]} for r, jb, gb in labeled if jb != gb]
