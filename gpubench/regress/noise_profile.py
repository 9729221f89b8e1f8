#!/usr/bin/env python3
"""Write a noise profile: per benchmark, how much its median differs between GPUs of one model, from full
runs of the same code on several GPUs (different gpu_uuid).

  noise_profile.py RUN.json|FOLDER ... -o results/h200/noise_profile.json [--same-code] [--one-code [CODE,...]] [--force]
  noise_profile.py --same-gpu RUN.json|FOLDER ... -o same_gpu_profile.json [--same-code] [--one-code [CODE,...]]

--same-gpu writes a same-GPU profile instead: per GPU (gpu_uuid) with several runs of one code, each
benchmark's spread between those runs (processes), for a CI machine's own comparisons on its GPU. compare
applies it (--profile FILE, or a same_gpu_profile.json in a baseline's folder or the folder above it) when
every run is on that GPU: the threshold is then max(k x noise, the same-GPU spread), with the floor only for
benchmarks it lacks. Build it from at least three runs per GPU, better five or more: a spread from two
runs is a guess.

A folder stands for every benchmarks.json below it (symbolic links followed; a run marked FAILED by run_all.sh
is refused, exit 2). The sigma of a benchmark is the relative standard
deviation of one median per GPU (gpubench/regress/profile.py: profile_spread(); unthrottled samples or, where a GPU throttled in
every one, all of them), within each commit (bench_code, or git_commit for runs without it) and pooled over
the commits; --same-code takes every run without a bench_code as one code (say it when their commits differ
only in scripts or context keys); runs that carry a bench_code pool by it, or with --one-code as one code
(all of them, or those of the bench_codes named, by their leading digits: say it when those differ only in
comments or in host code that times nothing differently); the runs without a bench_code never join them. Runs on the same
GPU of one commit count as one GPU, with the median of their medians. compare.py reads the profile when
a baseline is of the contender's model: the repetitions of one process cannot sample how processes and GPUs
of a model differ (docs/regression-statistics.md), the profile can. Every run must be of one GPU model
(gpu_name) and carry gpu_uuid; at least two GPUs of one commit.

Exit status: 0 written; 2 unusable input (not suite JSON, runs of different models, too few GPUs, or with
--same-gpu no GPU with two runs of one code, an output that is an input, a committed file or one in a
committed run's folder without --force, an output that cannot be written); 70 a bug (a traceback); a
closed stdout pipe ends it quietly (SIGPIPE, 141 in the shell).
"""
import argparse
import json
import sys

from gpubench.regress import profile
from gpubench import suite_json
from gpubench.regress.compare import InputError, expand
from gpubench.regress.identity import bench_code

PROG = "noise_profile"


@suite_json.cli(PROG)
def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", metavar="RUN.json|FOLDER", help="full runs of one GPU model on several GPUs")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the profile to write (JSON)")
    p.add_argument("--force", action="store_true", help="overwrite a file git tracks (the committed profile)")
    p.add_argument("--same-gpu", action="store_true",
                   help="write a same-GPU profile: the spread between runs (processes) on each GPU")
    p.add_argument("--same-code", action="store_true",
                   help="the benchmark code of the runs without a bench_code is the same whatever their git_commit: "
                        "pool them as one group (runs with a bench_code still pool by it)")
    p.add_argument("--one-code", nargs="?", const="", metavar="CODE,...",
                   help="these bench_codes (their leading digits; none named: every one) are of one benchmark code "
                        "whatever they say (commits that changed comments or host code that times nothing "
                        "differently): pool their runs as one group")
    args = p.parse_args(argv)
    try:
        paths = list(dict.fromkeys(q for a in args.runs for q in expand(a, last=False)))
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    suite_json.check_output(args.output, paths, PROG, args.force)
    runs = [suite_json.load_or_exit(q, PROG) for q in paths]
    codes = profile.Codes(args.same_code, _merged(args.one_code))
    seen = {bench_code(s.context) for s in runs} - {None, ""}
    unmatched = [m for m in codes.merged if m and not any(c.startswith(m) for c in seen)]
    if unmatched:
        print(f"{PROG}: error: --one-code {unmatched[0]}: no run has a bench_code that starts with it", file=sys.stderr)
        return 2
    try:
        make = profile.same_gpu_document if args.same_gpu else profile.profile_document
        doc = make(runs, paths, same_code=codes)
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    suite_json.write_text(args.output, json.dumps(doc, indent=1) + "\n", PROG)
    if args.same_gpu:
        print(f"{args.output}: same-GPU spread of " + ", ".join(
            f"{len(e['same_gpu_sigma'])} benchmarks from {e['runs']} runs on {uuid}" for uuid, e in doc["by_gpu"].items()))
        return 0
    top = sorted(doc["between_gpu_sigma"].items(), key=lambda kv: -kv[1])[:5]
    print(f"{args.output}: between-GPU sigma of {len(doc['between_gpu_sigma'])} benchmarks from {doc['gpus']} GPUs "
          f"({len(runs)} runs); largest: " + ", ".join(f"{n} {v:.1%}" for n, v in top))
    return 0


def _merged(text):
    """--one-code's value -> Codes.merged: () when absent, ("",) for every bench_code."""
    return () if text is None else tuple(c.strip() for c in text.split(",")) if text else ("",)


if __name__ == "__main__":
    raise SystemExit(main())
