#!/usr/bin/env python3
"""Energy staircase: picojoules per byte at each level (L1, L2, HBM read and write, the host-to-device copy),
in total (grey) and above idle (in front), on a log axis; per FLOP beside it (FP32 FMA, the tensor cores' BF16
wgmma and mma.sync). Below, the energy roofline: energy per FLOP above idle against arithmetic intensity, one
line per compute unit and level, pJ/FLOP + pJ/B ÷ intensity (gpubench/analysis/energy.py).
The energy family (micro/bench_energy.cu); data sensitivity (zero against random data) hatched."""
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from gpubench.analysis import energy as levels
from plots.plotting import log2_axis, log_values_axis, note, nothing_to_plot, parse_args, plt, save

PROG = "energy"
# name after "energy/" -> bar label, in staircase order
BYTES = {"read/l1": "L1 read", "read/l2": "L2 read", "read/hbm/data:random": "HBM read",
         "read/hbm/data:zero": "HBM read\n(zero data)", "write/hbm": "HBM write", "copy/h2d": "host→device\n(pinned)"}
FLOPS = {"fma/data:random": "FFMA", "fma/data:zero": "FFMA\n(zero)",
         "wgmma/bf16/data:random": "wgmma\nBF16", "wgmma/bf16/data:zero": "wgmma\nBF16\n(zero)",
         "mma/bf16/data:random": "mma.sync\nBF16", "mma/bf16/data:zero": "mma.sync\nBF16\n(zero)"}
INTENSITY = [2.0 ** e for e in range(-4, 13)]  # FLOP per byte: the roofline's axis ticks
CURVE = [2.0 ** (e / 8) for e in range(-32, 97)]  # and the points its lines are drawn through
ROOF_LEVELS = ("shared / L1", "L2", "HBM", "PCIe (host→device)")  # levels a kernel's bytes come from
DASHES = ("-", "--", ":")  # one per compute unit, in levels.COMPUTE order


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


def roofline(ax, suite):
    """Energy per FLOP above idle at each intensity for every compute unit and level measured (a line each:
    colour the level, dash the unit), the unit's own pJ/FLOP as the floor it tends to; the count of lines."""
    units = [(label, levels.pj(r)) for label, name in levels.COMPUTE.items() if (r := levels.measured(suite, name))]
    found = [(lv, v) for lv, v in levels.by_level(suite) if lv.label in ROOF_LEVELS]
    drawn = 0
    for dash, (unit, per_flop) in zip(DASHES, units):
        ax.axhline(per_flop, color="0.5", lw=0.8, ls=dash)
        for i, (lv, per_byte) in enumerate(found):
            ax.plot(CURVE, [levels.roof(per_flop, per_byte, x) for x in CURVE], color=f"C{i}", ls=dash, lw=1.5)
            drawn += 1
    if not drawn:
        return 0
    ax.set_yscale("log")
    log2_axis(ax, INTENSITY)
    log_values_axis(ax)
    ax.set(xlabel="arithmetic intensity (FLOP per byte moved at the level)", ylabel="pJ per FLOP above idle (log)",
           title="energy roofline: pJ/FLOP + pJ/B ÷ intensity")
    handles = [Line2D([], [], color=f"C{i}", label=f"{lv.label} {v:.3g} pJ/B") for i, (lv, v) in enumerate(found)]
    handles += [Line2D([], [], color="k", ls=dash, label=f"{unit} {v:.3g} pJ/FLOP") for dash, (unit, v) in zip(DASHES, units)]
    ax.legend(handles=handles, fontsize="small", ncol=2)
    ax.grid(True, which="major", alpha=0.3)
    return drawn


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    recs = {r.name.split("/", 1)[1]: r for r in suite.ok("energy")}
    recs = {k: r for k, r in recs.items() if r.has("joules_per_byte") or r.has("joules_per_flop")}
    if not recs:
        return nothing_to_plot(PROG, suite, "energy/...")
    for k in list(BYTES) + list(FLOPS):
        if k not in recs:
            note(PROG, f"no energy/{k}; its bar is left out")
    fig = plt.figure(figsize=(12, 10))
    grid = fig.add_gridspec(2, 2, width_ratios=[3, 2])
    per_byte, per_flop, roof = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])
    if bars(per_byte, recs, BYTES, "joules_per_byte"):
        per_byte.set(ylabel="pJ per byte (log)", title="per byte moved")
    if bars(per_flop, recs, FLOPS, "joules_per_flop"):
        per_flop.set(ylabel="pJ per FLOP (log)", title="per FLOP (an FFMA is 2)")
    per_byte.legend([Patch(color="0.8"), Patch(color="C0")], ["in total", "above idle"],
                    loc="upper left", fontsize="small")
    if not roofline(roof, suite):
        roof.set_axis_off()
        note(PROG, "no energy roofline: it needs a compute unit (energy/fma, energy/wgmma or energy/mma) and a level")
    return save(fig, suite, "Energy per byte by level and per FLOP", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
