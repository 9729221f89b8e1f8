#!/usr/bin/env python3
"""Exit 1 (listing them) when any benchmark in a suite JSON reported an error, such as a failed
verification; run_all.sh publishes no run that has one. Exit 2 on a file that is not suite JSON."""
import sys

import suite_json


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: check_errors.py BENCHMARKS.json", file=sys.stderr)
        return 2
    suite = suite_json.load_or_exit(argv[0], "check_errors.py")
    bad = [r for r in suite.records if r.error]
    for r in bad:
        print(f"check_errors.py: {r.name}: {r.error}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
