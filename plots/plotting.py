"""What every plot script shares: command line, the 'nothing to plot' rule, stride axes, saving.

Exit status of every plot script: 0 (also when the input has nothing to plot: no PNG then), 2 for an
unusable input or an output it refuses to write (an input, a committed file or a file in a committed run's
folder without --force, no such folder) or cannot write (a full disk); a closed stdout pipe ends it quietly
(SIGPIPE, 141 in the shell).
"""
import argparse
import functools
import os
import signal
import sys

from gpubench import suite_json


@functools.lru_cache(maxsize=None)
def _pyplot():
    import matplotlib
    matplotlib.use("Agg")  # no display on CI or on the GPU machine
    import matplotlib.pyplot
    return matplotlib.pyplot


class _Pyplot:
    """matplotlib.pyplot, imported at the first use of one of its names: a script that draws nothing (an
    unusable input, a run without its family: most of run_all.sh's pictures of a partial run) ends without
    importing matplotlib, about half a second of CPU. The scripts draw with matplotlib.ticker and
    matplotlib.lines too: they import those where they draw, after this."""

    def __getattr__(self, name):
        return getattr(_pyplot(), name)


plt = _Pyplot()


@functools.lru_cache(maxsize=None)
def plain():
    """The formatter that labels 1024 as 1024, not 2^10 or 1e3 (one instance, shared by every axis)."""
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda v, _: f"{v:g}")


def parse_args(prog, doc, argv):
    """-> (suite, output path). Default output is <dir of the JSON>/<prog>.png, where report.py looks."""
    if hasattr(signal, "SIGPIPE"):  # `... | head`: end quietly, as suite_json.cli does for the tools
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    p = argparse.ArgumentParser(prog=prog, description=doc)
    p.add_argument("json", help="benchmarks.json written by gpubench --benchmark_out")
    p.add_argument("-o", "--output", help="PNG to write (default: <json dir>/%s.png)" % prog)
    p.add_argument("--force", action="store_true",
                   help="write the output even where git tracks it or its folder (a committed run)")
    args = p.parse_args(argv)
    suite = suite_json.load_or_exit(args.json, prog)
    out = args.output or os.path.join(os.path.dirname(os.path.abspath(args.json)), prog + ".png")
    suite_json.check_output(out, [args.json], prog, args.force)
    return suite, out


def note(prog, message):
    print(f"{prog}: {message}", file=sys.stderr)


def nothing_to_plot(prog, suite, what):
    """No data for this picture is not an error (a partial run), so exit 0 -- but write no PNG,
    so that report.py, which links only the PNGs that exist, shows no empty picture."""
    note(prog, f"no {what} benchmarks in {suite.path}; no picture written")
    return 0


def log2_axis(ax, values, axis="x"):
    """Log2 axis ticked at the measured values (symlog, linear below 1, when 0 is among them). A value within
    20% of its lower neighbour (33 next to 32) is labelled in a second row so the two labels don't collide."""
    from matplotlib.ticker import FixedLocator, NullLocator
    major, minor = [], []
    for v in sorted(set(values)):
        (minor if major and major[-1] > 0 and v / major[-1] < 1.2 else major).append(v)
    if 0 in major:
        getattr(ax, f"set_{axis}scale")("symlog", base=2, linthresh=1, linscale=0.7)
    else:
        getattr(ax, f"set_{axis}scale")("log", base=2)
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(FixedLocator(major))
    target.set_major_formatter(plain())
    target.set_minor_locator(FixedLocator(minor) if minor else NullLocator())
    target.set_minor_formatter(plain())
    ax.tick_params(axis=axis, which="minor", pad=13 if axis == "x" else 22, labelsize="small")


def log_values_axis(ax, axis="y"):
    """Log10 axis with plain-number labels (GB/s, cycles) instead of 10^n."""
    from matplotlib.ticker import FuncFormatter
    getattr(ax, f"set_{axis}scale")("log")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(plain())
    # Label the 2x, 3x and 5x minor ticks too: a decade with only one label is hard to read.
    target.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "235" else ""))


def save(fig, suite, title, out, prog):
    fig.suptitle(f"{title}\n{suite.gpu_name}")
    fig.tight_layout()
    suite_json.save_figure(fig, out, prog, dpi=110)
    plt.close(fig)
    print(f"{prog}: wrote {out}")
    return 0
