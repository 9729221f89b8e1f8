"""Detection power and false alarms of the verdicts on recorded runs: plant slowdowns in a copy of a run and
count what compare_suites calls, and count what it calls between runs of the same code. Used by the tests
and for the tables in docs/regression-statistics.md; compare.py does not need it."""
import math
import statistics

from gpubench import suite_json

from gpubench.regress.profile import process_spread, profile_for_runs, with_process
from gpubench.regress.verdict import (AMBIGUOUS, FASTER, MIN_TIME, SLOWER, TIME, _compare_records, compare_suites,
                                      run_clock)

BUCKETS = ((100e-6, 1e-3, "100 µs-1 ms"), (1e-3, 10e-3, "1-10 ms"), (10e-3, math.inf, ">= 10 ms"))
SIZES = (0.02, 0.05, 0.10, 0.20)


def slowed(suite, factors, metric=TIME):
    """A copy of suite with every sample of the named benchmarks' metric multiplied: {name: factor}."""
    from dataclasses import replace
    recs = [replace(r, samples={**r.samples, metric: [x * factors[r.name] for x in r.samples[metric]]})
            if r.name in factors and metric in r.samples else r for r in suite.records]
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


def _with_profile(kw, profile_doc, bases, cont, process=None):
    """kw for compare_suites, with the part of profile_doc (a checked noise profile file, or None; or a
    function of (bases, cont) giving one, e.g. a profile without the contender's GPU) that fits this
    comparison as compare.py picks it (profile_for_runs); process: (a checked same-GPU profile, the measured
    floor), whose spread between processes joins it as compare adds it (profile.with_process)."""
    if callable(profile_doc):
        profile_doc = profile_doc(bases, cont)
    if profile_doc is None:
        return kw
    sigmas, ranges, _, _ = profile_for_runs(profile_doc, bases, cont)
    if process is not None:
        doc, floor = process
        sigmas, ranges, both = with_process(sigmas, ranges, *process_spread(doc, list(bases) + [cont]),
                                            kw.get("host_bound"))
        kw = dict(kw, unfloored={n: floor for n in both})
    return dict(kw, profile=sigmas, profile_range=ranges)


def false_alarms(runs, mode, min_time=MIN_TIME, profile_doc=None, process=None, **kw):
    """-> list of (contender path, Row) flagged slower or faster between runs of the same code; process as
    _with_profile takes it."""
    out = []
    for bases, cont in configurations(runs, mode):
        out += [(cont.path, r) for r in compare_suites(bases, cont, min_time,
                                                       **_with_profile(kw, profile_doc, bases, cont, process))
                if r.verdict in (SLOWER, FASTER)]
    return out


def eligible(suite, lo, hi):
    """Names of benchmarks without error whose median time lies in [lo, hi)."""
    return [r.name for r in suite.records if not r.error and TIME in r.samples and lo <= r.median[TIME] < hi]


def detection_rate(runs, mode, size, lo=MIN_TIME, hi=math.inf, planted=20, trials=100, seed=0,
                   min_time=MIN_TIME, profile_doc=None, process=None, **kw):
    """Fraction of planted slowdowns (every sample x (1 + size), `planted` random benchmarks with baseline
    median in [lo, hi) per trial) that compare_suites calls "slower". Trials cycle over configurations().
    profile_doc: a noise profile file's content, applied as compare.py applies it (its board's part or all);
    process: (a same-GPU profile, the measured floor), its spread between processes added (_with_profile).
    -> (rate, flagged, planted total)."""
    import random
    rng = random.Random(seed)
    configs = configurations(runs, mode)
    clocks = {}  # run_clock of each run, once: a planted copy keeps its run's clock (slowed() changes times only)
    hit = total = 0
    for t in range(trials):
        bases, cont = configs[t % len(configs)]
        pool = sorted(set(eligible(bases[0], lo, hi)) & set(cont.by_name))
        names = rng.sample(pool, min(planted, len(pool)))
        slow = slowed(cont, {n: 1 + size for n in names})
        for s in list(bases) + [cont]:
            if id(s) not in clocks:
                clocks[id(s)] = run_clock(s)
        ref = {**{id(s): clocks[id(s)] for s in bases}, id(slow): clocks[id(cont)]}
        # what compare_suites calls the planted benchmarks; the others' rows are not looked at
        rows = {r.name: r for r in _compare_records(bases, slow, [slow.by_name[n] for n in names], ref, min_time,
                                                    **_with_profile(kw, profile_doc, bases, cont, process))}
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


