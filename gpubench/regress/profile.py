"""Noise profiles: per benchmark, how much its median differs between GPUs of one model (the between-GPU
profile, results/<slug>/noise_profile.json, made by noise_profile.py), and reading a profile file back for a
comparison (the part that fits its runs: their board, their code versions)."""
import math
import statistics
from dataclasses import dataclass

from gpubench.regress.identity import BOARD, bench_code, code_version, family_of, _newest
from gpubench.regress.verdict import TIME, run_clock, unthrottled


@dataclass(frozen=True)
class Codes:
    """How runs of several commits pool (the user's word, where bench_code cannot tell): unrecorded, every run
    without a bench_code is of one code whatever its git_commit (--same-code); merged, the bench_codes (or their
    leading digits) that are of one code whatever they say (--one-code: they differ only in comments or host
    code that times nothing differently); ("",) merges every bench_code. A bool stands for Codes(unrecorded=it)."""
    unrecorded: bool = False
    merged: tuple = ()

    def of(self, ctx):
        """The group a run of context ctx pools in."""
        code = bench_code(ctx)
        if not code:
            return None if self.unrecorded else ctx.get("git_commit")
        return "one bench_code" if any(code.startswith(m) for m in self.merged) else code


def _codes(same_code):
    return same_code if isinstance(same_code, Codes) else Codes(unrecorded=bool(same_code))


