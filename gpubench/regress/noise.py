"""Noise-aware verdicts for regression tracking: a threshold per benchmark from its measured noise, and a
verdict "same" / "faster" / "slower" / "ambiguous" in the manner of nvbench's robust compare.

Pure functions over per-repetition samples (seconds per launch, suite_json Record.samples["real_time"]);
compare.py does the command line. No argparse here.

The noise of one benchmark, as a relative standard deviation, is the larger of
- within-run: 1.4826 * MAD / median of each baseline run's repetitions (a robust sigma), the median over the
  baseline runs;
- between-run: the range of the baseline runs' medians divided by d2(n), the standard range-to-sigma factor
  for n values (1.128 for 2 runs, 1.693 for 3). Only with two or more baselines.
- profile: where the baselines are of the contender's model, the benchmark's between-GPU sigma from a noise
  profile (profile(); results/<slug>/noise_profile.json, made by noise_profile.py).
The threshold is max(FLOOR, K_SIGMA * noise, the profile's range: the largest change already seen between
two healthy GPUs of the model on that benchmark). Why between-run matters: on the committed H200 runs the 5
repetitions inside one process agree to 0.01-0.5 % while the same benchmark moved by up to 10 % between
processes and machine instances (coalescing/read/hbm/stride:64); repetitions alone cannot see that, so a
single baseline only knows the within-run part and the floor (tests/python/test_noise.py measures what that
costs).

Verdict, with change = contender median / baseline median - 1 (baseline median = median of the baselines'
medians):
- |change| <= threshold: "same";
- beyond it: "slower" or "faster", unless the contender cannot be trusted to tell: fewer than MIN_SAMPLES
  unthrottled repetitions on either side, or the contender's own within-run noise * K_SIGMA above the
  threshold (it is noisier than the baseline says the benchmark is): "ambiguous";
- launches shorter than min_time (the baseline's median or the contender's) are never "slower" or "faster":
  beyond the threshold they are "ambiguous" with short=True (launch- and placement-bound; they moved by up
  to 50 % between runs).
Throttled samples (counter "throttled" >= 0.5: NVML reported power or thermal slowdown during the sample)
are dropped before anything is computed, so a slowdown is never called from them.
"""
import math
import re
import statistics
from dataclasses import dataclass

TIME = "real_time"     # suite_json.TIME, repeated so this module needs nothing from the plots directory
THROTTLED = "throttled"
CLOCK = "sm_clock_mhz"  # per-sample SM clock counter, where the harness records it
CLOCK_MIN = "sm_clock_min_mhz"  # the lowest NVML SM clock reading of the sample
# A clock this much under the run's unthrottled one moves a time by at most as much: a fifth of the FLOOR.
# Throttled samples within it are kept (unthrottled()); a verdict in the direction of a clock change beyond
# it is only ambiguous (compare_suites).
CLOCK_TOL = 0.01
# The smallest threshold, relative. Neither the repetitions of one process nor a noise profile from a handful
# of GPUs sees all that differs between GPUs of a model: over the H200 runs of one benchmark code
# (results/h200/20261201T00*, T02*), launches >= 100 µs whose between-GPU sigma was under 1 % still spread by
# up to 3 % over seven GPUs, and a GPU new to the profile stood 5-6 % off on a few barrier shapes; the GPUs
# fall into two groups 4-9 % apart on HBM latency and large-stride HBM reads. 5 % leaves a 10 % slowdown
# clear of the threshold (the old 3 %, from one machine instance's 95th percentile, flagged 10-49
# benchmarks between two GPUs).
FLOOR = 0.05
K_SIGMA = 3.0          # threshold = K_SIGMA sigma; a change of 3 sigma from noise alone is rare (< 0.3 % normal)
MIN_SAMPLES = 3        # unthrottled repetitions needed on a side to decide anything
MIN_TIME = 100e-6      # seconds per launch below which nothing is called slower or faster
# d2(n): expected range of n standard normal values; range / d2(n) estimates sigma.
_D2 = {2: 1.128, 3: 1.693, 4: 2.059, 5: 2.326, 6: 2.534, 7: 2.704, 8: 2.847, 9: 2.970, 10: 3.078}

