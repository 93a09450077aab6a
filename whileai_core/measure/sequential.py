"""Sequential stopping for the paired suite delta: a group-sequential design with an alpha-spending function.

After each round of trials the suite delta D = mean_i (after_i - before_i) over the paired scenarios is
standardized, Z = D / SE, and compared with a boundary c_r that spends the one-sided level alpha/2 as the
information fraction t_r grows (Lan & DeMets 1983, O'Brien-Fleming type, ``defaults.SEQ_SPENDING``). The
baseline side is fixed while the current run grows, so Cov(D_r, D_s) = Var(D_s) for r < s: Z_r sqrt(t_r) has
independent increments (Jennison & Turnbull 2000, ch. 3), and the boundaries come from the recursive numerical
integration of Armitage, McPherson & Rowe (1969). The repeated confidence interval D_r -/+ c_r SE_r holds the
true delta at every look at once (Jennison & Turnbull 1989), so after each round:

* red ("regression") when the interval's upper end is below 0 and the drop is at least ``max_drop``;
* green ("no regression") when its lower end is above -``max_drop``: a drop that large is ruled out;
* otherwise another round; at the last round green unless red.

The green stop is non-binding (the boundaries ignore it), so it can only lower the false-alarm rate. Never a
fixed-sample p-value at an interim look. SE is the larger of the paired empirical standard error and a binomial
floor with ``SEQ_PRIOR_PASSES`` pseudo-counts, so a round where every trial passed is not a zero-width interval.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import chain
from typing import Any, SupportsInt, cast

import numpy as np

from whileai_core import arguments
from whileai_core import defaults as D
from whileai_core.errors import InvalidArgument, InvalidArgumentType
from whileai_core.measure.quantiles.normal import normal_cdf, normal_quantile


@dataclass(frozen=True)
class SequentialPlan:
    """A sequential design: ``round_trials`` trials per scenario each round, up to ``max_trials``.

    Args:
        round_trials: trials per scenario in each round (default ``defaults.SEQ_ROUND_TRIALS`` = 2, the smallest
            round with a within-scenario rate; convention).
        max_trials: trials per scenario of the whole design, the fixed design it is compared with (default
            ``defaults.DEFAULT_REPEATS`` = 4); the last round may be shorter.

    Raises:
        InvalidArgument: ``round_trials`` or ``max_trials`` is not an int >= 1.

    Example::

        plan = SequentialPlan(round_trials=2, max_trials=8)  # 4 rounds; stops after 1, 2 or 3 when it can
    """

    round_trials: int = D.SEQ_ROUND_TRIALS
    max_trials: int = D.DEFAULT_REPEATS

    def __post_init__(self) -> None:
        arguments.integer("round_trials", self.round_trials, minimum=1)
        arguments.integer("max_trials", self.max_trials, minimum=1)

    @property
    def rounds(self) -> int:
        """Rounds to reach ``max_trials`` (the last one may be shorter)."""
        return -(-self.max_trials // self.round_trials)

    def trials(self, round_index: int) -> range:
        """The trial indices of round ``round_index`` (0-based)."""
        start = round_index * self.round_trials
        return range(start, min(start + self.round_trials, self.max_trials))


def spent(t: Any, alpha: float) -> np.ndarray:
    """The one-sided level spent by information fraction ``t``: 2 - 2 Phi(z_{1-alpha/2} / sqrt t) (Lan &
    DeMets 1983, O'Brien-Fleming type); 0 at t=0 and ``alpha`` at t=1."""
    t = np.clip(np.asarray(t, dtype=float), 1e-12, 1.0)
    level: np.ndarray = 2.0 * normal_cdf(normal_quantile(alpha / 2.0) / np.sqrt(t))
    return level


def brent_root(f: Any, a: float, b: float, *, xtol: float, rtol: float = D.ROOT_RTOL,
               maxiter: int = D.ROOT_MAXITER) -> float:
    """A root of ``f`` in [a, b] (``f(a)``, ``f(b)`` of opposite signs) by Brent's method (Brent 1973, ch. 4:
    inverse quadratic or linear interpolation, bisection when a step would not shrink the bracket fast enough),
    with the step rules of ``scipy.optimize.brentq`` so it returns the same float, without importing
    ``scipy.optimize`` (~0.15-0.4 s of every sequential run, issue 34).

    Raises:
        InvalidArgument: f(a) and f(b) have the same sign.
        RuntimeError: no convergence within ``maxiter`` steps.
    """
    x_prev, x_cur = float(a), float(b)
    f_prev, f_cur = float(f(x_prev)), float(f(x_cur))
    if f_prev * f_cur > 0:
        raise InvalidArgument(f"brent_root: f(a) and f(b) must have different signs ({f_prev}, {f_cur})")
    if f_prev == 0:
        return x_prev
    if f_cur == 0:
        return x_cur
    x_blk = f_blk = s_prev = s_cur = 0.0  # x_blk: the bracket's other end (contrapoint)
    for _ in range(maxiter):
        if f_prev * f_cur < 0:
            x_blk, f_blk = x_prev, f_prev
            s_prev = s_cur = x_cur - x_prev
        if abs(f_blk) < abs(f_cur):  # keep the best estimate in x_cur
            x_prev, x_cur, x_blk = x_cur, x_blk, x_cur
            f_prev, f_cur, f_blk = f_cur, f_blk, f_cur
        delta = (xtol + rtol * abs(x_cur)) / 2
        s_bis = (x_blk - x_cur) / 2
        if f_cur == 0 or abs(s_bis) < delta:
            return x_cur
        s_prev, s_cur = _brent_step(x_prev, x_cur, x_blk, f_prev, f_cur, f_blk, s_prev, s_cur, s_bis, delta)
        x_prev, f_prev = x_cur, f_cur
        x_cur += s_cur if abs(s_cur) > delta else (delta if s_bis > 0 else -delta)
        f_cur = float(f(x_cur))
    raise RuntimeError(f"brent_root: no convergence in {maxiter} steps")


def _brent_step(x_prev: float, x_cur: float, x_blk: float, f_prev: float, f_cur: float, f_blk: float,
                s_prev: float, s_cur: float, s_bis: float, delta: float) -> tuple[float, float]:
    """Brent's next (previous step, step): interpolate (secant when only two points, inverse quadratic
    otherwise) when the last step was large and |f| fell, and keep the step when it is short enough; bisect
    otherwise."""
    if abs(s_prev) > delta and abs(f_cur) < abs(f_prev):
        if x_prev == x_blk:
            trial = -f_cur * (x_cur - x_prev) / (f_cur - f_prev)
        else:
            d_prev = (f_prev - f_cur) / (x_prev - x_cur)
            d_blk = (f_blk - f_cur) / (x_blk - x_cur)
            trial = -f_cur * (f_blk * d_blk - f_prev * d_prev) / (d_blk * d_prev * (f_blk - f_prev))
        if 2 * abs(trial) < min(abs(s_prev), 3 * abs(s_bis) - delta):
            return s_cur, trial
    return s_bis, s_bis


@functools.lru_cache(maxsize=512)
def _boundaries(fractions: tuple[float, ...], alpha: float, points: int, width: float) -> tuple[float, ...]:
    spend = np.diff(np.concatenate([[0.0], spent(np.array(fractions), alpha)]))
    bounds: list[float] = []
    grid: np.ndarray | None = None  # the previous look's grid and its trapezoid-weighted density
    mass = np.empty(0)
    prev = 0.0
    for t, pi in zip(fractions, spend):
        dt = t - prev
        if dt <= 0:
            bounds.append(math.inf)  # no new information: nothing to spend
            continue
        if grid is None:
            c = -normal_quantile(float(pi)) if pi > 0 else math.inf
            w = c * math.sqrt(t)
        else:
            sd, at, weighted = math.sqrt(dt), grid, mass

            def excess(b: float) -> float:
                gap: float = float(np.sum(weighted * normal_cdf((at - b) / sd))) - pi
                return gap

            w = brent_root(excess, float(grid[0]) - 10.0, 60.0, xtol=D.SEQ_ROOT_XTOL) if pi > 0 else math.inf
            c = w / math.sqrt(t)
        bounds.append(c)
        top = min(w, width * math.sqrt(t))
        new = np.linspace(-width * math.sqrt(t), top, points)
        if grid is None:
            dens = np.exp(-0.5 * new**2 / t) / math.sqrt(2 * math.pi * t)
        else:
            dens = np.exp(-0.5 * (new[:, None] - grid[None, :]) ** 2 / dt) @ mass / math.sqrt(2 * math.pi * dt)
        h = new[1] - new[0]
        weights = np.full(points, h)
        weights[[0, -1]] = h / 2.0  # trapezoid rule
        grid, mass, prev = new, dens * weights, t
    return tuple(bounds)


def boundaries(fractions: Sequence[float], *, alpha: float = D.GATE_ALPHA / 2, points: int = D.SEQ_GRID_POINTS,
               width: float = D.SEQ_GRID_SD) -> np.ndarray:
    """One-sided z boundaries c_1..c_R at the information ``fractions`` spending ``alpha`` (one-sided) with
    the Lan-DeMets O'Brien-Fleming-type function: P(Z_j < c_j for j < r, Z_r >= c_r) = spent(t_r) - spent(t_r-1)
    under the null, by recursive numerical integration on ``points`` grid points (Armitage et al. 1969).

    Args:
        fractions: nondecreasing information fractions in (0, 1]; the last look is usually 1.
        alpha: one-sided level spent by t=1 (default ``GATE_ALPHA/2``, the gate's "worse" side).
        points: grid points (default ``SEQ_GRID_POINTS``). width: grid half-width in sd (``SEQ_GRID_SD``).

    Returns:
        the boundaries as an array (inf where a look adds no information).

    Raises:
        InvalidArgument: fractions outside (0, 1] or decreasing.

    Example::

        boundaries([0.25, 0.5, 0.75, 1.0])  # ~[4.33, 2.96, 2.36, 2.01] (Jennison & Turnbull 2000, Table 7.6)
    """
    fr = [float(x) for x in fractions]
    if not fr or any(not 0 < x <= 1 for x in fr) or any(b < a for a, b in zip(fr, fr[1:])):
        raise InvalidArgument(f"fractions= must be nondecreasing numbers in (0, 1]; got {fractions!r}")
    alpha = arguments.fraction("alpha", alpha, closed=False)
    return np.array(_boundaries(tuple(round(x, 9) for x in fr), alpha, int(points), float(width)))


def paired_z(before_c: Any, before_n: Any, after_c: Any, after_n: Any,
             prior: float = D.SEQ_PRIOR_PASSES) -> tuple[np.ndarray, np.ndarray]:
    """The suite delta and its standard error over the last axis (scenarios): the mean paired difference of
    pass rates, and the larger of the paired empirical SE and the binomial SE with ``prior`` pseudo passes and
    fails per scenario. Every scenario needs scored trials on both sides."""
    bc, bn, ac, an = (np.asarray(x, dtype=float) for x in (before_c, before_n, after_c, after_n))
    d = ac / an - bc / bn
    n = d.shape[-1]
    delta = d.mean(axis=-1)
    emp = d.var(axis=-1, ddof=1) / n if n > 1 else np.zeros_like(delta)
    p = (ac + bc + prior) / (an + bn + 2 * prior)
    model = np.sum(p * (1 - p) * (1 / an + 1 / bn), axis=-1) / n**2
    return delta, np.sqrt(np.maximum(emp, model))


def fractions_of(before_n: Any, after_n: Any, planned: Any) -> np.ndarray:
    """Information fractions t_r = Var(D at the planned maximum) / Var(D_r) on the binomial model with equal
    rates: mean(1/K_i + 1/b_i) / mean(1/a_ri + 1/b_i); ``after_n`` has looks on its second-to-last axis."""
    bn = np.asarray(before_n, dtype=float)[..., None, :]
    an = np.asarray(after_n, dtype=float)
    k = np.broadcast_to(np.asarray(planned, dtype=float), bn.shape)
    full = np.mean(1 / k + 1 / bn, axis=-1)
    share: np.ndarray = np.clip(full / np.mean(1 / an + 1 / bn, axis=-1), 1e-9, 1.0)
    return share


@dataclass(frozen=True)
class Paths:
    """Decisions of many sequential runs at once (``sequential_paths``): per run, red or not, the look it
    stopped at (0-based), and the delta and repeated interval there."""

    red: np.ndarray
    stop: np.ndarray
    delta: np.ndarray
    low: np.ndarray
    high: np.ndarray
    looks: int


def sequential_paths(before_c: Any, before_n: Any, after_c: Any, after_n: Any, planned: Any, *,
                     alpha: float = D.GATE_ALPHA, max_drop: float = D.GATE_MAX_DROP, last_is_final: bool = True
                     ) -> Paths:
    """The sequential rule on many runs at once (vectorized; the plugin, ``delta_report`` and the simulations
    call this one function). ``before_*``: (runs, scenarios); ``after_*``: (runs, looks, scenarios), cumulative
    scored trials per look; ``planned``: the maximum trials per scenario. ``alpha`` is two-sided (the red side
    spends alpha/2). ``last_is_final``: the last look given is the design's last (its fraction is set to 1)."""
    alpha = arguments.fraction("alpha", alpha, closed=False)
    max_drop = arguments.fraction("max_drop", max_drop, closed=True)
    bc, bn = np.atleast_2d(before_c), np.atleast_2d(before_n)
    ac, an = np.asarray(after_c, dtype=float), np.asarray(after_n, dtype=float)
    if ac.ndim == 2:
        ac, an = ac[None], an[None]
    runs, looks = ac.shape[0], ac.shape[1]
    delta, se = paired_z(bc[:, None, :], bn[:, None, :], ac, an)
    frac = np.maximum.accumulate(fractions_of(bn, an, planned), axis=-1)
    if last_is_final:
        frac[:, -1] = 1.0
    keys = np.round(frac, 6)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    table = np.array([boundaries(row, alpha=alpha / 2) for row in uniq])
    c = table[inverse.reshape(-1)]
    low, high = delta - c * se, delta + c * se
    red = (high < 0) & (-delta >= max_drop)
    green = low > -max_drop
    done = red | green
    done[:, -1] = True
    stop = np.argmax(done, axis=1)
    pick = (np.arange(runs), stop)
    return Paths(red[pick], stop, delta[pick], low[pick], high[pick], looks)


@dataclass(frozen=True)
class Look:
    """One interim analysis: after ``round`` rounds, the suite delta, its SE, z, the boundary, the information
    fraction, the repeated interval and what it decided."""

    round: int
    n_paired: int
    trials: int
    delta: float
    se: float
    z: float
    bound: float
    fraction: float
    ci: list[float]
    decision: str  # regression | no regression | continue


@dataclass
class SequentialResult:
    """A sequential gate: the decision, the round it stopped at, every look, and trials run vs the fixed design.

    ``sequential_test`` returns it; ``print`` shows the decision with the last look's delta, its repeated
    interval and n, and the trials saved; ``to_dict()`` is its JSON form.

    Args:
        decision: "regression", "no regression", or "continue" (rounds remain and nothing is decided).
        red: the gate fails (``decision == "regression"``).
        round: rounds analysed (1-based).
        rounds: rounds of the design (``SequentialPlan.rounds``).
        stopped_early: decided before the design's last round.
        reason: why, in words.
        trials_run: scored trials of the current run up to the last look, summed over the paired scenarios.
        trials_fixed: trials the fixed design runs (``max_trials`` times the paired scenarios).
        alpha: two-sided level (``sequential_test`` passes ``defaults.GATE_ALPHA`` = 0.05 by default).
        max_drop: the equivalence bound and smallest drop called red (``defaults.GATE_MAX_DROP`` = 0.05 there).
        looks: every interim analysis (``Look``: delta, SE, z, boundary, information fraction, repeated interval).
        spending: the alpha-spending function (default ``defaults.SEQ_SPENDING`` = "obrien-fleming", Lan &
            DeMets 1983).

    Example::

        res = sequential_test({"a": (3, 4), "b": (4, 4)}, [{"a": (2, 2), "b": (2, 2)}], plan=SequentialPlan(2, 4))
        res.decision, res.round, res.rounds, res.trials_run, res.trials_fixed  # ('continue', 1, 2, 4, 8)
        print(res)  # sequential (obrien-fleming spending, alpha 0.05): after round 1 of 2: run another round ...
    """

    decision: str  # regression | no regression | continue
    red: bool
    round: int  # rounds analysed (1-based)
    rounds: int  # rounds of the design
    stopped_early: bool
    reason: str
    trials_run: int
    trials_fixed: int
    alpha: float
    max_drop: float
    looks: list[Look] = field(default_factory=list)
    spending: str = D.SEQ_SPENDING

    @property
    def saved_share(self) -> float:
        """Share of the fixed design's trials not run."""
        return 1.0 - self.trials_run / self.trials_fixed if self.trials_fixed else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["saved_share"] = self.saved_share
        return d

    def __str__(self) -> str:
        last = self.looks[-1] if self.looks else None
        where = f"round {self.round} of {self.rounds}"
        head = {"regression": f"stopped red after {where}", "no regression": f"stopped green after {where}",
                "continue": f"after {where}: run another round"}[self.decision]
        if self.decision != "continue" and not self.stopped_early:
            head = f"{'red' if self.red else 'green'} at the last round ({where})"
        nums = "" if last is None else (
            f"; delta {last.delta:+.3f} repeated {round((1 - self.alpha) * 100)}% interval "
            f"[{last.ci[0]:+.3f}, {last.ci[1]:+.3f}], n={last.n_paired} paired scenarios")
        cost = (f"{self.trials_run} of {self.trials_fixed} trials of the fixed design so far"
                if self.decision == "continue" else
                f"{self.trials_run} of {self.trials_fixed} trials of the fixed design run ({self.saved_share:.0%} saved)")
        return f"sequential ({self.spending} spending, alpha {self.alpha:g}): {head}: {self.reason}{nums}; {cost}"


def _reason(decision: str, look: Look, max_drop: float, final: bool) -> str:
    if decision == "regression":
        return f"the interval lies below 0 and the drop {look.delta:+.3f} is at least max_drop={max_drop:g}"
    if decision == "no regression" and look.ci[0] > -max_drop:
        return f"the interval rules out a drop larger than max_drop={max_drop:g}"
    if final:
        return "the last round found no drop that clears the boundary and max_drop"
    return f"the interval neither excludes 0 with a drop >= max_drop={max_drop:g} nor rules out such a drop"


def _count_pair(value: Any, where: str) -> tuple[int, int]:
    """One (passes, scored trials) entry, checked: two whole numbers with 0 <= passes <= trials."""
    import numbers

    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)) or len(value) != 2:
        raise InvalidArgumentType(f"{where} is {value!r}; each entry is a (passes, scored trials) pair")
    passes, trials = value
    for name, x in (("passes", passes), ("trials", trials)):
        whole = cast(SupportsInt, x)  # a concrete Real has __int__ (typeshed's numbers.Real omits it)
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x) or x != int(whole):
            raise InvalidArgument(f"{where}: {name} is {x!r}; counts are whole numbers (passes, scored trials)")
    passes, trials = int(passes), int(trials)
    if passes < 0 or trials < 0 or passes > trials:
        raise InvalidArgument(f"{where} = ({passes}, {trials}): counts need 0 <= passes <= trials (passes, scored "
                              "trials)")
    return passes, trials


