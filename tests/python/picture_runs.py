#!/usr/bin/env python3
"""Which committed runs test_results.py must draw (PICTURE_RUNS): for every committed run, the line-to-line
steps of plots/ and gpubench/ that its pictures, report and check_errors take (a line tracer, each script's
main() in-process as conftest.call runs it; figures laid out but not rendered to pixels, which is matplotlib's
code, not ours), then the fewest runs that together take every step (greedy: the run with the most new steps
first). Prints each chosen run with the steps it adds and the list to paste. Takes a few CPU-minutes.

usage: python3 tests/python/picture_runs.py   (from anywhere; after new committed runs or plot code)
"""
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]

import matplotlib.figure  # noqa: E402

import conftest  # noqa: E402
from gpubench import families, suite_json  # noqa: E402

OURS = tuple(str(conftest.ROOT / d) + "/" for d in ("plots", "gpubench"))


def _laid_out(fig, fname, *args, **kw):
    fig.draw_without_rendering()  # every artist's draw code runs (our tick formatters among it), no pixels
    data = b"\0" * 30000  # what the test asks of a picture's size
    fname.write(data) if hasattr(fname, "write") else Path(fname).write_bytes(data)


def steps(path):
    """{(file, line, next line)} our code takes on this run (a function's entry and exit as negative lines)."""
    seen = set()

    def enter(frame, event, arg):
        code = frame.f_code
        if not code.co_filename.startswith(OURS) or code.co_name == "<module>":  # imports: once, for any run
            return None
        last = [-code.co_firstlineno]

        def step(frame, event, arg):
            if event in ("line", "return"):
                here = frame.f_lineno if event == "line" else -code.co_firstlineno
                seen.add((code.co_filename, last[0], here))
                last[0] = here
            return step
        return step

    present = {r.fields["family"] for r in conftest.committed(path).ok()}
    scripts = dict.fromkeys(p for f in families.FAMILIES if f.name in present for p in f.plots)
    with tempfile.TemporaryDirectory() as tmp:
        sys.settrace(enter)
        try:
            codes = [conftest.call(s, path, "-o", Path(tmp) / f"{s}.png").returncode for s in scripts]
            codes += [conftest.call("report", path, "-o", Path(tmp) / "report.md").returncode,
                      conftest.call("check_errors", path).returncode]
        finally:
            sys.settrace(None)
    assert not any(codes), f"{path}: exit codes {codes}"
    return seen


def main():
    matplotlib.figure.Figure.savefig = _laid_out
    suite_json.load = conftest.committed
    h200 = conftest.ROOT / "results" / "h200"
    runs = {str(p.parent.relative_to(h200)): steps(p) for p in conftest.run_files(conftest.ROOT / "results")}
    everything, covered, chosen = set().union(*runs.values()), set(), []
    while covered != everything:
        best = max(runs, key=lambda r: len(runs[r] - covered))  # ties: the first (oldest) run
        print(f"{best}: {len(runs[best] - covered)} new steps", file=sys.stderr)
        covered |= runs[best]
        chosen.append(best)
    print(f"{len(runs)} runs, {len(everything)} steps; PICTURE_RUNS = {chosen}")


if __name__ == "__main__":
    main()
