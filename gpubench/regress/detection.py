"""Detection power and false alarms of the verdicts on recorded runs: plant slowdowns in a copy of a run and
count what compare_suites calls, and count what it calls between runs of the same code. Used by the tests
and for the tables in docs/regression-statistics.md; compare.py does not need it."""
import math

from gpubench.regress.profile import profile_for_runs
from gpubench.regress.verdict import (AMBIGUOUS, FASTER, MIN_TIME, SLOWER, TIME, _compare_records, compare_suites,
                                      run_clock)

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