def _code_note(same_code):
    """The profile's "derived" text for how the runs were grouped by code."""
    c = _codes(same_code)
    merged = ("every run with a bench_code" if "" in c.merged else "the runs of bench_code " + ", ".join(c.merged))
    return (("; every run taken as one code (--same-code)" if c.unrecorded else "")
            + (f"; {merged} taken as one code (--one-code)" if c.merged else ""))


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
    commits moves no GPU away from another and every GPU measured adds to the estimate. same_code: the
    benchmark code of the runs without a bench_code is the same whatever their commits say (commits that
    changed only scripts or context keys): one group; runs with a bench_code still group by it. Only runs of the newest code version of a benchmark's family count (code_version()).
    A commit here is the runs' bench_code where they carry one (what gpubench is built from: commits
    that changed only scripts share it), else their git_commit.
    Pooling within commits misses a difference between groups of GPUs when each commit
    ran on one group only (docs/regression-statistics.md: groups of GPUs): prefer one code. -> ({name: sigma},
    {name: range}) for every benchmark measured without error on at least two GPUs of one commit, in the
    first run's order; range: the largest max / min - 1 of the GPUs' medians within a commit, the largest
    change already seen between two healthy GPUs of the model.
    Raises ValueError (one line) for runs of different models, a run without gpu_uuid, or no commit with
    two GPUs."""
    commits = _by_commit(runs, same_code)
    if max(len(g) for g in commits.values()) < 2:
        raise ValueError(f"runs from {len({s.context['gpu_uuid'] for s in runs})} GPU (gpu_uuid) per commit at "
                         "most; the spread between GPUs needs at least two GPUs of one commit")
    ref = {id(s): run_clock(s) for s in runs}
    out, spread = {}, {}
    for name in dict.fromkeys(r.name for s in runs for r in s.records):
        # one unit per GPU: the runs on it
        groups = [list(gpus.values()) for gpus in _by_code_version(commits, name).values()]
        squares, dof, widest = _pooled(groups, name, metric, ref)
        if dof:
            out[name] = math.sqrt(squares / dof)
            spread[name] = widest
    return out, spread


def _by_commit(runs, same_code):
    """{commit: {gpu_uuid: [runs]}} after checking that the runs are of one model and name their GPU
    (ValueError with one line); a commit is the runs' bench_code, else git_commit; same_code (Codes, or a bool
    for its unrecorded) merges either kind into one group."""
    names = {s.context.get("gpu_name") for s in runs}
    if len(names) != 1 or None in names:
        raise ValueError("runs of different GPU models (gpu_name " + ", ".join(sorted(map(repr, names))) + ")"
                         if len(names) > 1 else "a run without gpu_name")
    nouuid = [str(s.path) for s in runs if not s.context.get("gpu_uuid")]
    if nouuid:
        raise ValueError(f"{nouuid[0]}: no gpu_uuid in its context (a run from before that key cannot say "
                         "which GPU it ran on)")
    commits, codes = {}, _codes(same_code)
    for s in runs:
        # a bench_code is a fact about the runs' code; Codes is the user's word where it says too much or nothing
        commits.setdefault(codes.of(s.context), {}).setdefault(s.context["gpu_uuid"], []).append(s)
    return commits


def _pooled(groups, name, metric, ref):
    """The spread of name's medians within each group, pooled: groups is a list of groups, each a list of
    units, each unit a list of runs that give one median (the median of their medians: one GPU, or one
    process). -> (sum of squared relative deviations from each group's mean, degrees of freedom, the widest
    max / min - 1 in a group)."""
    squares, dof, widest = 0.0, 0, 0.0
    for units in groups:
        medians = []
        for unit in units:
            # Unthrottled samples; a run throttled throughout (HBM-bound launches at the power cap) still
            # shows by its median under the cap how far apart the units are.
            ms = [statistics.median(xs) for xs in (unthrottled(s.by_name[name].samples, metric, ref[id(s)]) or
                                                   list(s.by_name[name].samples.get(metric, ())) for s in unit
                  if name in s.by_name and not s.by_name[name].error and not s.by_name[name].skipped) if xs]
            if ms:
                medians.append(statistics.median(ms))
        if len(medians) >= 2 and statistics.median(medians) > 0:
            rel = [m / statistics.median(medians) for m in medians]
            mean = statistics.fmean(rel)
            squares += sum((x - mean) ** 2 for x in rel)
            dof += len(rel) - 1
            widest = max(widest, max(medians) / min(medians) - 1)
    return squares, dof, widest


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




def _boards(runs, metric, same_code):
    """{board part number: its sub-profile} for every board with at least two GPUs among runs that record
    one: boards of one model can differ in behaviour (docs/regression-statistics.md: board part numbers)."""
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
                       "one commit: the median of their medians)" + _code_note(same_code),
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




# --- Same-GPU profile: the spread between processes on one GPU ----------------------------------------------

SAME_GPU = "same-gpu"  # the "kind" of a same-GPU profile file


def same_gpu_spread(runs, metric=TIME, same_code=False):
    """Per GPU (gpu_uuid) with at least two runs of one commit: the relative sigma and the widest max / min - 1
    of each benchmark's median between its runs (each run one process), pooled over commits as
    profile_spread() pools GPUs; only the newest code version of a family counts.
    -> {gpu_uuid: ({name: sigma}, {name: range}, runs on it)}. ValueError (one line) for runs of different
    models, a run without gpu_uuid, or no GPU with two runs of one commit."""
    commits = _by_commit(runs, same_code)
    if max(len(same_gpu) for gpus in commits.values() for same_gpu in gpus.values()) < 2:
        raise ValueError("no GPU (gpu_uuid) with two runs of one commit; the spread between processes on one GPU "
                         "needs at least two")
    ref = {id(s): run_clock(s) for s in runs}
    names = list(dict.fromkeys(r.name for s in runs for r in s.records))
    out = {}
    for uuid in dict.fromkeys(s.context["gpu_uuid"] for s in runs):
        sigma, spread = {}, {}
        for name in names:
            # one unit per run on this GPU
            groups = [[[s] for s in gpus.get(uuid, [])] for gpus in _by_code_version(commits, name).values()]
            squares, dof, widest = _pooled(groups, name, metric, ref)
            if dof:
                sigma[name], spread[name] = math.sqrt(squares / dof), widest
        if sigma:
            out[uuid] = (sigma, spread, sum(s.context["gpu_uuid"] == uuid for s in runs))
    return out


def same_gpu_document(runs, paths, metric=TIME, same_code=False):
    """The same-GPU profile file's content (a dict for JSON) from runs and the paths they were read from."""
    by_gpu = same_gpu_spread(runs, metric, same_code)
    return {"kind": SAME_GPU, "gpu_name": runs[0].context["gpu_name"], "metric": metric,
            "derived": "by python3 -m gpubench noise_profile --same-gpu from the measured runs listed: per GPU and "
                       "benchmark, the standard deviation of one median per run (process) relative to its "
                       "commit's median of them, pooled over the commits, and the widest max / min - 1 "
                       "(unthrottled samples, or all where every one was throttled)"
                       + _code_note(same_code),
            "runs": [{"path": str(p), "gpu_uuid": s.context["gpu_uuid"], "git_commit": s.context.get("git_commit")}
                     for p, s in zip(paths, runs)],
            "by_gpu": {uuid: {"runs": n, "same_gpu_sigma": {k: float(f"{v:.6g}") for k, v in sigma.items()},
                              "same_gpu_range": {k: _round_up(v) for k, v in spread.items()}}
                       for uuid, (sigma, spread, n) in by_gpu.items()},
            "code_versions": {f: _newest(code_version(s.context, f) for s in runs)
                              for f in sorted({family_of(n) for sigma, _, _ in by_gpu.values() for n in sigma})}}


