#!/usr/bin/env python3
"""Barriers: cycles per __syncthreads() against block size (warps, log2 axis), one line per blocks/SM;
__syncwarp() and named barriers (bar.sync id, count) drawn dashed/dotted in the same colours for reference."""
from plots.plotting import log2_axis, log_values_axis, note, nothing_to_plot, parse_args, plt, save

PROG = "sync"
PRIMITIVES = {"syncthreads": "-", "named_barrier": "--", "syncwarp": ":"}  # sync/<primitive> -> line style


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    recs = [r for r in suite.ok("sync") if r.fields.get("primitive") in PRIMITIVES]
    if not recs:
        return nothing_to_plot(PROG, suite, "sync/<syncthreads|named_barrier|syncwarp>")
    from matplotlib.lines import Line2D  # here: plotting.plt says why
    for prim in PRIMITIVES:
        if not any(r.fields["primitive"] == prim for r in recs):
            note(PROG, f"no sync/{prim}/* benchmarks; its lines are left out")

    blocks = sorted({r.fields["blocks_per_sm"] for r in recs})
    colors = {b: f"C{i}" for i, b in enumerate(blocks)}
    fig, ax = plt.subplots(figsize=(7.5, 5))
    warps = set()
    for fam, style in PRIMITIVES.items():
        for b in blocks:
            pts = sorted((r for r in recs if r.fields["primitive"] == fam and r.fields["blocks_per_sm"] == b),
                         key=lambda r: r.fields["threads"])
            if pts:
                w = [r.fields["threads"] // 32 for r in pts]
                warps.update(w)
                ax.plot(w, [r.get("cycles_per_barrier") for r in pts], style, color=colors[b],
                        marker="o" if fam == "syncthreads" else None, ms=4, lw=2 if fam == "syncthreads" else 1.3)
    log2_axis(ax, warps)
    log_values_axis(ax)
    ax.set(xlabel="block size (warps; threads = 32 x warps)", ylabel="cycles per barrier")
    ax.grid(True, which="major", alpha=0.3)
    # Two small legends: colour = blocks per SM, line style = primitive.
    by_blocks = ax.legend([Line2D([], [], color=colors[b], lw=2) for b in blocks],
                          [f"{b} block{'s' if b > 1 else ''}/SM" for b in blocks], loc="upper left",
                          fontsize="small", title="colour", title_fontsize="small")
    ax.add_artist(by_blocks)
    ax.legend([Line2D([], [], color="black", ls=s) for s in PRIMITIVES.values()],
              ["syncthreads", "named barrier", "syncwarp"], loc="upper center",
              fontsize="small", title="line", title_fontsize="small")
    return save(fig, suite, "Barrier cost against block size", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
