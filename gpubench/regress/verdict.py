"""Noise-aware verdicts for regression tracking: a threshold per benchmark from its measured noise, and a
verdict "same" / "faster" / "slower" / "ambiguous" in the manner of nvbench's robust compare.

Pure functions over per-repetition samples (seconds per launch, suite_json Record.samples["real_time"]);
compare.py does the command line. docs/regression-statistics.md gives the measurements behind the constants.

The noise of one benchmark, as a relative standard deviation, is the larger of
- within-run: 1.4826 * MAD / median of each baseline run's repetitions (a robust sigma), the median over the
  baseline runs;
- between-run: the range of the baseline runs' medians divided by d2(n), the standard range-to-sigma factor
  for n values (1.128 for 2 runs, 1.693 for 3). Only with two or more baselines.
- profile: where the baselines are of the contender's model, the benchmark's sigma from a noise profile
  (profile.py).
The threshold is max(FLOOR, K_SIGMA * noise, the profile's range: the largest change already seen between
two healthy GPUs of the model on that benchmark), plus the batch term where an ungated run's batch differs
(batch_change()). Repetitions inside one process do not see what moves
between processes and machines, so a single baseline only knows the within-run part and the floor.

Verdict, with change = contender median / baseline median - 1 (baseline median = median of the baselines'
medians): RULES below, an ordered list; the first rule whose predicate holds gives the verdict and its
reason. Throttled samples (counter "throttled" >= 0.5, or an SM clock off the run's: unthrottled()) are
dropped before anything is computed, so a slowdown is never called from them.
"""
import dataclasses
import math
import statistics
from dataclasses import dataclass
from typing import Callable, Optional

from gpubench.regress.identity import bench_code

TIME = "real_time"     # suite_json.TIME, repeated so this module needs nothing from the plots directory
THROTTLED = "throttled"
CLOCK = "sm_clock_mhz"  # per-sample SM clock counter, where the harness records it
CLOCK_MIN = "sm_clock_min_mhz"  # the lowest NVML SM clock reading of the sample
# A clock this much under the run's unthrottled one moves a time by at most as much: a fifth of the FLOOR.
# Throttled samples within it are kept (unthrottled()); a verdict in the direction of a clock change beyond
# it is only ambiguous (rule "clock").
CLOCK_TOL = 0.01
# The smallest threshold, relative: neither one process's repetitions nor a profile from a handful of GPUs
# sees all that differs between GPUs of a model (docs/regression-statistics.md, "The floor").
FLOOR = 0.05
# The floor across GPUs where the between-GPU profile and the current code's process spread both measured a
# benchmark (compare --measured-floor): measured on committed runs of six GPUs (docs/regression-tracking.md,
# "Across GPUs: the default since 2026-12-03").
MEASURED_FLOOR = 0.03
# Between two GPUs a benchmark's change is the difference of two draws of the profile's per-GPU sigma: its
# sigma is sqrt(2) times that (compare --gpu-pair-factor).
GPU_PAIR = 2 ** 0.5
K_SIGMA = 3.0          # threshold = K_SIGMA sigma; a change of 3 sigma from noise alone is rare (< 0.3 % normal)
MIN_SAMPLES = 3        # unthrottled repetitions needed on a side to decide anything
MIN_TIME = 100e-6      # seconds per launch below which nothing is called slower or faster
# A time is compared only if the work per launch is the same: rate x time of these counters, where both sides
# have one, may differ by at most WORK_TOL (a benchmark whose launch was made longer is not slower).
WORK_RATES = ("bytes_per_second", "flops_per_second")
WORK_TOL = 0.02
# Rule "split": a run whose repetitions sit at two levels, part of them at the other side's. At least this many,
# and this share, of one run's repetitions at the other side's median, the rest at least the threshold away, make
# the change the run's, not the code's (a code change moves every repetition); docs/regression-statistics.md,
# "Split runs".
SPLIT_MIN = 2
SPLIT_SHARE = 1 / 3
# The batch term: before the stream gate a launch timed alone included the host's launch latency, and a batch of b
# spread it over b (launches_per_sample, which a run picks from Google Benchmark's iteration count). Measured without
# the gate, t1 = k + O and t8 = k + O / 8 of a 12 us kernel (18.05 and 12.55 us; docs/method.md): O = 6.29 us. Where
# the sides' batches differ and a run is ungated the threshold grows by O x |1/b_contender - 1/b_baseline| / t.
# Gated runs record what a lone launch still adds (context "lone_launch_us", ~1.4 us) or are of the three gated
# bench_codes before the key; their term is left out: the spread between gated runs, whose batches differ, is in
# the thresholds already (docs/regression-statistics.md, "Batch differences").
BATCH = "launches_per_sample"
LONE_LAUNCH_KEY = "lone_launch_us"
LONE_LAUNCH_UNGATED = 6.29e-6
GATED_BEFORE_THE_KEY = ("ed174294", "56457c2c", "a6d5f151")
# d2(n): expected range of n standard normal values; range / d2(n) estimates sigma.
_D2 = {2: 1.128, 3: 1.693, 4: 2.059, 5: 2.326, 6: 2.534, 7: 2.704, 8: 2.847, 9: 2.970, 10: 3.078}