SAME, FASTER, SLOWER, AMBIGUOUS = "same", "faster", "slower", "ambiguous"


def unthrottled(samples, metric=TIME, ref_clock=None):
    """The metric's samples of one Record.samples dict, without those taken while throttled.

    Where ref_clock (the run's unthrottled SM clock, run_clock()) is given and the samples carry an SM
    clock (sm_clock_min_mhz, the lowest reading; sm_clock_mhz in files without it), a sample stays when that
    clock lies within CLOCK_TOL of ref_clock, whatever NVML said: on H200s the power-cap reason is often on
    while the clock sits one 15 MHz step under 1980 MHz (0.8 %), which cannot move a time by the FLOOR, and
    a chase right after an HBM sweep once ran at 1720 MHz in 4 of 5 repetitions with no reason reported
    (runs of 69644e0), 14 % slower. Without a clock, a sample stays unless NVML reported a power or thermal
    reason during it (counter throttled); with neither counter (older files), every sample stays."""
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
    threshold: float   # max(floor, k * sigma, the profile's range)
    profile: float = 0.0  # between-GPU sigma from a noise profile (0 when none applies)


def noise(baseline_runs, floor=FLOOR, k=K_SIGMA, profile=0.0, profile_range=0.0):
    """Noise and threshold of one benchmark from its baseline runs (a list of sample lists); profile: its
    between-GPU sigma from a noise profile and profile_range its range, for baselines of the contender's model."""
    runs = [xs for xs in baseline_runs if xs]
    within = [w for w in (within_noise(xs) for xs in runs) if not math.isnan(w)]
    w = statistics.median(within) if within else 0.0
    b = between_noise([statistics.median(xs) for xs in runs])
    b = 0.0 if math.isnan(b) else b
    sigma = max(w, b, profile)
    return Noise(w, b, sigma, max(floor, k * sigma, profile_range), profile)


@dataclass
class Verdict:
    verdict: str       # SAME, FASTER, SLOWER or AMBIGUOUS
    baseline: float    # median of the baselines' medians (nan when none usable)
    contender: float   # contender median (nan when none usable)
    change: float      # contender / baseline - 1
    noise: Noise
    reason: str = ""   # why ambiguous (or "" otherwise)
    short: bool = False


def verdict(baseline_runs, contender, min_time=MIN_TIME, floor=FLOOR, k=K_SIGMA, min_samples=MIN_SAMPLES,
            higher_is_better=False, profile=0.0, profile_range=0.0):
    """Verdict for one benchmark: baseline_runs is a list of sample lists (one per baseline run),
    contender one sample list, both already without throttled samples (see unthrottled()); profile: the
    benchmark's between-GPU sigma (noise()).

    min_time applies to the smaller of the two medians, so it is meant for times in seconds; pass 0 for other
    metrics."""
    usable = [xs for xs in baseline_runs if len(xs) >= min_samples]
    nz = noise(usable, floor, k, profile, profile_range)
    if not usable or len(contender) < min_samples:
        base = statistics.median(statistics.median(xs) for xs in baseline_runs if xs) if any(baseline_runs) \
            else math.nan
        cont = statistics.median(contender) if contender else math.nan
        change = cont / base - 1 if base and not math.isnan(base) and not math.isnan(cont) else math.nan
        return Verdict(AMBIGUOUS, base, cont, change, nz,
                       f"fewer than {min_samples} unthrottled repetitions")
    base = statistics.median(statistics.median(xs) for xs in usable)
    cont = statistics.median(contender)
    change = cont / base - 1 if base else math.inf
    short = min(base, cont) < min_time
    if abs(change) <= nz.threshold:
        return Verdict(SAME, base, cont, change, nz, short=short)
    if short:
        return Verdict(AMBIGUOUS, base, cont, change, nz, f"launch under {min_time * 1e6:g} µs", short=True)
    own = within_noise(contender)
    if not math.isnan(own) and k * own > nz.threshold:
        return Verdict(AMBIGUOUS, base, cont, change, nz,
                       f"contender noise {own:.1%} (x{k:g} = {k * own:.1%}) above the threshold")
    worse = -change if higher_is_better else change
    return Verdict(SLOWER if worse > 0 else FASTER, base, cont, change, nz)


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