def is_same_gpu(doc):
    """Whether a parsed profile file is a same-GPU one."""
    return isinstance(doc, dict) and doc.get("kind") == SAME_GPU


def _numbers(entries, where):
    if not isinstance(entries, dict):
        raise ValueError(f"not a same-GPU profile: {where} is not an object")
    for name, v in entries.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"not a same-GPU profile: {where} of {name} is {v!r}, not a number >= 0")


def check_same_gpu(doc):
    """Check a parsed same-GPU profile; ValueError with one line when it is not one."""
    for key, kind in (("gpu_name", str), ("metric", str), ("runs", list), ("by_gpu", dict)):
        if not isinstance(doc.get(key), kind):
            raise ValueError(f"not a same-GPU profile: no {key!r} {kind.__name__}")
    for uuid, entry in doc["by_gpu"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("runs"), int) or isinstance(entry.get("runs"), bool):
            raise ValueError(f"not a same-GPU profile: by_gpu[{uuid!r}] lacks its run count")
        _numbers(entry.get("same_gpu_sigma"), f"by_gpu[{uuid!r}].same_gpu_sigma")
        _numbers(entry.get("same_gpu_range"), f"by_gpu[{uuid!r}].same_gpu_range")


def same_gpu_for_runs(doc, bases, cont):
    """The part of a checked same-GPU profile that fits a comparison: the entry of the GPU when every run is
    on it, without entries of another code version (matching()). -> ({name: sigma}, {name: range}, runs), or
    None when the runs are not all on one GPU the file has."""
    uuids = {s.context.get("gpu_uuid") for s in list(bases) + [cont]}
    entry = doc["by_gpu"].get(uuids.pop()) if len(uuids) == 1 else None
    if entry is None:
        return None
    runs = list(bases) + [cont]
    return matching(doc, entry["same_gpu_sigma"], runs), matching(doc, entry["same_gpu_range"], runs), entry["runs"]


# --- The process term across GPUs: a same-GPU profile's spread added to the between-GPU one ----------------------

def process_spread(doc, runs):
    """A checked same-GPU profile's spread between processes, for comparisons on any GPU of its model: per
    benchmark the largest sigma and range over its GPUs, without entries of another code version (matching()).
    -> ({name: sigma}, {name: range})."""
    sigmas, ranges = {}, {}
    for entry in doc["by_gpu"].values():
        for name, v in matching(doc, entry["same_gpu_sigma"], runs).items():
            sigmas[name] = max(sigmas.get(name, 0.0), v)
        for name, v in matching(doc, entry["same_gpu_range"], runs).items():
            ranges[name] = max(ranges.get(name, 0.0), v)
    return sigmas, ranges


def with_process(sigmas, ranges, proc_sigmas, proc_ranges, host_bound=None):
    """The between-GPU profile's part (sigmas, ranges) with the current code's spread between processes added:
    between GPUs = between processes + between boards, and a between-GPU profile made from runs of older code
    carries the older code's process term, which may be smaller than today's (docs/regression-tracking.md,
    "Across GPUs"). Where both have a benchmark, sigma and range are their root-sum-square (variances add; the
    old process term counted twice at most, so it errs wide). Where only one has it, what is there. A benchmark
    host_bound names (a predicate) takes the process term only where the between-GPU profile has it, and is
    never among the names both measured: one host's spread says nothing of another host's.
    -> ({name: sigma}, {name: range}, the names both measured: compare's --measured-floor applies to them)."""
    both = {n for n in set(sigmas) & set(proc_sigmas) & set(ranges) & set(proc_ranges)
            if not (host_bound and host_bound(n))}
    rss = lambda a, b: math.sqrt(a * a + b * b)
    own = lambda entries, n: n in entries or not (host_bound and host_bound(n))
    out_s = {**{n: v for n, v in proc_sigmas.items() if own(sigmas, n)}, **sigmas}
    out_r = {**{n: v for n, v in proc_ranges.items() if own(ranges, n)}, **ranges}
    for n in set(sigmas) & set(proc_sigmas):
        out_s[n] = rss(sigmas[n], proc_sigmas[n])
    for n in set(ranges) & set(proc_ranges):
        out_r[n] = rss(ranges[n], proc_ranges[n])
    return out_s, out_r, both