SAME, FASTER, SLOWER, AMBIGUOUS = "same", "faster", "slower", "ambiguous"


def unthrottled(samples, metric=TIME, ref_clock=None):
    """The metric's samples of one Record.samples dict, without those taken while throttled.

    Where ref_clock (the run's unthrottled SM clock, run_clock()) is given and the samples carry an SM
    clock (sm_clock_min_mhz, the lowest reading; sm_clock_mhz in files without it), a sample stays when that
    clock lies within CLOCK_TOL of ref_clock, whatever NVML said: NVML's power-cap reason is often on while
    the clock sits one step under the maximum, which cannot move a time by the FLOOR, and a clock can fall
    with no reason reported. Without a clock, a sample stays unless NVML reported a power or thermal reason
    during it (counter throttled); with neither counter (older files), every sample stays."""
    xs = list(samples.get(metric, ()))
    clocks = samples.get(CLOCK_MIN) or samples.get(CLOCK)
    if ref_clock and clocks and len(clocks) == len(xs):
        return [x for x, c in zip(xs, clocks) if c >= (1 - CLOCK_TOL) * ref_clock]
    flags = samples.get(THROTTLED)
    if not flags or len(flags) != len(xs):
        return xs
    return [x for x, t in zip(xs, flags) if t < 0.5]


def run_clock(suite):
    """A run's unthrottled SM clock: the highest median SM clock (counter sm_clock_mhz) of its samples NVML
    saw unthrottled; None when the run has no clock counters."""
    clocks = [c for r in suite.records for c in unthrottled(r.samples, CLOCK) if c > 0]
    return max(clocks) if clocks else None


def within_noise(xs):
    """Robust relative sigma of one run's repetitions: 1.4826 * MAD / median; nan for fewer than 2 or a zero
    median."""
    if len(xs) < 2:
        return math.nan
    m = statistics.median(xs)
    if m == 0:
        return math.nan
    return 1.4826 * statistics.median(abs(x - m) for x in xs) / abs(m)


def between_noise(medians):
    """Relative sigma of the runs' medians from their range (range / d2(n) / median); 0 for one run."""
    n = len(medians)
    if n < 2:
        return 0.0
    m = statistics.median(medians)
    if m == 0:
        return math.nan
    spread = (max(medians) - min(medians)) / abs(m)
    if n in _D2:
        return spread / _D2[n]
    return statistics.stdev(medians) / abs(m)  # many runs: the sample sigma is the better estimate