def compare_suites(baselines, contender, min_time=MIN_TIME, floor=FLOOR, k=K_SIGMA, metric=TIME, profile=None,
                   host_bound=None, unjudged=None, profile_range=None):
    """Verdicts for every benchmark present without error in the contender and in at least one baseline.

    baselines: list of suite_json.Suite (same code, ideally from several processes and machines: their
    spread is the between-run noise); contender: suite_json.Suite. -> list of Row, in the contender's order.
    For a counter other than time pass metric (counters ending in _per_second are higher-is-better) and
    min_time stays judged on real_time (baseline's or contender's median, the smaller). profile: {name:
    between-GPU sigma} and profile_range: {name: largest change between two GPUs} (profile_spread()), for
    baselines of the contender's model; benchmarks they lack keep the rule without them.
    host_bound: a predicate on names, for a contender on another GPU (so, maybe, another host): the benchmarks
    it names measure the host as much as the GPU and, unless the profile has them, are never called slower or
    faster, only ambiguous.
    unjudged: a predicate on names of benchmarks never called slower or faster in any comparison."""
    rows = []
    hib = metric.endswith("_per_second")
    profile = profile or {}
    ref = {id(s): run_clock(s) for s in list(baselines) + [contender]}
    for rec in contender.records:
        if rec.error or metric not in rec.samples:
            continue
        pairs = [(s.by_name.get(rec.name), ref[id(s)]) for s in baselines]
        pairs = [(b, c) for b, c in pairs if b is not None and not b.error and metric in b.samples]
        if not pairs:
            continue
        bases = [b for b, _ in pairs]
        runs = [unthrottled(b.samples, metric, c) for b, c in pairs]
        cont = unthrottled(rec.samples, metric, ref[id(contender)])
        dropped = sum(len(b.samples[metric]) for b in bases) + len(rec.samples[metric]) \
            - sum(map(len, runs)) - len(cont)
        t_runs = [unthrottled(b.samples, TIME, c) for b, c in pairs if TIME in b.samples]
        t_base = statistics.median(statistics.median(xs) for xs in t_runs if xs) if any(t_runs) else math.inf
        t_cont = unthrottled(rec.samples, TIME, ref[id(contender)]) if TIME in rec.samples else []
        # Short on either side: a launch that one run measures under min_time is launch-bound there (on H200s
        # a ~100 us barrier launch sat at 97 us on most GPUs and at 102-103 us on three).
        t_short = min(t_base, statistics.median(t_cont)) if t_cont else t_base
        v = verdict(runs, cont, 0.0, floor, k, higher_is_better=hib, profile=profile.get(rec.name, 0.0),
                    profile_range=(profile_range or {}).get(rec.name, 0.0))
        if v.verdict == AMBIGUOUS and dropped and (math.isnan(v.baseline) or math.isnan(v.contender)):
            # Throttled throughout (seen on H200s: HBM-bound launches at the power cap, SM clock 1935-1965 MHz):
            # no verdict, but the row still shows what was measured.
            raw_b = statistics.median(statistics.median(b.samples[metric]) for b in bases)
            raw_c = statistics.median(rec.samples[metric])
            v = Verdict(AMBIGUOUS, raw_b, raw_c, raw_c / raw_b - 1 if raw_b else math.nan, v.noise,
                        f"throttled or off-clock (an SM clock more than {CLOCK_TOL:.0%} under the run's, or NVML power/thermal "
                        f"clock events) in {dropped} of "
                        f"{sum(len(b.samples[metric]) for b in bases) + len(rec.samples[metric])} repetitions")
        if t_short < min_time and v.verdict in (FASTER, SLOWER):
            v = Verdict(AMBIGUOUS, v.baseline, v.contender, v.change, v.noise,
                        f"launch under {min_time * 1e6:g} µs", short=True)
        elif unjudged and v.verdict in (FASTER, SLOWER) and unjudged(rec.name):
            v = Verdict(AMBIGUOUS, v.baseline, v.contender, v.change, v.noise,
                        "not judged: moves between processes far beyond its repetitions' spread")
        elif host_bound and v.verdict in (FASTER, SLOWER) and host_bound(rec.name) and rec.name not in profile:
            v = Verdict(AMBIGUOUS, v.baseline, v.contender, v.change, v.noise,
                        "host-bound: measures the host as much as the GPU, the GPUs differ, and no noise profile "
                        "says by how much")
        clock = _clock_change(pairs, rec, ref[id(contender)])
        # slower (worse, for any metric) with a lower clock, or faster with a higher one: the clock explains it
        if (v.verdict == SLOWER and clock < -CLOCK_TOL) or (v.verdict == FASTER and clock > CLOCK_TOL):
            v = Verdict(AMBIGUOUS, v.baseline, v.contender, v.change, v.noise,
                        f"the contender's SM clock was {clock:+.1%} off the baseline's: the change may be the clock's")
        rows.append(Row(rec.name, v.baseline, v.contender, v.change, v.noise.threshold, v.verdict,
                        t_short < min_time, dropped, v.reason, clock))
    return rows