# --- The detection tool (python3 -m gpubench detection): what compare can see between runs of one code ----------

PROG = "detection"
PLANT = 0.03          # the planted change: times x 1.03, rates / 1.03
MAX_THRESHOLD = 0.02  # the detection rate is over the benchmarks whose threshold is at most this


def worse(suite, size, metric=TIME):
    """A copy of suite with every benchmark made worse by `size` in every sample of metric: times (and any
    lower-is-better counter) x (1 + size), rates (*_per_second) / (1 + size)."""
    f = 1 / (1 + size) if metric.endswith("_per_second") else 1 + size
    return slowed(suite, {r.name: f for r in suite.records}, metric)


PAIRS = ("all", "cross-gpu", "same-gpu")


def _kept(config, which):
    """Whether a (baselines, contender) pair is of the kind asked (PAIRS)."""
    from gpubench.regress.compare import on_another_gpu
    same = not on_another_gpu(*config)
    return which == "all" or same == (which == "same-gpu")


def figures(runs, args, metric=TIME, size=PLANT, max_threshold=MAX_THRESHOLD, mode="pairs"):
    """Every ordered pair of runs (one baseline, one contender; mode: configurations()'s, e.g. a list of
    (baselines, contender) for several baselines) judged as compare judges it (compare.judge, the profile
    compare.choose_profile picks with args), then again with every benchmark of the contender made worse by
    `size`. Counted over launches of at least args.min_time on both sides. -> dict (the JSON output)."""
    from gpubench.regress import compare, compare_output
    pairs, lines = [c for c in configurations(runs, mode) if _kept(c, getattr(args, "pairs", "all"))], set()
    thresholds, floored, flagged, failing, caught, low, caught_all = [], 0, 0, 0, 0, 0, 0
    families = {}  # flagged, by family
    for bases, cont in pairs:
        chosen = compare.choose_profile(args, bases, cont, metric)
        lines.add(chosen.line)
        rows = [r for r in compare.judge(args, bases, cont, metric, chosen) if not r.short]
        planted = {r.name: r for r in compare.judge(args, bases, worse(cont, size, metric), metric, chosen)}
        flags = [r for r in rows if r.verdict in (SLOWER, FASTER)]
        flagged += len(flags)
        for r in flags:
            families[r.name.split("/")[0]] = families.get(r.name.split("/")[0], 0) + 1
        failing += any(r.verdict == SLOWER for r in flags)
        thresholds += [r.threshold for r in rows]
        floored += sum(r.threshold_from == "floor" for r in rows)
        hits = [planted[r.name].verdict == SLOWER for r in rows if r.name in planted]
        caught_all += sum(hits)
        small = [planted[r.name].verdict == SLOWER for r in rows if r.threshold <= max_threshold and r.name in planted]
        low += len(small)
        caught += sum(small)
    n = len(thresholds)
    if not pairs:
        raise compare.InputError(f"no pair of the runs is {args.pairs}")
    return {"runs": [str(s.path) for s in runs], "pairs": len(pairs), "metric": metric, "profile": sorted(lines),
            "min_time": args.min_time, "judged_per_pair": n / len(pairs) if pairs else 0,
            "false_alarms": {"flagged": flagged, "pairs_exit_1": failing, "by_family": dict(sorted(families.items()))},
            "threshold": {"median": statistics.median(thresholds) if n else None, "p90": compare_output.percentile(thresholds, 0.9) if n else None,
                          "max": max(thresholds) if n else None, "floor": floored},
            "planted": {"size": size, "max_threshold": max_threshold, "benchmarks": low, "caught": caught,
                        "rate": caught / low if low else None, "all": n, "caught_all": caught_all,
                        "rate_all": caught_all / n if n else None}}


