#!/usr/bin/env python3
"""Write a noise profile: per benchmark, how much its median differs between GPUs of one model, from full
runs of the same code on several GPUs (different gpu_uuid).

  noise_profile.py RUN.json|FOLDER ... -o results/h200/noise_profile.json

A folder stands for every benchmarks.json below it. The sigma of a benchmark is the relative spread of one
median per GPU (plots/noise.py: profile(), between_noise: range / d2(n) / median, unthrottled samples or,
where a GPU throttled in every one, all of them);
runs on the same GPU count as one GPU, with the median of their medians. compare.py reads the profile when
a baseline ran on another GPU of the contender's model: repetitions on one GPU cannot sample how GPUs of a
model differ (up to 5-13 % on some H200 benchmarks), the profile can. Every run must be of one GPU model
(gpu_name) and carry gpu_uuid; at least two GPUs.

Exit status: 0 written; 2 unusable input (not suite JSON, runs of different models, too few GPUs, an output
that is an input, a committed file without --force).
"""
import argparse
import json
import sys

import noise
import suite_json
from compare import InputError, expand

PROG = "noise_profile"


def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", metavar="RUN.json|FOLDER", help="full runs of one GPU model on several GPUs")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the profile to write (JSON)")
    p.add_argument("--force", action="store_true", help="overwrite a file git tracks (the committed profile)")
    args = p.parse_args(argv)
    try:
        paths = list(dict.fromkeys(q for a in args.runs for q in expand(a, last=False)))
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    suite_json.check_output(args.output, paths, PROG, args.force)
    runs = [suite_json.load_or_exit(q, PROG) for q in paths]
    try:
        doc = noise.profile_document(runs, paths)
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    top = sorted(doc["between_gpu_sigma"].items(), key=lambda kv: -kv[1])[:5]
    print(f"{args.output}: between-GPU sigma of {len(doc['between_gpu_sigma'])} benchmarks from {doc['gpus']} GPUs "
          f"({len(runs)} runs); largest: " + ", ".join(f"{n} {v:.1%}" for n, v in top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