def _clock_change(pairs, rec, ref_contender=None):
    """Relative change of the median SM clock, contender against the baselines' median of medians;
    pairs: (baseline Record, its run's clock) as unthrottled() takes them."""
    runs = [xs for xs in (unthrottled(b.samples, CLOCK, c) for b, c in pairs) if xs]
    cont = unthrottled(rec.samples, CLOCK, ref_contender)
    if not runs or not cont:
        return math.nan
    base = statistics.median(statistics.median(xs) for xs in runs)
    return statistics.median(cont) / base - 1 if base else math.nan


def _flag(ctx, key):
    v = ctx.get(key)
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v != 0
    if isinstance(v, str) and v.strip().lower() in ("true", "1", "yes", "dirty"):
        return True
    if isinstance(v, str) and v.strip().lower() in ("false", "0", "no", "clean"):
        return False
    return None  # absent or unreadable


def same_code_and_machine(ctx_a, ctx_b):
    """-> (machine, code) for two suite JSON contexts.

    machine: "same GPU" (gpu_uuid equal), "same GPU model" (gpu_name equal), "different GPU", or "unknown"
    (no gpu_name on a side). code: "same code" (git_commit equal and neither dirty), else "same benchmark
    code" (bench_code equal: what gpubench is built from is the same, the commits differ elsewhere or a tree
    is dirty elsewhere), else "different code" (git_commit or suite_version differ), or "unknown" (keys
    absent, as in files older than these keys, or a dirty tree: uncommitted changes may differ)."""
    ua, ub = ctx_a.get("gpu_uuid"), ctx_b.get("gpu_uuid")
    na, nb = ctx_a.get("gpu_name"), ctx_b.get("gpu_name")
    if ua and ub and ua == ub:
        machine = "same GPU"
    elif na and nb:
        machine = "same GPU model" if na == nb else "different GPU"
    else:
        machine = "unknown"
    ca, cb = ctx_a.get("git_commit"), ctx_b.get("git_commit")
    va, vb = ctx_a.get("suite_version"), ctx_b.get("suite_version")
    same_version = not (va and vb and va != vb)
    if ca and cb and ca == cb and same_version and _flag(ctx_a, "git_dirty") is False and _flag(ctx_b, "git_dirty") is False:
        code = "same code"
    elif bench_code(ctx_a) and bench_code(ctx_a) == bench_code(ctx_b):
        code = "same benchmark code"
    elif (ca and cb and ca != cb) or not same_version:
        code = "different code"
    else:
        code = "unknown"
    return machine, code


def bench_code(ctx):
    """The context's bench_code (run_all.sh: a hash of what gpubench is built from), or None where absent or
    "unknown"."""
    v = ctx.get("bench_code")
    return v if isinstance(v, str) and v and v != "unknown" else None


# --- Noise profile: the spread between GPUs of one model -------------------------------------------------

def slug(gpu_name):
    """The results folder name of a GPU model, as run_all.sh makes it: "NVIDIA H200" -> "h200"."""
    s = re.sub(r"^nvidia ", "", gpu_name.lower())
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-")