@dataclass
class Noise:
    within: float      # median over baseline runs of within_noise
    between: float     # between_noise of the baseline medians (0 with one baseline)
    sigma: float       # max(within, between, profile)
    threshold: float   # max(floor, k * sigma, the profile's range) + batch
    profile: float = 0.0  # sigma from a noise profile (0 when none applies)
    source: str = "noise"  # what set the threshold: "floor", "noise" (k * sigma) or "profile range"
    batch: float = 0.0     # the batch term added to the threshold (batch_change(); 0 where the batches agree)


def noise(baseline_runs, floor=FLOOR, k=K_SIGMA, profile=0.0, profile_range=0.0):
    """Noise and threshold of one benchmark from its baseline runs (a list of sample lists); profile: its
    sigma from a noise profile and profile_range its range, for baselines the profile applies to."""
    runs = [xs for xs in baseline_runs if xs]
    within = [w for w in (within_noise(xs) for xs in runs) if not math.isnan(w)]
    w = statistics.median(within) if within else 0.0
    b = between_noise([statistics.median(xs) for xs in runs])
    b = 0.0 if math.isnan(b) else b
    sigma = max(w, b, profile)
    # the floor only where nothing measured reaches it
    source = "floor" if floor > max(k * sigma, profile_range) else "profile range" if profile_range > k * sigma \
        else "noise"
    return Noise(w, b, sigma, max(floor, k * sigma, profile_range), profile, source)


@dataclass
class Verdict:
    verdict: str       # SAME, FASTER, SLOWER or AMBIGUOUS
    baseline: float    # median of the baselines' medians (nan when none usable)
    contender: float   # contender median (nan when none usable)
    change: float      # contender / baseline - 1
    noise: Noise
    reason: str = ""   # why ambiguous (or "" otherwise)
    short: bool = False
    rule: str = ""     # the name of the rule that gave the verdict (RULES)


# --- The verdict rules ------------------------------------------------------------------------------------

@dataclass
class Facts:
    """What the verdict rules look at for one benchmark."""
    baseline: float        # the numbers shown (raw medians where a side was throttled throughout)
    contender: float
    change: float
    noise: Noise
    enough: bool           # >= min_samples unthrottled repetitions in the contender and in a baseline run
    throttled_out: bool    # samples were dropped and a side has none left
    short: bool            # launch under min_time on either side
    own_noise: float       # the contender's within-run noise (nan for fewer than 2 samples)
    higher_is_better: bool
    k: float = K_SIGMA
    min_time: float = MIN_TIME
    min_samples: int = MIN_SAMPLES
    dropped: int = 0       # samples dropped as throttled, all runs together
    total: int = 0         # samples, all runs together
    clock_change: float = math.nan  # contender / baseline median SM clock - 1
    unjudged: bool = False  # a benchmark never judged (families.unjudged)
    host_bound: bool = False  # measures the host, the GPUs differ, and no profile has it
    work_change: float = math.nan  # time comparisons: contender / baseline work per launch - 1 (work_change())
    split: str = ""        # which run's repetitions lie partly at the other side's level (split_runs()), or ""

    @property
    def worse(self):
        """The change, positive when the contender is worse."""
        return -self.change if self.higher_is_better else self.change


@dataclass(frozen=True)
class Rule:
    name: str
    applies: Callable[[Facts], bool]
    verdict: Optional[str]             # None: SLOWER or FASTER by the change's direction
    reason: Callable[[Facts], str] = lambda f: ""


def _clock_explains(f):
    """Worse with a lower clock, or better with a higher one, by more than CLOCK_TOL."""
    return (f.worse > 0 and f.clock_change < -CLOCK_TOL) or (f.worse <= 0 and f.clock_change > CLOCK_TOL)


