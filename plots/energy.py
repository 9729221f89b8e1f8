#!/usr/bin/env python3
"""Energy staircase: picojoules per byte at each level (L1, L2, HBM read and write, the host-to-device copy),
in total (grey) and above idle (in front), on a log axis; FP32 FMA per FLOP beside it.
The energy family (micro/bench_energy.cu); data sensitivity (zero against random data) hatched."""
from matplotlib.patches import Patch

from plots.plotting import log_values_axis, note, nothing_to_plot, parse_args, plt, save

PROG = "energy"
# name after "energy/" -> bar label, in staircase order
BYTES = {"read/l1": "L1 read", "read/l2": "L2 read", "read/hbm/data:random": "HBM read",
         "read/hbm/data:zero": "HBM read\n(zero data)", "write/hbm": "HBM write", "copy/h2d": "host→device\n(pinned)"}
FLOPS = {"fma/data:random": "FFMA", "fma/data:zero": "FFMA\n(zero data)"}


def bars(ax, recs, labels, counter):
    """For the records present, in `labels` order: the total (grey) and, in front, the part above idle, in pJ.
    Overlaid rather than stacked: the axis is logarithmic."""
    found = [(labels[k], recs[k]) for k in labels if k in recs]
    lo, hi = float("inf"), 0.0
    for i, (label, r) in enumerate(found):
        total, above = r.get(counter) * 1e12, r.get(counter + "_above_idle") * 1e12
        hatch = "//" if "zero" in label else None
        ax.bar(i, total, width=0.8, color="0.8", hatch=hatch, edgecolor="0.4")
        ax.bar(i, above, width=0.5, color="C0" if counter.endswith("byte") else "C3", hatch=hatch, edgecolor="0.2")
        ax.annotate(f"{total:.3g}", (i, total), ha="center", va="bottom", fontsize="small", color="0.3")
        ax.annotate(f"{above:.3g}", (i, above), ha="center", va="bottom", fontsize="small")
        lo, hi = min(lo, above, total), max(hi, total)
    ax.set_xticks(range(len(found)), [label for label, _ in found], fontsize="small")
    log_values_axis(ax)
    if found and lo > 0:  # bars start at the axis' bottom: show them from a third of the smallest value
        ax.set_ylim(lo / 3, hi * 1.6)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    return len(found)


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    recs = {r.name.split("/", 1)[1]: r for r in suite.ok("energy")}
    recs = {k: r for k, r in recs.items() if r.has("joules_per_byte") or r.has("joules_per_flop")}
    if not recs:
        return nothing_to_plot(PROG, suite, "energy/...")
    for k in list(BYTES) + list(FLOPS):
        if k not in recs:
            note(PROG, f"no energy/{k}; its bar is left out")
    fig, (per_byte, per_flop) = plt.subplots(1, 2, figsize=(10, 5), gridspec_kw={"width_ratios": [3, 1]})
    if bars(per_byte, recs, BYTES, "joules_per_byte"):
        per_byte.set(ylabel="pJ per byte (log)", title="per byte moved")
    if bars(per_flop, recs, FLOPS, "joules_per_flop"):
        per_flop.set(ylabel="pJ per FLOP (log)", title="per FP32 FLOP (FFMA = 2)")
    per_byte.legend([Patch(color="0.8"), Patch(color="C0")], ["in total", "above idle"],
                    loc="upper left", fontsize="small")
    return save(fig, suite, "Energy per byte by level and per FLOP", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