def profile(runs, metric=TIME, same_code=False):
    """profile_spread()'s sigmas: {name: between-GPU relative sigma}."""
    return profile_spread(runs, metric, same_code)[0]


def profile_spread(runs, metric=TIME, same_code=False):
    """Between-GPU relative sigma of each benchmark's median, from runs (suite_json.Suite) of one GPU model
    on several GPUs, of one commit or several. Within each commit (git_commit; runs without it form one
    group) every GPU gives one median (unthrottled samples, or all of a GPU's samples where every one was
    throttled; runs on the same GPU, equal gpu_uuid, the median of their medians, so that a GPU measured
    twice does not weigh twice), relative to the commit's median of them; the sigma pools these relative
    deviations over the commits (sum of squares over degrees of freedom), so that a code change between
    commits moves no GPU away from another and every GPU measured adds to the estimate. same_code: the runs'
    benchmark code is the same whatever their commits say (commits that changed only scripts or context
    keys): one group. Only runs of the newest code version of a benchmark's family count (code_version()).
    A commit here is the runs' bench_code where they carry one (what gpubench is built from: commits
    that changed only scripts share it), else their git_commit.
    Pooling within commits misses a difference between groups of GPUs when each commit
    ran on one group only (on H200s, the HBM groups of the FLOOR note): prefer one code. -> ({name: sigma},
    {name: range}) for every benchmark measured without error on at least two GPUs of one commit, in the
    first run's order; range: the largest max / min - 1 of the GPUs' medians within a commit, the largest
    change already seen between two healthy GPUs of the model.
    Raises ValueError (one line) for runs of different models, a run without gpu_uuid, or no commit with
    two GPUs."""
    names = {s.context.get("gpu_name") for s in runs}
    if len(names) != 1 or None in names:
        raise ValueError("runs of different GPU models (gpu_name " + ", ".join(sorted(map(repr, names))) + ")"
                         if len(names) > 1 else "a run without gpu_name")
    nouuid = [str(s.path) for s in runs if not s.context.get("gpu_uuid")]
    if nouuid:
        raise ValueError(f"{nouuid[0]}: no gpu_uuid in its context (a run from before that key cannot say "
                         "which GPU it ran on)")
    commits = {}
    for s in runs:
        code = None if same_code else bench_code(s.context) or s.context.get("git_commit")
        commits.setdefault(code, {}).setdefault(s.context["gpu_uuid"], []).append(s)
    if max(len(g) for g in commits.values()) < 2:
        raise ValueError(f"runs from {len({s.context['gpu_uuid'] for s in runs})} GPU (gpu_uuid) per commit at "
                         "most; the spread between GPUs needs at least two GPUs of one commit")
    ref = {id(s): run_clock(s) for s in runs}
    order = list(dict.fromkeys(r.name for s in runs for r in s.records))
    out, spread = {}, {}
    for name in order:
        squares, dof, widest = 0.0, 0, 0.0
        for gpus in _by_code_version(commits, name).values():
            medians = []
            for same_gpu in gpus.values():
                # Unthrottled samples; a GPU throttled throughout (HBM-bound launches at the power cap)
                # still shows by its median under the cap how far apart GPUs are.
                ms = [statistics.median(xs) for xs in (unthrottled(s.by_name[name].samples, metric, ref[id(s)]) or
                                                       list(s.by_name[name].samples.get(metric, ())) for s in same_gpu
                      if name in s.by_name and not s.by_name[name].error and not s.by_name[name].skipped) if xs]
                if ms:
                    medians.append(statistics.median(ms))
            if len(medians) >= 2 and statistics.median(medians) > 0:
                rel = [m / statistics.median(medians) for m in medians]
                mean = statistics.fmean(rel)
                squares += sum((x - mean) ** 2 for x in rel)
                dof += len(rel) - 1
                widest = max(widest, max(medians) / min(medians) - 1)
        if dof:
            out[name] = math.sqrt(squares / dof)
            spread[name] = widest
    return out, spread


def family_of(name):
    """A benchmark's family: its name's first segment ("hierarchy/read/ws:1" -> "hierarchy")."""
    return name.split("/", 1)[0]


