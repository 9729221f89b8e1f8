#!/usr/bin/env python3
"""Exit 1 (listing them) when any benchmark in a suite JSON reported an error, such as a failed
verification; run_all.sh publishes no run that has one. Skipped benchmarks (a configuration this GPU
cannot run) are not errors: they are listed with their reasons on stdout and do not change the status.
A folder stands for every benchmarks.json below it, as for compare.py (run_all.sh --compare DIR checks its
baselines so).

Exit status: 0 no errors, 1 errors (listed on stderr), 2 a file that is not usable suite JSON, or a folder
without any (or of a run marked FAILED); 70 a bug (a traceback).
"""
import argparse
import sys

from gpubench import suite_json
from gpubench.regress.compare import InputError, expand

PROG = "check_errors"


@suite_json.cli(PROG)
def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", metavar="RUN.json|FOLDER", help="benchmarks.json written by gpubench --benchmark_out")
    args = p.parse_args(argv)
    try:
        paths = expand(args.json, last=False)
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    suites = [suite_json.load_or_exit(path, PROG) for path in paths]
    for suite in suites:
        where = f"{suite.path}: " if len(suites) > 1 else ""
        for r in suite.skips():
            print(f"{PROG}: {where}skipped {r.name}: {r.skipped}")
        for r in suite.errors():
            print(f"{PROG}: {where}{r.name}: {r.error}", file=sys.stderr)
    return 1 if any(s.errors() for s in suites) else 0


if __name__ == "__main__":
    sys.exit(main())
