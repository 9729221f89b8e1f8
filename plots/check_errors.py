#!/usr/bin/env python3
"""Exit 1 (listing them) when any benchmark in a suite JSON reported an error, such as a failed
verification; run_all.sh publishes no run that has one. Skipped benchmarks (a configuration this GPU
cannot run) are not errors: they are listed with their reasons on stdout and do not change the status.

Exit status: 0 no errors, 1 errors (listed on stderr), 2 a file that is not usable suite JSON.
"""
import argparse
import sys

import suite_json

PROG = "check_errors"


def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", help="benchmarks.json written by gpubench --benchmark_out")
    args = p.parse_args(argv)
    suite = suite_json.load_or_exit(args.json, PROG)
    for r in suite.skips():
        print(f"{PROG}: skipped {r.name}: {r.skipped}")
    for r in suite.errors():
        print(f"{PROG}: {r.name}: {r.error}", file=sys.stderr)
    return 1 if suite.errors() else 0


if __name__ == "__main__":
    sys.exit(main())