# --- The placement term across GPUs: where a one-SM chase runs ---------------------------------------------------

# The L2 latency of every SM, measured in the same run: its range is how far a one-block chase can move when the
# block lands on another SM, and on another GPU it does (docs/regression-tracking.md, "The chasing SM").
SM_SPREAD = "latency/sm_spread/ws:524288/stride:128"
CHASE_PREFIX = "latency/chase/ws:"


@dataclass(frozen=True)
class Placement:
    """Where one run's one-SM latency benchmark stands: per_cycle, the share of its cycles past L1 over its
    cycles (a cycle of SM-to-L2 distance moves it by per_cycle); spread, the run's per-SM L2 range (max - min,
    cycles); offset, its chasing SM's L2 latency minus the run's median SM (cycles; None when the run does not
    say which SM: no `smid` counter, SMs that differ between repetitions, or no per-SM counter for it)."""
    per_cycle: float
    spread: float
    offset: float = None


def chase_offset(rec, spread):
    """Cycles by which the SM rec's chase ran on (its smid counter, the same in every repetition) is slower than
    the median SM of the run's SM_SPREAD record, or None (Placement.offset)."""
    sms = set(rec.samples.get("smid", []))
    if len(sms) != 1:
        return None
    own = spread.get(f"sm{int(sms.pop())}_cycles")
    return None if math.isnan(own) else own - spread.get("cycles_median")


def sm_placement(suite):
    """{name: Placement} of the one-SM latency benchmarks of a run (every latency/* with cycles_per_load but the
    host chase): the share of a benchmark's cycles past L1 is (c - L1) / (L2 median - L1), clamped to [0, 1]
    (L1: the chase's smallest working set); an L1 hit never leaves the SM, a load that misses L1 crosses the same
    SM-to-L2 distance whether L2 or HBM serves it. {} for a run without SM_SPREAD."""
    spread = suite.by_name.get(SM_SPREAD)
    chases = [r.get("cycles_per_load") for r in suite.records if r.name.startswith(CHASE_PREFIX) and not r.error]
    chases = [c for c in chases if c > 0]
    if spread is None or spread.error or not chases:
        return {}
    lo, hi, l2 = spread.get("cycles_min"), spread.get("cycles_max"), spread.get("cycles_median")
    l1 = min(chases)
    if not (hi >= lo > 0 and l2 > l1):
        return {}
    out = {}
    for r in suite.records:
        c = r.get("cycles_per_load")
        if r.name.startswith("latency/") and not r.name.startswith("latency/link/") and not r.error and c > 0:
            share = min(1.0, max(0.0, (c - l1) / (l2 - l1)))
            out[r.name] = Placement(share / c, hi - lo, chase_offset(r, spread))
    return out


def sms_named(places):
    """Whether every run (its Placement) says which SM the benchmark's chase ran on."""
    return all(p.offset is not None for p in places)


def placement_term(places):
    """The relative move of one benchmark between runs (its Placement in each): where every run says its chasing
    SM (sms_named), the widest difference of their offsets; else the largest of the runs' per-SM spreads (the SMs
    are unknown: any two)."""
    if not sms_named(places):
        return max(p.per_cycle * p.spread for p in places)
    offsets = [p.offset for p in places]
    return max(p.per_cycle for p in places) * (max(offsets) - min(offsets))


def with_placement(ranges, runs, unnamed=True):
    """ranges with the SM placement term of the runs (placement_term over the runs that measured the benchmark)
    added by root-sum-square (the profile's range already holds its own GPUs' placements: this errs wide). Only
    for runs on different GPUs: one GPU places a chase alike from process to process, which its process spread
    shows; unnamed=False leaves out the benchmarks of which a run does not say its chasing SM. -> ({name: range},
    the names the term raised, the names whose term came from the chasing SMs)."""
    places = {}
    for s in runs:
        for name, p in sm_placement(s).items():
            places.setdefault(name, []).append(p)
    term = {name: placement_term(ps) for name, ps in places.items() if unnamed or sms_named(ps)}
    out = dict(ranges)
    for name, v in term.items():
        out[name] = math.sqrt(out.get(name, 0.0) ** 2 + v * v)
    raised = {n for n, v in term.items() if v > 0}
    return out, raised, {n for n in raised if sms_named(places[n])}