def _count_pairs(counts: Mapping[str, Any], where: str) -> dict[str, tuple[int, int]]:
    """``{key: _count_pair(value)}`` for a whole mapping: tuples of two Python ints are checked at once (the run's
    own counts, thousands of keys), anything else one by one (whose errors name the key)."""
    values = list(counts.values())
    if set(map(type, values)) <= {tuple} and set(map(len, values)) <= {2}:
        flat = list(chain.from_iterable(values))
        if set(map(type, flat)) <= {int}:
            try:
                passes, trials = np.array(flat[0::2], dtype=np.int64), np.array(flat[1::2], dtype=np.int64)
            except OverflowError:  # past int64: one by one
                passes = trials = np.zeros(0, dtype=np.int64)
            if len(passes) == len(values) and bool(np.all((passes >= 0) & (passes <= trials))):
                return dict(counts)
    return {k: _count_pair(v, f"{where}[{k!r}]") for k, v in counts.items()}


def _checked_counts(before: Any, after_rounds: Any, plan: Any) -> tuple[dict[str, tuple[int, int]],
                                                                          list[dict[str, tuple[int, int]]]]:
    """``sequential_test``'s inputs, checked: every count a (passes, trials) pair, cumulative counts that never
    fall, and no round with more trials than the plan has run by then. Errors name the round and the key."""
    if not isinstance(plan, SequentialPlan):
        raise InvalidArgumentType(f"plan= is a SequentialPlan(round_trials, max_trials); got {plan!r}")
    if not isinstance(before, Mapping):
        raise InvalidArgumentType(f"before= maps scenario key -> (passes, scored trials); got {type(before).__name__}")
    if isinstance(after_rounds, (str, bytes, Mapping)) or not isinstance(after_rounds, Sequence):
        raise InvalidArgumentType("after_rounds= is a list of {key: (passes, trials)}, one per round (cumulative)")
    if not after_rounds or len(after_rounds) > plan.rounds:
        raise InvalidArgument(f"after_rounds= needs 1..{plan.rounds} rounds of counts; got {len(after_rounds)}")
    base = _count_pairs(before, "before")
    rounds: list[dict[str, tuple[int, int]]] = []
    for r, counts in enumerate(after_rounds):
        if not isinstance(counts, Mapping):
            raise InvalidArgumentType(f"after_rounds[{r}] is a {type(counts).__name__}; each round maps key -> "
                                      "(passes, trials)")
        ran = min((r + 1) * plan.round_trials, plan.max_trials)
        now = _count_pairs(counts, f"after_rounds[{r}]")
        for k, (c, n) in now.items():
            if n > ran:
                raise InvalidArgument(f"after_rounds[{r}][{k!r}] has {n} trials, but {r + 1} round(s) of this plan "
                                      f"run at most {ran} (round_trials={plan.round_trials}, max_trials="
                                      f"{plan.max_trials}); counts are cumulative per round")
        if rounds:
            for k, (c0, n0) in rounds[-1].items():
                if k not in now:
                    raise InvalidArgument(f"after_rounds[{r}] lacks {k!r}, which round {r} had; every round carries "
                                          "the cumulative counts of every scenario")
                c, n = now[k]
                if c < c0 or n < n0:
                    raise InvalidArgument(f"after_rounds[{r}][{k!r}] = ({c}, {n}) is below round {r}'s ({c0}, {n0}); "
                                          "counts are cumulative, so they never fall")
        rounds.append(now)
    return base, rounds