# In order; the first that applies decides. A rule after "same" sees a change beyond the threshold.
RULES = (
    # Every sample of a side dropped (HBM-bound launches at the power cap): no verdict, the raw medians shown.
    Rule("throttled", lambda f: f.dropped > 0 and f.throttled_out, AMBIGUOUS,
         lambda f: f"throttled or off-clock (an SM clock more than {CLOCK_TOL:.0%} under the run's, or NVML "
                   f"power/thermal clock events) in {f.dropped} of {f.total} repetitions"),
    Rule("too few samples", lambda f: not f.enough, AMBIGUOUS,
         lambda f: f"fewer than {f.min_samples} unthrottled repetitions"),
    # Another amount of work per launch (the code changed the benchmark's size): its time is no regression.
    Rule("redefined", lambda f: abs(f.work_change) > WORK_TOL, AMBIGUOUS,
         lambda f: f"the work per launch changed by {f.work_change:+.1%} (rate x time): the benchmark was redefined; "
                   "compare its rate (--metric)"),
    Rule("same", lambda f: abs(f.change) <= f.noise.threshold, SAME),
    # The contender is noisier than the threshold allows and the change lies within the threshold plus its own
    # noise: the baselines' noise and its repetitions together may explain it. (Not the first condition alone: a
    # same-GPU threshold can be 0.1 %, and a contender 0.05 % noisier than its baseline then hid a 3 % change;
    # docs/regression-statistics.md.)
    Rule("noisy contender", lambda f: not math.isnan(f.own_noise) and f.k * f.own_noise > f.noise.threshold
         and abs(f.change) <= f.noise.threshold + f.k * f.own_noise,
         AMBIGUOUS, lambda f: f"contender noise {f.own_noise:.1%} (x{f.k:g} = {f.k * f.own_noise:.1%}) above the "
                              "threshold, and with it covering the change"),
    # Launch- and placement-bound on the side that measures it under min_time.
    Rule("short", lambda f: f.short, AMBIGUOUS, lambda f: f"launch under {f.min_time * 1e6:g} µs"),
    Rule("split", lambda f: bool(f.split), AMBIGUOUS,
         lambda f: f"split run: {f.split} lie at the other side's median, the rest at least the threshold "
                   "from them"),
    Rule("unjudged", lambda f: f.unjudged, AMBIGUOUS,
         lambda f: "not judged: moves between processes far beyond its repetitions' spread"),
    Rule("host-bound", lambda f: f.host_bound, AMBIGUOUS,
         lambda f: "host-bound: measures the host as much as the GPU, the GPUs differ, and no noise profile "
                   "says by how much"),
    Rule("clock", _clock_explains, AMBIGUOUS,
         lambda f: f"the contender's SM clock was {f.clock_change:+.1%} off the baseline's: the change may be "
                   "the clock's"),
    Rule("changed", lambda f: True, None),
)


# What was added on 2026-12-03 (14:00) that compare --skip-rule leaves out, to judge as before: the rule split and
# the batch term of the threshold (BATCH_TERM).
OPTIONAL_RULES = ("split", "batch")
BATCH_TERM = True


def rules_without(names):
    """RULES less those named (names from OPTIONAL_RULES)."""
    return tuple(r for r in RULES if r.name not in set(names or ()))


def judge(facts, rules=None):
    """-> Verdict from the first rule of rules (default RULES) that applies to facts."""
    rules = RULES if rules is None else rules
    rule = next(r for r in rules if r.applies(facts))
    v = rule.verdict or (SLOWER if facts.worse > 0 else FASTER)
    return Verdict(v, facts.baseline, facts.contender, facts.change, facts.noise, rule.reason(facts),
                   facts.short, rule.name)


def _median_of_medians(runs):
    runs = [xs for xs in runs if xs]
    return statistics.median(statistics.median(xs) for xs in runs) if runs else math.nan


def _numbers(runs, contender, usable, enough, raw_runs, raw_contender):
    """(baseline, contender, change) as shown: from the usable runs where there are enough samples, else
    from whatever is left, or from every sample (raw_*) where a side has none left."""
    if enough:
        base, cont = _median_of_medians(usable), statistics.median(contender)
        return base, cont, (cont / base - 1 if base else math.inf)
    base = _median_of_medians(runs)
    cont = statistics.median(contender) if contender else math.nan
    if (math.isnan(base) or math.isnan(cont)) and raw_runs is not None:
        base, cont = _median_of_medians(raw_runs), statistics.median(raw_contender)
        return base, cont, (cont / base - 1 if base else math.nan)
    change = cont / base - 1 if base and not math.isnan(base) and not math.isnan(cont) else math.nan
    return base, cont, change


