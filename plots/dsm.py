#!/usr/bin/env python3
"""Thread-block clusters: distributed shared-memory bandwidth (dsm/bandwidth/<read|write>/cluster_size:C, bytes per
clock per SM; C = 1 is the block's own shared memory) against cluster size with shared memory's 128 B/clk/SM;
cycles per cluster barrier (dsm/barrier/cluster_sync) with __syncthreads as the in-block reference; the latency of
one dependent load to the own block's shared memory, the own block through shared::cluster, and another SM
(dsm/latency/target:*); TMA multicast against unicast (async/tma/l2/bandwidth/kind:<multicast|unicast>): bytes
delivered into shared memory (solid) and read from L2 (dashed) per clock per SM, beside ceiling/read/l2."""
from gpubench.analysis.copies import SMEM_BYTES_PER_CLOCK_PER_SM, async_records, ceiling, dsm_records, method
from plots.plotting import log2_axis, nothing_to_plot, parse_args, plt, save

PROG = "dsm"
OPS = {"read": "C0", "write": "C1"}
CASTS = {"tma multicast": "C2", "tma unicast": "C3"}


def sizes(recs):
    return [r.fields["cluster_size"] for r in recs]


def bandwidth_panel(ax, suite):
    for op, color in OPS.items():
        recs = dsm_records(suite, "bandwidth", op)
        if recs:
            ax.plot(sizes(recs), [r.get("bytes_per_clock_per_sm") for r in recs], "-o", color=color, label=op)
    ax.axhline(SMEM_BYTES_PER_CLOCK_PER_SM, color="grey", ls=":", label="shared memory 128 B/clk/SM")
    recs = dsm_records(suite, "bandwidth")
    log2_axis(ax, sizes(recs))
    top = max([r.get("bytes_per_clock_per_sm") for r in recs] + [SMEM_BYTES_PER_CLOCK_PER_SM])
    ax.set(title="DSM bandwidth (C = 1: own shared memory)", xlabel="cluster size (blocks, one per SM)",
           ylabel="bytes per clock per SM", ylim=(0, top * 1.15))


def barrier_panel(ax, suite):
    recs = dsm_records(suite, "barrier", "cluster_sync")
    if recs:
        ax.plot(sizes(recs), [r.get("cycles_per_barrier") for r in recs], "-o", color="C4", label="cluster.sync()")
        log2_axis(ax, sizes(recs))
    ref = suite.value("dsm/barrier/syncthreads/cluster_size:1", "cycles_per_barrier")
    if ref is not None:
        ax.axhline(ref, color="k", ls="--", lw=1, label=f"syncthreads (in-block) {ref:.0f}")
    ax.set(title="cluster barrier", xlabel="cluster size", ylabel="cycles per barrier")
    ax.set_ylim(bottom=0)


def latency_panel(ax, suite):
    recs = dsm_records(suite, "latency")
    values = [r.get("cycles") for r in recs]
    ax.bar(range(len(recs)), values, color=["C5" if r.fields.get("target") == "remote" else "C7" for r in recs])
    for x, v in enumerate(values):
        ax.text(x, v, f"{v:.0f}", ha="center", va="bottom", fontsize="small")
    ax.set_xticks(range(len(recs)), [r.fields.get("target", "?") for r in recs])
    ax.set(title="latency of one dependent load", ylabel="cycles per load")
    ax.set_ylim(0, max(values + [1]) * 1.15)


def multicast_panel(ax, suite):
    recs = [r for r in async_records(suite, "bandwidth", "l2") if method(r) in CASTS]
    for m, color in CASTS.items():
        pts = sorted((r for r in recs if method(r) == m), key=lambda r: r.fields["cluster_size"])
        if pts:
            delivered = [r.get("bytes_per_clock_per_sm") for r in pts]
            # bytes read from L2 per clock per SM: delivered bytes scaled by the read/delivered ratio
            read = [d * r.get("l2_read_bytes_per_second") / r.get("bytes_per_second") for d, r in zip(delivered, pts)]
            ax.plot(sizes(pts), delivered, "-o", color=color, label=f"{m.split()[1]}: delivered")
            ax.plot(sizes(pts), read, "--", marker="x", color=color, label=f"{m.split()[1]}: read from L2")
    _, l2 = ceiling(suite, "l2")
    if l2:
        ax.axhline(l2, color="k", ls=":", lw=1, label=f"ceiling/read/l2 {l2:.1f}")
    log2_axis(ax, sizes(recs))
    ax.set(title="TMA multicast vs unicast (16 KiB tiles)", xlabel="cluster size", ylabel="bytes per clock per SM")
    ax.set_ylim(bottom=0)


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    panels = [(fn, has) for fn, has in (
        (bandwidth_panel, dsm_records(suite, "bandwidth")), (barrier_panel, dsm_records(suite, "barrier")),
        (latency_panel, dsm_records(suite, "latency")),
        (multicast_panel, [r for r in async_records(suite, "bandwidth", "l2") if method(r) in CASTS])) if has]
    if not panels:
        return nothing_to_plot(PROG, suite, "dsm/* or async/tma/l2/bandwidth/kind:<multicast|unicast>")
    cols = min(2, len(panels))
    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, 4.6 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax, (draw, _) in zip(flat, panels):
        draw(ax, suite)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="x-small")
    for ax in flat[len(panels):]:
        ax.set_visible(False)
    return save(fig, suite, "Thread-block clusters: distributed shared memory, cluster barrier, TMA multicast", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
