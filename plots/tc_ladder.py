#!/usr/bin/env python3
"""BF16 tensor-core GEMM ladder: TFLOP/s of each kernel of ours at 4096^3 (8192^3 when the run lacks 4096)
in ladder order (gemm/<wmma|mma_swizzled|...|wgmma_tma>), each bar labelled with its % of cuBLAS BF16 at the
same shape (dashed line); the BF16 dense peak at the run's clock (Hopper: SMs x 4096 FLOP/clk/SM x clock) and
the 128x128 tile's L2 bound (ceiling/read/l2 x 64 FLOP per byte, docs/families/tc-gemm.md) as dotted lines; the
time model's prediction (predictions.json rules, gpubench/analysis/tc_predict.py) as a black tick per kernel, with
predicted / measured and the predicted binding resource under the bar."""
from gpubench.analysis.tensor_core import bf16_peak, l2_tile_bound, ladder, predicted
from plots.plotting import note, nothing_to_plot, parse_args, plt, save

PROG = "tc_ladder"


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    n, steps, cublas = ladder(suite)
    if not steps and not cublas:
        return nothing_to_plot(PROG, suite, "gemm/<cublas_bf16|wmma|...|wgmma_tma>/m:4096/n:4096/k:4096 (or 8192)")
    if not cublas:
        note(PROG, f"no gemm/cublas_bf16 at {n}^3: no % of cuBLAS")
    fig, ax = plt.subplots(figsize=(max(7.5, 1.2 * len(steps) + 3), 5.5))
    tflops = [f / 1e12 for _, f in steps]
    ax.bar(range(len(steps)), tflops, 0.6, color="C0", label="measured")
    for x, t in enumerate(tflops):
        pct = f"\n{t * 1e12 / cublas * 100:.0f} %" if cublas else ""
        ax.text(x, t, f"{t:.0f}{pct}", ha="center", va="bottom", fontsize="small")
    lines = list(tflops)
    pred, _ = predicted(suite, n)
    flops, label = 2.0 * n ** 3, "predicted (time model)"
    for x, (k, f) in enumerate(steps):
        measured, p, binding = pred.get(k, (None, None, None))
        if not p:
            continue
        ax.plot([x - 0.3, x + 0.3], [flops / p / 1e12] * 2, color="k", lw=2, label=label)
        label = None  # one legend entry
        ax.text(x, 0, f"{p / measured:.2f}\n{binding}", ha="center", va="bottom", fontsize="x-small", color="w")
        lines.append(flops / p / 1e12)
    if cublas:
        ax.axhline(cublas / 1e12, color="k", ls="--", lw=1.2, label=f"cuBLAS BF16 {cublas / 1e12:.0f} TFLOP/s")
        lines.append(cublas / 1e12)
    peak, _ = bf16_peak(suite)
    if peak:
        ax.axhline(peak / 1e12, color="C3", ls=":", lw=1.2, label=f"BF16 dense peak {peak / 1e12:.0f} TFLOP/s")
        lines.append(peak / 1e12)
    l2 = l2_tile_bound(suite)
    if l2:
        ax.axhline(l2 / 1e12, color="C2", ls="-.", lw=1, label=f"128x128 tile L2 bound {l2 / 1e12:.0f} TFLOP/s")
        lines.append(l2 / 1e12)
    ax.set_xticks(range(len(steps)), [k for k, _ in steps], rotation=15)
    ax.set_ylim(0, max(lines + [1]) * 1.2)
    ax.set(ylabel="TFLOP/s (bar label: % of cuBLAS BF16)", xlabel="kernel (ladder order)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")
    return save(fig, suite, f"BF16 tensor-core GEMM ladder at {n}x{n}x{n}", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