def split_runs(baseline_runs, contender, baseline, contender_median, threshold):
    """'' or the first run (the contender, then each baseline run) with at least SPLIT_MIN and SPLIT_SHARE of its
    repetitions at the other side's level (within the threshold of its median and within half the change) and the
    rest at least the threshold away from them: two levels, not the scatter of a change just past the threshold.
    -> "k of n contender repetitions"."""
    if not baseline or math.isnan(baseline) or math.isnan(contender_median):
        return ""
    near_enough = min(threshold, abs(contender_median / baseline - 1) / 2)
    sides = [("contender", contender, baseline)]
    sides += [(f"baseline run {i + 1}", xs, contender_median) for i, xs in enumerate(baseline_runs)]
    for name, xs, level in sides:
        if not xs or not level:
            continue
        near = [x for x in xs if abs(x / level - 1) <= near_enough]
        far = [x for x in xs if abs(x / level - 1) > near_enough]
        gap = min((abs(f - n) / abs(level) for f in far for n in near), default=0.0)
        if len(near) >= max(SPLIT_MIN, SPLIT_SHARE * len(xs)) and gap >= threshold:
            return f"{len(near)} of {len(xs)} {name} repetitions"
    return ""


def facts(baseline_runs, contender, min_time=MIN_TIME, floor=FLOOR, k=K_SIGMA, min_samples=MIN_SAMPLES,
          higher_is_better=False, profile=0.0, profile_range=0.0, raw=None, short=None, batch_term=0.0, **more):
    """Facts of one benchmark from its unthrottled samples (baseline_runs: one list per run); raw: (the
    baselines' sample lists, the contender's) before throttled samples were dropped; short: whether the
    launch is under min_time (default: the smaller metric median under min_time); batch_term: what a batch
    difference adds to the threshold (batch_change()); more: Facts fields."""
    usable = [xs for xs in baseline_runs if len(xs) >= min_samples]
    nz = noise(usable, floor, k, profile, profile_range)
    enough = bool(usable) and len(contender) >= min_samples
    raw_runs, raw_cont = raw if raw else (baseline_runs, contender)
    total = sum(map(len, raw_runs)) + len(raw_cont)
    dropped = total - sum(map(len, baseline_runs)) - len(contender)
    base, cont, change = _numbers(baseline_runs, contender, usable, enough,
                                  *((raw_runs, raw_cont) if dropped else (None, None)))
    if short is None:
        short = min(base, cont) < min_time
    throttled_out = not any(baseline_runs) or not contender
    if batch_term:
        nz = dataclasses.replace(nz, threshold=nz.threshold + batch_term, batch=batch_term)
    split = split_runs(usable, contender, base, cont, nz.threshold) if enough else ""
    return Facts(base, cont, change, nz, enough, throttled_out, short, within_noise(contender), higher_is_better,
                 k, min_time, min_samples, dropped, total, split=split, **more)


def verdict(baseline_runs, contender, min_time=MIN_TIME, floor=FLOOR, k=K_SIGMA, min_samples=MIN_SAMPLES,
            higher_is_better=False, profile=0.0, profile_range=0.0):
    """Verdict for one benchmark: baseline_runs is a list of sample lists (one per baseline run),
    contender one sample list, both already without throttled samples (see unthrottled()); profile: the
    benchmark's sigma from a noise profile (noise()).

    min_time applies to the smaller of the two medians, so it is meant for times in seconds; pass 0 for other
    metrics."""
    return judge(facts(baseline_runs, contender, min_time, floor, k, min_samples, higher_is_better, profile,
                       profile_range))