def sequential_test(before: Mapping[str, tuple[int, int]], after_rounds: Sequence[Mapping[str, tuple[int, int]]],
                    *, plan: SequentialPlan, alpha: float = D.GATE_ALPHA, max_drop: float = D.GATE_MAX_DROP
                    ) -> SequentialResult:
    """Decide a sequential gate from per-scenario (passes, scored trials) counts.

    Args:
        before: the baseline's counts by scenario key.
        after_rounds: the current run's cumulative counts after each completed round (round 1 first).
        plan: the design (``SequentialPlan``); ``len(after_rounds) == plan.rounds`` is the last look.
        alpha: two-sided level (default ``GATE_ALPHA``); the red side spends alpha/2.
        max_drop: the equivalence bound and smallest drop called red (default ``GATE_MAX_DROP``).

    Returns:
        a ``SequentialResult`` (``decision`` is "continue" while rounds remain and nothing is decided).

    Raises:
        InvalidArgument: no rounds, more rounds than the plan, fewer than 2 paired scenarios, or impossible counts:
            passes above trials, a negative or fractional or NaN count, cumulative counts that fall from one round
            to the next, a scenario missing from a later round, more trials than the plan runs by that round (a
            ``ValueError``; the message names the round and the key).
        InvalidArgumentType: ``plan`` not a ``SequentialPlan``, or counts that are not (passes, trials) pairs (a
            ``TypeError``).

    Example::

        res = sequential_test({"a": (3, 4), "b": (4, 4)}, [{"a": (2, 2), "b": (2, 2)}], plan=SequentialPlan(2, 4))
        print(res)  # sequential (obrien-fleming spending, alpha 0.05): after round 1 of 2: run another round ...
    """
    before, after_rounds = _checked_counts(before, after_rounds, plan)
    last = after_rounds[-1]
    keys = sorted(k for k in before if k in last and before[k][1] > 0 and all(r.get(k, (0, 0))[1] > 0
                                                                               for r in after_rounds))
    if len(keys) < D.GATE_MIN_PAIRED:
        raise InvalidArgument(f"a sequential test needs >= {D.GATE_MIN_PAIRED} scenarios scored on both sides in "
                              f"every round; got {len(keys)}")
    bc = np.array([before[k][0] for k in keys])
    bn = np.array([before[k][1] for k in keys])
    ac = np.array([[r[k][0] for k in keys] for r in after_rounds])
    an = np.array([[r[k][1] for k in keys] for r in after_rounds])
    final = len(after_rounds) == plan.rounds
    looks: list[Look] = []
    decision = "continue"
    for r in range(len(after_rounds)):  # every look again, so the record shows each interim decision
        paths = sequential_paths(bc, bn, ac[: r + 1], an[: r + 1], plan.max_trials, alpha=alpha, max_drop=max_drop,
                                 last_is_final=final and r == len(after_rounds) - 1)
        delta, se = paired_z(bc, bn, ac[r], an[r])
        frac = float(fractions_of(bn, an[: r + 1], plan.max_trials)[-1]) if not (final and r == len(ac) - 1) else 1.0
        bound = (paths.high[0] - paths.delta[0]) / float(se) if se > 0 else math.inf
        decided = paths.stop[0] == r and (paths.red[0] or paths.low[0] > -max_drop or (final and r == len(ac) - 1))
        step = ("regression" if paths.red[0] else "no regression") if decided else "continue"
        looks.append(Look(r + 1, len(keys), int(an[r].sum()), float(delta), float(se),
                          float(delta / se) if se > 0 else 0.0, float(bound), frac,
                          [float(paths.low[0]), float(paths.high[0])], step))
        if step != "continue":
            decision = step
            break
    look = looks[-1]
    is_final = look.round == plan.rounds
    return SequentialResult(decision, decision == "regression", look.round, plan.rounds,
                            decision != "continue" and not is_final,
                            _reason(decision, look, max_drop, is_final), int(an[look.round - 1].sum()),
                            plan.max_trials * len(keys), alpha, max_drop, looks)