def code_version(ctx, name):
    """The code version of a benchmark's family in a run's context: key "<family>_code_version" (e.g.
    hierarchy_code_version), "1" where absent (runs from before a family had one)."""
    return str(ctx.get(family_of(name) + "_code_version", "1"))


def _newest(versions):
    """The newest of some code versions (numeric strings: "10" > "9")."""
    return max(versions, key=lambda v: (len(v), v))


def _by_code_version(commits, name):
    """commits ({commit: {gpu_uuid: [runs]}}) split further by the code version of name's family, keeping
    only the runs of the newest version: runs of older benchmark code say nothing of the current code's
    spread (hierarchy 1 -> 2 narrowed it)."""
    out = {}
    for commit, gpus in commits.items():
        for uuid, same_gpu in gpus.items():
            for s in same_gpu:
                out.setdefault((commit, code_version(s.context, name)), {}).setdefault(uuid, []).append(s)
    newest = _newest(v for _, v in out)
    return {k: g for k, g in out.items() if k[1] == newest}


BOARD = "board_part_number"  # context key (gpubench, from NVML)


def _boards(runs, metric, same_code):
    """{board part number: its sub-profile} for every board with at least two GPUs among runs that record
    one: on H200s the part number's last digit told the two HBM behaviours apart on all 20 GPUs that had it
    (692-2G520-0282-000: stride-64 HBM reads in 205-206 µs; -001: 224-227 µs)."""
    out = {}
    for board in sorted({s.context.get(BOARD) for s in runs} - {None, ""}):
        sub = [s for s in runs if s.context.get(BOARD) == board]
        try:
            sigma, spread = profile_spread(sub, metric, same_code)
        except ValueError:  # fewer than two GPUs of this board (in one commit)
            continue
        out[board] = {"gpus": len({s.context["gpu_uuid"] for s in sub}),
                      "between_gpu_sigma": {n: float(f"{v:.6g}") for n, v in sigma.items()},
                      "between_gpu_range": {n: _round_up(v) for n, v in spread.items()}}
    return out


def profile_for_board(doc, board):
    """A checked profile's sub-profile for one board part number -> ({name: sigma}, {name: range}, GPUs), or
    None when the file has none for it (older profiles, a board seen on fewer than two GPUs); ValueError with
    one line for a malformed one."""
    by_board = doc.get("by_board", {})
    if not isinstance(by_board, dict):
        raise ValueError("not a noise profile: by_board is not an object")
    sub = by_board.get(board) if board else None
    if sub is None:
        return None
    if not isinstance(sub, dict) or not isinstance(sub.get("gpus"), int) or isinstance(sub.get("gpus"), bool):
        raise ValueError(f"not a noise profile: by_board[{board!r}] lacks its GPU count")
    checked = {"gpu_name": "", "metric": "", "runs": [], **sub}
    return profile_sigmas(checked), profile_ranges(checked), sub["gpus"]


def matching(doc, entries, runs):
    """entries ({name: value} from a profile) without the benchmarks whose family's code version in some run
    differs from the one the profile describes (its code_versions; absent in older files: keep all)."""
    versions = doc.get("code_versions")
    if not isinstance(versions, dict):
        return entries
    return {n: v for n, v in entries.items()
            if all(code_version(s.context, n) == str(versions.get(family_of(n), "1")) for s in runs)}


def profile_for_runs(doc, bases, cont):
    """The part of a checked profile that fits a comparison: the sub-profile of their board when every run
    names the same board part number and the file has one for it, else the whole model's.
    -> ({name: sigma}, {name: range}, board or None, GPUs)."""
    runs = list(bases) + [cont]
    boards = {s.context.get(BOARD) for s in runs}
    board = boards.pop() if len(boards) == 1 else None
    sub = profile_for_board(doc, board)
    if sub:
        return matching(doc, sub[0], runs), matching(doc, sub[1], runs), board, sub[2]
    return (matching(doc, profile_sigmas(doc), runs), matching(doc, profile_ranges(doc), runs), None,
            len({r.get("gpu_uuid") for r in doc["runs"]}))


