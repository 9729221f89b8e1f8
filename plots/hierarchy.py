#!/usr/bin/env python3
"""Read bandwidth against working set (hierarchy/read/ws:*), log x, with the plateaus and cliffs that
gpubench/analysis/edges.py finds marked, beside the L1 and L2 sizes the device reports."""
import math

from gpubench.analysis.edges import cliffs, plateaus
from gpubench.analysis.hierarchy import curve, device_sizes, edge_lines
from gpubench.tables import human_bytes as human
from plots.plotting import log_values_axis, nothing_to_plot, note, parse_args, plt, save

PROG = "hierarchy"


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    ws, bw = curve(suite)
    if len(ws) < 3:
        return nothing_to_plot(PROG, suite, "hierarchy/read/ws:* (3 or more)")
    fig, ax = plt.subplots(figsize=(10, 5.2))
    ax.plot(ws, [b / 1e12 for b in bw], "-o", ms=3.5, color="C0", label="read bandwidth (every SM busy)")
    for p in plateaus(ws, bw):
        ax.hlines(p.level / 1e12, p.lo_bytes, p.hi_bytes, colors="C2", lw=5, alpha=0.45)
        ax.annotate(f"{p.level / 1e12:.2f} TB/s", (math.sqrt(p.lo_bytes * p.hi_bytes), p.level / 1e12),
                    textcoords="offset points", xytext=(0, 7), ha="center", fontsize="small", color="C2")
    for c in cliffs(ws, bw):
        if c.mid_bytes:
            ax.axvline(c.mid_bytes, color="C3", ls="--", lw=1.2,
                       label=f"edge {human(c.mid_bytes)} ({c.upper.level / 1e12:.1f} -> {c.lower.level / 1e12:.1f} TB/s)")
        if c.half_bytes:
            ax.axvline(c.half_bytes, color="C1", ls=":", lw=1.2, label=f"half of {c.upper.level / 1e12:.1f} TB/s at "
                                                                      f"{human(c.half_bytes)}")
    for (label, v), style in zip(device_sizes(suite), ("-.", (0, (5, 2, 1, 2)))):
        ax.axvline(v, color="grey", ls=style, lw=1, label=f"{label} (device): {human(v)}")
    if not cliffs(ws, bw):
        note(PROG, "no cliff between two plateaus found; only the curve is drawn")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: human(v)))
    log_values_axis(ax)
    ax.set(xlabel="working set (distinct bytes the launch reads)", ylabel="bandwidth (TB/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small", loc="lower left")
    return save(fig, suite, "Read bandwidth by working set: plateaus and cliffs", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
