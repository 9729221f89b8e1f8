#!/usr/bin/env python3
"""Compare two suite runs benchmark by benchmark: median of each side, relative change, and the p-value of a
two-sided Mann-Whitney U test on the repetition samples (as Google Benchmark's tools/compare.py does).

A benchmark regressed when it got worse by more than --min-change AND p < --alpha. With too few repetitions
for the test ever to reach p < alpha, the change alone decides and the row is marked '*'.
Launches shorter than --min-time (per-launch median in the baseline) are compared but never flagged: they
are launch- and placement-bound, and between two runs of the same code on an H200 they moved by up to 25 %
while repetitions inside one run agreed to 1 % (README "Regression tracking").
Benchmark names from before the barrier rename (syncthreads/..., now sync/syncthreads/...) are read under the
new names, so old baselines still compare.

Exit status: 0 nothing regressed and nothing missing; 1 something regressed; 2 unusable input (a file that
is not suite JSON, a NaN or non-positive time, a metric no benchmark has); 3 nothing regressed but
benchmarks of the baseline are missing from the contender (--allow-missing: 0).
"""
import argparse
import math
import sys

from scipy.stats import mannwhitneyu

import suite_json
import tables

PROG = "compare"
EXIT_REGRESSED, EXIT_UNUSABLE, EXIT_MISSING = 1, 2, 3


def can_test(n1, n2, alpha):
    """The exact two-sided U test's smallest p-value is 2 / C(n1+n2, n1): 0.33 for 2 vs 2, 0.1 for 3 vs 3,
    0.008 for 5 vs 5. When even that is not below alpha, the test can never flag anything."""
    return min(n1, n2) >= 2 and 2 / math.comb(n1 + n2, n1) < alpha


def p_value(a, b):
    p = mannwhitneyu(a, b, alternative="two-sided").pvalue
    return 1.0 if math.isnan(p) else float(p)  # all samples tied: older scipy says nan, meaning no difference


def show(v, metric):
    return tables.seconds(v) if metric == suite_json.TIME else tables.sig(v, 4)


def higher_is_better(metric):
    return metric.endswith("_per_second")  # rates; time, cycles, errors: lower is better


def compare(base, cont, metric, min_change, alpha, min_time=0.0):
    """-> (rows, regressed, improved, untested names). Rows: [name, baseline, contender, change, p, verdict]."""
    rows, regressed, improved, untested = [], [], [], []
    for name, b in base.by_name.items():
        c = cont.by_name.get(name)
        if c is None or b.error or c.error or b.skipped or c.skipped or metric not in b.samples or metric not in c.samples:
            continue
        xb, xc = b.samples[metric], c.samples[metric]
        mb, mc = b.median[metric], c.median[metric]
        change = (mc - mb) / mb if mb else math.inf
        worse = -change if higher_is_better(metric) else change
        tested = can_test(len(xb), len(xc), alpha)
        p = p_value(xb, xc) if tested else None
        significant = p < alpha if tested else True
        verdict = ""
        if b.median.get(suite_json.TIME, math.inf) < min_time:
            verdict = "(short)" if abs(worse) > min_change and significant else ""
        elif worse > min_change and significant:
            verdict = "REGRESSED"
            regressed.append(name)
        elif -worse > min_change and significant:
            verdict = "improved"
            improved.append(name)
        if not tested:
            untested.append(name)
        rows.append([name, show(mb, metric), show(mc, metric), f"{change:+.1%}",
                     f"{p:.4f}" if tested else f"n/a* ({len(xb)} vs {len(xc)})", verdict])
    return rows, regressed, improved, untested


def listing(title, names):
    return [f"{title} ({len(names)}):"] + [f"  {n}" for n in names] if names else [f"{title}: none"]


def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("baseline")
    p.add_argument("contender")
    p.add_argument("--min-change", type=float, default=0.05, help="relative change that counts (default 0.05)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the U test (default 0.05)")
    p.add_argument("--min-time", type=float, default=100e-6,
                   help="seconds per launch below which a change is shown but not flagged (default 1e-4)")
    p.add_argument("--metric", default="time",
                   help="'time' (real_time per launch, the default) or a counter name; counters ending in "
                        "_per_second are higher-is-better, all others lower-is-better")
    p.add_argument("--allow-missing", action="store_true",
                   help="benchmarks of the baseline missing from the contender do not fail (exit 0, not 3)")
    args = p.parse_args(argv)
    base = suite_json.load_or_exit(args.baseline, PROG)
    cont = suite_json.load_or_exit(args.contender, PROG)
    metric = suite_json.TIME if args.metric == "time" else args.metric
    for side, suite in (("baseline", base), ("contender", cont)):
        if suite.ok() and not any(metric in r.samples for r in suite.ok()):
            known = sorted({k for r in suite.ok() for k in r.samples} - {suite_json.TIME})
            print(f"{PROG}: error: --metric {args.metric!r}: no benchmark in the {side} {suite.path} has it "
                  f"(use 'time' or one of: {', '.join(known)})", file=sys.stderr)
            return EXIT_UNUSABLE

    out = [f"baseline:  {args.baseline} ({base.gpu_name})", f"contender: {args.contender} ({cont.gpu_name})"]
    if base.gpu_name != cont.gpu_name:
        warning = (f"WARNING: different GPUs (baseline {base.gpu_name!r}, contender {cont.gpu_name!r}): "
                   "changes may come from the hardware, not the code")
        print(f"{PROG}: {warning}", file=sys.stderr)
        out.append(warning)
    rows, regressed, improved, untested = compare(base, cont, metric, args.min_change, args.alpha, args.min_time)
    direction = "higher" if higher_is_better(metric) else "lower"
    out += [f"metric: {args.metric} ({direction} is better); regressed = worse by more than {args.min_change:.1%} and p < {args.alpha} "
            "(two-sided Mann-Whitney U on the repetitions)", ""]
    out += tables.text(["benchmark", "baseline", "contender", "change", "p-value", "verdict"], rows)
    if any(r[-1] == "(short)" for r in rows):
        out.append(f"(short): changed by more than {args.min_change:.1%}, but launches under {args.min_time * 1e6:g} µs "
                   "are not flagged (--min-time)")
    if untested:
        out.append(f"* {len(untested)} benchmark(s) with too few repetitions for the U test to reach "
                   f"p < {args.alpha}: judged on the change alone (use --benchmark_repetitions=9 or more)")
    errored = sorted({r.name for s in (base, cont) for r in s.records if r.error})
    skipped = sorted({f"{r.name}: {r.skipped}" for s in (base, cont) for r in s.records if r.skipped})
    missing = [n for n in base.by_name if n not in cont.by_name]
    out += [""] + listing("Regressions", regressed) + listing("Improvements", improved)
    out += listing("Missing from contender", missing)
    out += listing("New in contender", [n for n in cont.by_name if n not in base.by_name])
    out += listing("Errored, not compared", errored)
    out += listing("Skipped, not compared", skipped)
    print("\n".join(out))
    if regressed:
        return EXIT_REGRESSED
    if missing and not args.allow_missing:
        print(f"{PROG}: {len(missing)} benchmark(s) of the baseline missing from the contender "
              "(exit 3; --allow-missing accepts that)", file=sys.stderr)
        return EXIT_MISSING
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