def profile_document(runs, paths, metric=TIME, same_code=False):
    """The noise profile file's content (a dict for JSON) from runs and the paths they were read from."""
    sigma, spread = profile_spread(runs, metric, same_code)
    return {"gpu_name": runs[0].context["gpu_name"], "metric": metric,
            "derived": "by gpubench/regress/noise_profile.py from the measured runs listed: per benchmark, the standard "
                       "deviation of one median per GPU relative to its commit's median of them, pooled over the "
                       "commits (unthrottled samples, or all where every one was throttled; runs on one GPU of "
                       "one commit: the median of their medians)" + ("; every run taken as one code (--same-code)"
                                                                      if same_code else ""),
            "gpus": len({s.context["gpu_uuid"] for s in runs}),
            "runs": [{"path": str(p), "gpu_uuid": s.context["gpu_uuid"], "git_commit": s.context.get("git_commit")}
                     for p, s in zip(paths, runs)],
            "between_gpu_sigma": {n: float(f"{v:.6g}") for n, v in sigma.items()},
            # rounded up, so that the largest change seen stays within it after rounding
            "between_gpu_range": {n: _round_up(v) for n, v in spread.items()},
            # the same per board part number, for compares whose runs are all of one board
            "by_board": _boards(runs, metric, same_code),
            # the newest code version of each family, the one its entries describe (matching())
            "code_versions": {f: _newest(code_version(s.context, f) for s in runs)
                              for f in sorted({family_of(n) for n in sigma})}}


def _round_up(v, digits=4):
    """v rounded up to `digits` significant digits (0 stays 0)."""
    if v <= 0:
        return 0.0
    scale = 10 ** (digits - 1 - math.floor(math.log10(v)))
    return math.ceil(v * scale) / scale


def profile_sigmas(doc):
    """Check a parsed noise profile file -> {name: sigma}; ValueError with one line when it is not one."""
    if not isinstance(doc, dict):
        raise ValueError("not a noise profile (expected a JSON object)")
    for key, kind in (("gpu_name", str), ("metric", str), ("runs", list), ("between_gpu_sigma", dict)):
        if not isinstance(doc.get(key), kind):
            raise ValueError(f"not a noise profile: no {key!r} {kind.__name__}")
    for name, v in doc["between_gpu_sigma"].items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"not a noise profile: between_gpu_sigma of {name} is {v!r}, not a number >= 0")
    return dict(doc["between_gpu_sigma"])


def profile_ranges(doc):
    """A checked noise profile's between_gpu_range -> {name: range}; {} for a file without it (older
    profiles); ValueError with one line for a malformed one."""
    ranges = doc.get("between_gpu_range", {})
    if not isinstance(ranges, dict):
        raise ValueError("not a noise profile: between_gpu_range is not an object")
    for name, v in ranges.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"not a noise profile: between_gpu_range of {name} is {v!r}, not a number >= 0")
    return dict(ranges)


# --- Detection power on recorded runs -----------------------------------------------------------------------

BUCKETS = ((100e-6, 1e-3, "100 µs-1 ms"), (1e-3, 10e-3, "1-10 ms"), (10e-3, math.inf, ">= 10 ms"))
SIZES = (0.02, 0.05, 0.10, 0.20)


def slowed(suite, factors):
    """A copy of suite with every sample of the named benchmarks' time multiplied: {name: factor}."""
    from dataclasses import replace
    recs = [replace(r, samples={**r.samples, TIME: [x * factors[r.name] for x in r.samples[TIME]]})
            if r.name in factors and TIME in r.samples else r for r in suite.records]
    return type(suite)(suite.path, suite.context, recs)


def configurations(runs, mode):
    """(baselines, contender) pairs from runs of the same code: "pairs" is every ordered pair with one
    baseline; "leave-one-out" takes each run as contender against all the others as baselines; a list of
    (baselines, contender) pairs is taken as it is."""
    if isinstance(mode, list):
        return mode
    if mode == "pairs":
        return [([a], b) for a in runs for b in runs if a is not b]
    if mode == "leave-one-out":
        return [([r for r in runs if r is not c], c) for c in runs]
    raise ValueError(f"unknown mode {mode!r}")


