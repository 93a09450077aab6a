"""Every number the engine uses, in one place, each with its source beside it.

Each constant is also an argument on the call that uses it, so a user can override it there.
Sections are grouped by loop step; add new constants to the section of the module that reads them.
"""

from __future__ import annotations

# --------------------------------------------------------------------------------------------------
# Measurement (measure.py, stats.py)
# --------------------------------------------------------------------------------------------------
CI_LEVEL = 0.95  # Miller 2024, "Adding Error Bars to Evals" (arXiv 2411.00640): report 95% intervals
BOOTSTRAP_DRAWS = 2000  # Efron & Tibshirani 1993 put the floor at 1000 for percentile intervals; above it, convention, untested
MIN_CI_TASKS = 3  # a bootstrap over fewer than 3 tasks has no spread worth printing; convention, untested
ROLLOUTS_PER_TASK = 4  # smallest k for pass^k / pass@k to be reported; tau-bench (Yao et al. 2024) reports k up to 8, k=4 is convention

# --------------------------------------------------------------------------------------------------
# Simulate (simulate.py, covering.py, world.py, agents.py)
# --------------------------------------------------------------------------------------------------
COVERING_STRENGTH = 2  # pairwise interaction coverage; Kuhn, Wallace & Gallo 2004 (most faults need <= 2 factors)
DEFAULT_BUDGET = 64  # rows per simulate() call when none is given; convention, untested
DEFAULT_REPEATS = 4  # rollouts per situation (k); matches ROLLOUTS_PER_TASK so pass^k is defined
RL_REPEATS = 8  # k under mode="rl" when repeats is not given; DAPO (Yu et al. 2025) uses groups of 8+; convention here
DYNAMIC_PROBE = 2  # rollouts probed before a group is filled to k under repeat_policy="dynamic"; DAPO dynamic sampling (Yu et al. 2025)
DEFAULT_CONCURRENCY = 32  # in-flight rollouts; convention, untested (bounded by the backend's rate limits)
FAULT_SHARE = 0.5  # share of fault-tagged covering-array cells whose fault is kept; whileai SDK DEFAULT_FAULT_RATE, convention
RL_FAULT_SHARE = 0.8  # under mode="rl" more faults are kept, since faults make mixed groups; whileai SDK RL_FAULT_RATE, convention
SEEDED_SHARE = 1 / 3  # share of rollouts the stand-in agent spoils on purpose; chosen so pass@1 ~ 0.67 (the seed's quickstart)
PROGRESS_EVERY_ROWS = 50  # a progress line every N rows on long runs; convention, untested
PROGRESS_MIN_ROWS = 200  # runs smaller than this print no progress; convention, untested
EDGE_ID_MIN = 1000  # ids the template writer invents lie in [1000, 90000); whileai SDK world, convention
EDGE_ID_MAX = 90000

# --------------------------------------------------------------------------------------------------
# Select (select.py)
# --------------------------------------------------------------------------------------------------
DIFFICULTY_BAND = (0.2, 0.8)  # per-task pass-rate band kept for RL; Lambert 2025 (RLHF book, ch. Reasoning); DAPO (Yu et al. 2025)
HACK_THRESHOLD = 0.3  # within-task |correlation| of a feature with reward that flags a possible hack; Gao, Schulman & Hilton 2022
LEAK_MIN_QUOTE_CHARS = 12  # a quote of the privileged block this long in the visible reply counts as a leak; whileai SDK, convention
TRUNCATION_MIN_CHARS = 200  # a reply this long that stops mid-sentence counts as truncated; whileai SDK, convention
SELECT_TARGET = 1000  # rows select() aims for; whileai SDK default, convention
SFT_MIN_REWARD = 1.0  # rejection sampling keeps completions at or above this reward; Touvron et al. 2023 (Llama 2 RS), convention
REJECTION_SAMPLING_MIN_K = 10  # below this many completions per prompt, best-of-n barely selects; Touvron et al. 2023, convention

# --------------------------------------------------------------------------------------------------
# Export (export.py)
# --------------------------------------------------------------------------------------------------
ROW_SCHEMA_VERSION = "1"  # the row format in docs/rows.md
TRAINING_SCHEMA_VERSION = "1"