def render(doc):
    """The text output of figures()."""
    pct = lambda v: "n/a" if v is None else f"{v:.2%}"
    t, p, fa = doc["threshold"], doc["planted"], doc["false_alarms"]
    return "\n".join([
        f"detection: {len(doc['runs'])} runs, {doc['pairs']} ordered pairs (one baseline, one contender), "
        f"launches >= {doc['min_time'] * 1e6:g} µs on both sides: {doc['judged_per_pair']:g} per pair",
        *[f"  {line}" for profile_line in doc["profile"] for line in profile_line.splitlines()],
        f"false alarms (the runs as they are): {fa['flagged']} slower or faster; pairs that would exit 1: {fa['pairs_exit_1']}"
        + ("" if not fa.get("by_family") else " (" + ", ".join(f"{k} {v}" for k, v in fa["by_family"].items()) + ")"),
        f"threshold (the smallest change called): median {pct(t['median'])}, p90 {pct(t['p90'])}, max {pct(t['max'])}; "
        f"set by the floor (no measurement of the benchmark): {t['floor']}",
        f"planted {p['size']:+.1%} in every benchmark of the contender: caught (slower) {pct(p['rate'])} "
        f"({p['caught']} of {p['benchmarks']}) where the threshold is <= {p['max_threshold']:.1%}; "
        f"{pct(p['rate_all'])} ({p['caught_all']} of {p['all']}) of all"])


def parser():
    """The command line of the detection tool (also for callers of figures() that build its args)."""
    import argparse
    from gpubench.regress import compare
    p = argparse.ArgumentParser(prog=PROG, description=
        "What compare can see between runs of one code: over every ordered pair of RUNs (one baseline, one "
        "contender), judged as compare judges them (the same profile rules, --profile, --no-profile), the "
        "false alarms, the threshold's distribution over launches >= --min-time, and how often a change of "
        "--size planted in every benchmark of the contender (times x (1 + size), rates / (1 + size)) is "
        "called slower where the threshold is <= --max-threshold. docs/regression-tracking.md, 'Detection'.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="runs of one code (files, or folders of runs), at least two")
    p.add_argument("--size", type=compare.non_negative, default=PLANT, help=f"planted change (default {PLANT:g})")
    p.add_argument("--max-threshold", type=compare.non_negative, default=MAX_THRESHOLD,
                   help=f"the rate is over benchmarks whose threshold is at most this (default {MAX_THRESHOLD:g})")
    p.add_argument("--min-time", type=compare.non_negative, default=MIN_TIME, help=f"as compare's (default {MIN_TIME:g})")
    p.add_argument("--floor", type=compare.non_negative, default=compare.noise.FLOOR, help="as compare's")
    p.add_argument("--k", type=compare.non_negative, default=compare.noise.K_SIGMA, help="as compare's")
    prof = p.add_mutually_exclusive_group()
    prof.add_argument("--profile", metavar="FILE", help="as compare's --profile")
    prof.add_argument("--no-profile", action="store_true", help="as compare's --no-profile")
    compare.add_process_options(p)
    p.add_argument("--pairs", choices=PAIRS, default="all",
                   help="which ordered pairs: all (default), cross-gpu (baseline and contender on different GPUs, "
                        "gpu_uuid) or same-gpu")
    p.add_argument("--format", choices=("text", "json"), default="text")
    return p


@suite_json.cli(PROG)
def main(argv=None):
    import json
    import sys
    from gpubench.regress import compare
    args = parser().parse_args(argv)
    try:
        paths = [f for a in args.runs for f in compare.expand(a, last=False)]
        if len(set(map(str, paths))) < 2:
            raise compare.InputError("give at least two runs")
    except compare.InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return compare.EXIT_UNUSABLE
    runs = [suite_json.load_or_exit(f, PROG) for f in paths]
    try:
        doc = figures(runs, args, size=args.size, max_threshold=args.max_threshold)
    except compare.InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return compare.EXIT_UNUSABLE
    print(json.dumps(doc, indent=1) if args.format == "json" else render(doc))
    return 0
