#!/usr/bin/env python3
"""Coalescing: useful and bus bandwidth (GB/s) against access stride, one panel per memory level."""
from plots.plotting import log2_axis, log_values_axis, note, nothing_to_plot, parse_args, plt, save

PROG = "stride"
LEVELS = ("hbm", "l2", "l1")
OPS = {"read": "C0", "write": "C3"}


def ceilings(suite, level):
    """Reference lines for a panel: the level's own read ceiling and, for HBM, memcpy D2D."""
    names = [(f"ceiling/read/{level}", f"{level.upper()} read ceiling")]
    if level == "hbm":
        names.append(("ceiling/memcpy_d2d", "memcpy D2D"))
    return [(label, v) for name, label in names if (v := suite.value(name, "bytes_per_second"))]


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    recs = suite.ok("coalescing")
    levels = [lv for lv in LEVELS if any(r.fields.get("level") == lv for r in recs)]
    if not levels:
        return nothing_to_plot(PROG, suite, "coalescing/*")
    for lv in set(LEVELS) - set(levels):
        note(PROG, f"no coalescing/*/{lv} benchmarks; that panel is left out")
    if suite.value("ceiling/memcpy_d2d", "bytes_per_second") is None:
        note(PROG, "no ceiling/memcpy_d2d; no memcpy line")

    fig, axes = plt.subplots(1, len(levels), figsize=(5.2 * len(levels), 4.6), squeeze=False)
    for ax, level in zip(axes[0], levels):
        strides = set()
        for op, color in OPS.items():
            pts = sorted((r for r in recs if r.fields.get("op") == op and r.fields.get("level") == level),
                         key=lambda r: r.fields["stride"])
            if not pts:
                continue
            s = [r.fields["stride"] for r in pts]
            strides.update(s)
            ax.plot(s, [r.get("useful_bytes_per_second") / 1e9 for r in pts], "-o", color=color, ms=4,
                    label=f"{op}: useful")
            ax.plot(s, [r.get("bus_bytes_per_second") / 1e9 for r in pts], "--", color=color, alpha=0.6,
                    label=f"{op}: bus")
        for (label, v), style in zip(ceilings(suite, level), (":", "-.")):
            ax.axhline(v / 1e9, color="grey", ls=style, label=f"{label} ({v / 1e9:,.0f} GB/s)")
        log2_axis(ax, strides)
        log_values_axis(ax)
        ax.set(title=level.upper(), xlabel="stride (elements between neighbouring threads)", ylabel="bandwidth (GB/s)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize="small")
    return save(fig, suite, "Coalescing: useful vs bus bandwidth by stride", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