def _with_profile(kw, profile_doc, bases, cont):
    """kw for compare_suites, with the part of profile_doc (a checked noise profile file, or None; or a
    function of (bases, cont) giving one, e.g. a profile without the contender's GPU) that fits this
    comparison as compare.py picks it (profile_for_runs)."""
    if callable(profile_doc):
        profile_doc = profile_doc(bases, cont)
    if profile_doc is None:
        return kw
    sigmas, ranges, _, _ = profile_for_runs(profile_doc, bases, cont)
    return dict(kw, profile=sigmas, profile_range=ranges)


def false_alarms(runs, mode, min_time=MIN_TIME, profile_doc=None, **kw):
    """-> list of (contender path, Row) flagged slower or faster between runs of the same code."""
    out = []
    for bases, cont in configurations(runs, mode):
        out += [(cont.path, r) for r in compare_suites(bases, cont, min_time, **_with_profile(kw, profile_doc, bases, cont))
                if r.verdict in (SLOWER, FASTER)]
    return out


def eligible(suite, lo, hi):
    """Names of benchmarks without error whose median time lies in [lo, hi)."""
    return [r.name for r in suite.records if not r.error and TIME in r.samples and lo <= r.median[TIME] < hi]


def detection_rate(runs, mode, size, lo=MIN_TIME, hi=math.inf, planted=20, trials=100, seed=0,
                   min_time=MIN_TIME, profile_doc=None, **kw):
    """Fraction of planted slowdowns (every sample x (1 + size), `planted` random benchmarks with baseline
    median in [lo, hi) per trial) that compare_suites calls "slower". Trials cycle over configurations().
    profile_doc: a noise profile file's content, applied as compare.py applies it (its board's part or all).
    -> (rate, flagged, planted total)."""
    import random
    rng = random.Random(seed)
    configs = configurations(runs, mode)
    hit = total = 0
    for t in range(trials):
        bases, cont = configs[t % len(configs)]
        pool = sorted(set(eligible(bases[0], lo, hi)) & set(cont.by_name))
        names = rng.sample(pool, min(planted, len(pool)))
        rows = {r.name: r for r in compare_suites(bases, slowed(cont, {n: 1 + size for n in names}), min_time,
                                                  **_with_profile(kw, profile_doc, bases, cont))}
        hit += sum(rows[n].verdict == SLOWER for n in names if n in rows)
        total += len(names)
    return (hit / total if total else math.nan), hit, total


def detection_table(runs, mode, sizes=SIZES, buckets=BUCKETS, trials=100, planted=20, seed=0, **kw):
    """Markdown table: detection rate by slowdown size (columns) and launch-time bucket (rows)."""
    head = "| launch time | benchmarks | " + " | ".join(f"+{s:.0%}" for s in sizes) + " |"
    lines = [head, "|" + "---|" * (2 + len(sizes))]
    for lo, hi, label in list(buckets) + [(MIN_TIME, math.inf, "all >= 100 µs")]:
        n = len(eligible(runs[0], lo, hi))
        cells = []
        for s in sizes:
            rate, _, total = detection_rate(runs, mode, s, lo, hi, min(planted, n), trials, seed, **kw)
            cells.append(f"{rate:.1%}" if total else "-")
        lines.append(f"| {label} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def false_alarm_table(runs, modes=("pairs", "leave-one-out"), **kw):
    """Markdown table: between runs of the same code, how many launches >= min_time were called slower or
    faster, over every configuration of each mode, and which."""
    lines = ["| baselines | comparisons | slower | faster | ambiguous | called slower |", "|---|---|---|---|---|---|"]
    for mode in modes:
        rows = [r for b, c in configurations(runs, mode) for r in compare_suites(b, c, **kw) if not r.short]
        count = lambda v: sum(r.verdict == v for r in rows)
        worst = {}
        for r in rows:
            if r.verdict == SLOWER:
                worst[r.name] = max(worst.get(r.name, 0.0), r.change)
        slower = [f"{n} (up to {c:+.1%})" for n, c in sorted(worst.items())]
        label = "one (every ordered pair)" if mode == "pairs" else "the other runs (leave one out)"
        lines.append(f"| {label} | {len(rows)} | {count(SLOWER)} | {count(FASTER)} | {count(AMBIGUOUS)} | "
                     + ", ".join(slower) + " |")
    return "\n".join(lines)