@dataclass
class Row:
    name: str
    baseline: float    # median of baseline medians of the metric (seconds per launch for time)
    contender: float
    change: float      # relative
    threshold: float   # relative
    verdict: str
    short: bool        # launch under min_time: never slower or faster
    dropped: int       # throttled samples dropped, all runs together
    reason: str
    clock_change: float = math.nan  # contender / baseline median SM clock - 1 (unthrottled samples; nan if absent)
    rule: str = ""     # the rule that gave the verdict (RULES)
    threshold_from: str = "noise"  # what set the threshold (Noise.source)
    batch_term: float = 0.0  # the part of the threshold a batch difference adds (Noise.batch)


def _time_short(pairs, rec, ref_contender, min_time):
    """Whether a launch is under min_time on either side (real_time medians of unthrottled samples): a launch
    that one run measures under it is launch-bound there."""
    t_runs = [unthrottled(b.samples, TIME, c) for b, c in pairs if TIME in b.samples]
    t_base = _median_of_medians(t_runs) if any(t_runs) else math.inf
    t_cont = unthrottled(rec.samples, TIME, ref_contender) if TIME in rec.samples else []
    return (min(t_base, statistics.median(t_cont)) if t_cont else t_base) < min_time


def lone_launch(suite):
    """Seconds an ungated lone launch's start adds to its time in this run: 0 for a gated run (one that records
    LONE_LAUNCH_KEY, or of GATED_BEFORE_THE_KEY), else LONE_LAUNCH_UNGATED."""
    code = bench_code(suite.context)
    gated = LONE_LAUNCH_KEY in suite.context or (code is not None and code.startswith(GATED_BEFORE_THE_KEY))
    return 0.0 if gated else LONE_LAUNCH_UNGATED


def batch_change(pairs, rec, lone):
    """How much (relative) the contender's batch against the baselines' (median launches_per_sample) can move its
    time when a lone launch adds `lone` seconds: lone x |1/b_contender - 1/b_baseline| / baseline time; 0 where a
    side does not record its batch or time."""
    base_b = [statistics.median(b.samples[BATCH]) for b, _ in pairs if b.samples.get(BATCH)]
    base_t = [statistics.median(b.samples[TIME]) for b, _ in pairs if b.samples.get(TIME)]
    if not base_b or not base_t or not rec.samples.get(BATCH):
        return 0.0
    b_base, b_cont, t = statistics.median(base_b), statistics.median(rec.samples[BATCH]), statistics.median(base_t)
    if min(b_base, b_cont) <= 0 or t <= 0:
        return 0.0
    return lone * abs(1 / b_cont - 1 / b_base) / t


def _clock_change(pairs, rec, ref_contender=None):
    """Relative change of the median SM clock, contender against the baselines' median of medians;
    pairs: (baseline Record, its run's clock) as unthrottled() takes them."""
    runs = [xs for xs in (unthrottled(b.samples, CLOCK, c) for b, c in pairs) if xs]
    cont = unthrottled(rec.samples, CLOCK, ref_contender)
    if not runs or not cont:
        return math.nan
    base = statistics.median(statistics.median(xs) for xs in runs)
    return statistics.median(cont) / base - 1 if base else math.nan


