#!/usr/bin/env python3
"""GEMM: GFLOP/s against size for square shapes (m = n = k, log2 axis) per kernel, and % of cuBLAS."""
from gpubench.analysis.bounds import TENSOR_CORE_KERNELS
from plots.plotting import log2_axis, log_values_axis, note, nothing_to_plot, parse_args, plt, save

PROG = "gemm"
KERNELS = ("naive", "coalesced", "smem", "smem_conflicted", "smem_padded", "cublas")  # legend order


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    recs = [r for r in suite.ok("gemm") if r.fields.get("kernel") not in TENSOR_CORE_KERNELS]  # FP32 only
    square = [r for r in recs if r.fields.get("m") == r.fields.get("n") == r.fields.get("k") is not None]
    if not square:
        return nothing_to_plot(PROG, suite, "square gemm/*/m:N/n:N/k:N")
    if len(square) < len(recs):
        note(PROG, f"{len(recs) - len(square)} non-square gemm benchmarks not plotted")
    found = {r.fields["kernel"] for r in square}
    kernels = [k for k in KERNELS if k in found] + sorted(found - set(KERNELS))
    cublas = {r.fields["m"]: r.get("flops_per_second") for r in square if r.fields["kernel"] == "cublas"}
    if not cublas:
        note(PROG, "no gemm/cublas benchmarks; the % of cuBLAS panel is left out")

    fig, axes = plt.subplots(1, 2 if cublas else 1, figsize=(12 if cublas else 6.5, 4.8), squeeze=False)
    sizes = {r.fields["m"] for r in square}
    for i, kernel in enumerate(kernels):
        pts = sorted((r for r in square if r.fields["kernel"] == kernel), key=lambda r: r.fields["m"])
        n = [r.fields["m"] for r in pts]
        gflops = [r.get("flops_per_second") / 1e9 for r in pts]
        style = dict(color=f"C{i}", marker="o", ms=4, label=kernel, lw=2.5 if kernel == "cublas" else 1.5)
        axes[0][0].plot(n, gflops, **style)
        if cublas and kernel != "cublas":
            both = [(s, g * 1e9 / cublas[s] * 100) for s, g in zip(n, gflops) if s in cublas]
            axes[0][1].plot([s for s, _ in both], [p for _, p in both], **style)
    ax = axes[0][0]
    log2_axis(ax, sizes)
    log_values_axis(ax)
    ax.set(title="Throughput", xlabel="matrix size N (M = N = K)", ylabel="GFLOP/s")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    if cublas:
        ax = axes[0][1]
        log2_axis(ax, sizes)
        ax.axhline(100, color="grey", ls=":", label="cuBLAS = 100%")
        ax.set_ylim(bottom=0)
        ax.set(title="Fraction of cuBLAS at the same size", xlabel="matrix size N (M = N = K)",
               ylabel="% of cuBLAS GFLOP/s")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize="small")
    return save(fig, suite, "GEMM kernels against cuBLAS", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
