#!/usr/bin/env python3
"""Asynchronous copies: bytes per clock per SM of every method and configuration (async/<method>/<level>/bandwidth/...),
one panel of bars from L2 and one from HBM, with ceiling/read/l2 and ceiling/read/hbm of the same run as dashed
lines and the 128 B/clk/SM of shared memory as a dotted one; TMA boxes and swizzles are bars of their own. A third
panel: cycles from issue to completion of one copy against its bytes (async/<method>/<level>/latency/...), L2
solid, HBM dashed."""
from gpubench.analysis.copies import (LEVELS, METHODS, SMEM_BYTES_PER_CLOCK_PER_SM, async_records, ceiling,
                                      config, method)
from gpubench.tables import human_bytes
from matplotlib.ticker import FuncFormatter
from plots.plotting import log2_axis, note, nothing_to_plot, parse_args, plt, save

PROG = "async"
COLORS = {m: f"C{i}" for i, m in enumerate(METHODS)}
LEVEL_STYLE = {"l2": "-", "hbm": "--"}


def bandwidth_panel(ax, suite, level, recs):
    """Horizontal bars, one per configuration, coloured by method; the level's read ceiling as a line."""
    ys = range(len(recs))
    values = [r.get("bytes_per_clock_per_sm") for r in recs]
    ax.barh(list(ys), values, color=[COLORS[method(r)] for r in recs])
    for y, v in zip(ys, values):
        ax.text(v, y, f" {v:.1f}", va="center", fontsize="x-small")
    ax.set_yticks(list(ys), [f"{method(r)}  {config(r)}" for r in recs], fontsize="x-small")
    ax.invert_yaxis()  # plan order from the top
    _, per_sm = ceiling(suite, level)
    if per_sm:
        ax.axvline(per_sm, color="k", ls="--", lw=1.2, label=f"ceiling/read/{level} {per_sm:.1f}")
    else:
        note(PROG, f"no ceiling/read/{level} in the run; its line is left out")
    ax.axvline(SMEM_BYTES_PER_CLOCK_PER_SM, color="grey", ls=":", lw=1, label="shared memory 128")
    ax.set(title=f"from {level.upper()}", xlabel="bytes per clock per SM")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")


def latency_panel(ax, recs):
    """Cycles against bytes per copy, one line per method and level."""
    sizes = set()
    for m in METHODS:
        for level in LEVELS:
            pts = sorted((r for r in recs if method(r) == m and r.fields["level"] == level), key=lambda r: r.get("bytes"))
            if pts:
                x = [r.get("bytes") for r in pts]
                sizes.update(x)
                ax.plot(x, [r.get("cycles") for r in pts], LEVEL_STYLE[level], marker="o", ms=4, color=COLORS[m],
                        label=f"{m}, {level.upper()}")
    log2_axis(ax, sizes)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human_bytes(v)))
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_ylim(bottom=0)
    ax.set(title="latency of one copy", xlabel="bytes per copy", ylabel="cycles, issue to completion (median)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="x-small")


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    bands = {level: async_records(suite, "bandwidth", level) for level in LEVELS}
    bands = {level: recs for level, recs in bands.items() if recs}
    lat = async_records(suite, "latency")
    if not bands and not lat:
        return nothing_to_plot(PROG, suite, "async/<method>/<l2|hbm>/<bandwidth|latency>")
    for level in LEVELS:
        if level not in bands:
            note(PROG, f"no async/*/{level}/bandwidth benchmarks; that panel is left out")
    panels = len(bands) + bool(lat)
    tallest = max([len(r) for r in bands.values()] + [8])
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, max(5.0, 0.28 * tallest + 1.8)), squeeze=False)
    for ax, (level, recs) in zip(axes[0], bands.items()):
        bandwidth_panel(ax, suite, level, recs)
    if lat:
        latency_panel(axes[0][-1], lat)
    else:
        note(PROG, "no async/*/latency benchmarks; the latency panel is left out")
    return save(fig, suite, "Global -> shared copies: bandwidth by method and configuration, and latency", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
