#!/usr/bin/env python3
"""Shared-memory banks: cycles per warp request against stride for no padding, +1 padding and XOR swizzle,
one panel per element width; dotted lines are the bank-conflict model.

The x axis is symlog base 2 (linear between 0 and 1, log2 above) so that stride 0 (broadcast) is shown.
Model: cycles(S) = conflict_ways(S) / conflict_ways(1) x measured cycles(1), i.e. the stride-1 time scaled
by the conflict ways the benchmark reports (equal to ways x stride-1 time when stride 1 is conflict-free).
"""
from plots.plotting import log2_axis, note, nothing_to_plot, parse_args, plain, plt, save

PROG = "banks"
LAYOUTS = {"pad 0": "C0", "pad 1": "C2", "swizzle": "C3"}


def layout(r):
    return "swizzle" if r.fields.get("layout") == "swizzle" else f"pad {r.fields.get('pad', 0)}"


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    recs = [r for r in suite.ok("smem_banks") if r.fields.get("mode") == "throughput"]
    widths = sorted({r.fields["width"] for r in recs})
    if not widths:
        return nothing_to_plot(PROG, suite, "smem_banks/throughput/*")

    fig, axes = plt.subplots(1, len(widths), figsize=(5.2 * len(widths), 4.6), squeeze=False)
    for ax, width in zip(axes[0], widths):
        strides, values = set(), []
        for name, color in LAYOUTS.items():
            pts = sorted((r for r in recs if r.fields["width"] == width and layout(r) == name),
                         key=lambda r: r.fields["stride"])
            if not pts:
                note(PROG, f"no smem_banks/throughput/width:{width} {name} benchmarks; line left out")
                continue
            s = [r.fields["stride"] for r in pts]
            y = [r.get("cycles_per_request") for r in pts]
            strides.update(s)
            values += y
            ax.plot(s, y, "-o", color=color, ms=4, label=name)
            one = next((r for r in pts if r.fields["stride"] == 1), None)
            if one and one.get("conflict_ways") > 0:  # model needs the conflict-free stride-1 time
                model = [r.get("conflict_ways") / one.get("conflict_ways") * one.get("cycles_per_request")
                         for r in pts]
                ax.plot(s, model, ":", color=color, lw=2, label=f"{name}: model")
        log2_axis(ax, strides)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(plain())
        ax.set(title=f"{width}-byte elements", xlabel="stride (elements between neighbouring threads)",
               ylabel="cycles per warp request")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize="small")
    return save(fig, suite, "Shared-memory bank conflicts: throughput by stride (dotted: ways x stride-1 time)",
                out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