def compare_suites(baselines, contender, min_time=MIN_TIME, floor=FLOOR, k=K_SIGMA, metric=TIME, profile=None,
                   host_bound=None, unjudged=None, profile_range=None, unfloored=None, rules=None,
                   batch=None):
    """Verdicts for every benchmark present without error in the contender and in at least one baseline.

    baselines: list of suite_json.Suite (same code, ideally from several processes and machines: their
    spread is the between-run noise); contender: suite_json.Suite. -> list of Row, in the contender's order.
    For a counter other than time pass metric (counters ending in _per_second are higher-is-better) and
    min_time stays judged on real_time (baseline's or contender's median, the smaller). profile: {name:
    sigma} and profile_range: {name: largest change between two GPUs} (profile.profile_spread()), for
    baselines the profile applies to; benchmarks they lack keep the rule without them.
    host_bound: a predicate on names, for a contender on another GPU (so, maybe, another host): the benchmarks
    it names measure the host as much as the GPU and, unless the profile has them, are never called slower or
    faster, only ambiguous.
    unjudged: a predicate on names of benchmarks never called slower or faster in any comparison.
    unfloored: {name: the floor for it} where a profile measured the benchmark: 0 where a same-GPU profile did
    (profile and profile_range then hold its spread: max(k x sigma, its range)), the measured floor where a
    between-GPU profile and the process spread both did; floor for every other name. rules: the verdict rules
    (default RULES; rules_without()); batch: whether thresholds take the batch term (default BATCH_TERM)."""
    ref = {id(s): run_clock(s) for s in list(baselines) + [contender]}
    return _compare_records(baselines, contender, contender.records, ref, min_time, floor, k, metric, profile,
                            host_bound, unjudged, profile_range, unfloored, rules, batch)


def work_change(baseline_records, rec):
    """Contender / baseline bytes or FLOP per launch - 1, from the first of WORK_RATES both sides have (median
    rate x median time; the baselines' median); nan when they share none."""
    for rate in WORK_RATES:
        base = [b.get(rate) * b.get(TIME) for b in baseline_records if b.has(rate) and b.has(TIME)]
        if base and rec.has(rate) and rec.has(TIME) and statistics.median(base) > 0:
            return rec.get(rate) * rec.get(TIME) / statistics.median(base) - 1
    return math.nan


def _compare_records(baselines, contender, records, ref, min_time=MIN_TIME, floor=FLOOR, k=K_SIGMA, metric=TIME,
                     profile=None, host_bound=None, unjudged=None, profile_range=None, unfloored=None, rules=None,
                     batch=None):
    """compare_suites' rows for `records` of the contender only (each row depends on its record, the baselines'
    records of its name and the runs' clocks alone); ref: {id(suite): run_clock(suite)} for the baselines and the
    contender. detection_rate judges only the benchmarks it planted a slowdown in."""
    rows = []
    profile, profile_range = profile or {}, profile_range or {}
    # 0 where every run is gated or the term is off: no benchmark then needs its batches read
    batch = BATCH_TERM if batch is None else batch
    lone = max(lone_launch(s) for s in list(baselines) + [contender]) if batch else 0.0
    for rec in records:
        if rec.error or metric not in rec.samples:
            continue
        pairs = [(s.by_name.get(rec.name), ref[id(s)]) for s in baselines]
        pairs = [(b, c) for b, c in pairs if b is not None and not b.error and metric in b.samples]
        if not pairs:
            continue
        raw = ([list(b.samples[metric]) for b, _ in pairs], list(rec.samples[metric]))
        short = _time_short(pairs, rec, ref[id(contender)], min_time)
        f = facts([unthrottled(b.samples, metric, c) for b, c in pairs],
                  unthrottled(rec.samples, metric, ref[id(contender)]), min_time,
                  (unfloored or {}).get(rec.name, floor), k,
                  higher_is_better=metric.endswith("_per_second"), profile=profile.get(rec.name, 0.0),
                  profile_range=profile_range.get(rec.name, 0.0), raw=raw, short=short,
                  clock_change=_clock_change(pairs, rec, ref[id(contender)]),
                  unjudged=bool(unjudged and unjudged(rec.name)),
                  host_bound=bool(host_bound and host_bound(rec.name) and rec.name not in profile),
                  work_change=work_change([b for b, _ in pairs], rec) if metric == TIME else math.nan,
                  batch_term=batch_change(pairs, rec, lone) if lone else 0.0)
        v = judge(f, rules)
        rows.append(Row(rec.name, v.baseline, v.contender, v.change, v.noise.threshold, v.verdict, short,
                        f.dropped, v.reason, f.clock_change, v.rule, v.noise.source, v.noise.batch))
    return rows
