#!/usr/bin/env python3
"""GEMM ladder: measured GFLOP/s of each GEMM kernel at the headline shape (4096^3 when the run has it,
else 4092^3) beside the GFLOP/s its binding bound allows (gpubench/analysis/bounds.py: model counts x unit costs of the
same run), the binding resource written on each bar, the time model's predicted GFLOP/s (gpubench/analysis/predict.py)
as a marker with predicted / measured and the predicted binding resource, and cuBLAS as a reference line."""
from gpubench.analysis import bounds
from gpubench.analysis.ladder import predicted, steps
from plots.plotting import nothing_to_plot, parse_args, plt, save

PROG = "ladder"
def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    n, ladder, cublas = steps(suite)
    if not ladder:
        return nothing_to_plot(PROG, suite, "gemm/<kernel>/m:4096/n:4096/k:4096 (or 4092)")
    fig, ax = plt.subplots(figsize=(max(8.0, 1.1 * len(ladder) + 3), 5.5))
    xs = range(len(ladder))
    w = 0.38
    measured = [m / 1e9 for _, m, _, _ in ladder]
    ax.bar([x - w / 2 for x in xs], measured, w, color="C0", label="measured")
    with_bound = [(x, b / 1e9, res) for x, (_, _, b, res) in zip(xs, ladder) if b]
    if with_bound:
        ax.bar([x + w / 2 for x, _, _ in with_bound], [b for _, b, _ in with_bound], w, color="C1", alpha=0.55,
               label="bound (binding resource)")
        for x, b, res in with_bound:
            ax.text(x + w / 2, b, res, rotation=90, ha="center", va="bottom", fontsize="small")
    for x, m in zip(xs, measured):
        ax.text(x - w / 2, m, f"{m:.0f}", ha="center", va="bottom", fontsize="x-small")
    _, pred, _ = predicted(suite)
    flops = 2.0 * n ** 3
    marks = [(x, flops / pred[k][1] / 1e9, pred[k][1] / pred[k][0], pred[k][2])
             for x, (k, *_) in zip(xs, ladder) if k in pred and pred[k][1]]
    if marks:
        ax.plot([x - w / 2 for x, *_ in marks], [g for _, g, _, _ in marks], "kD", ms=6, label="predicted (time model)")
        for x, g, r, res in marks:
            ax.annotate(f"{r:.2f}x {res}", (x - w / 2, g), textcoords="offset points", xytext=(0, 6), rotation=90,
                        ha="center", va="bottom", fontsize="x-small")
    if cublas:
        ax.axhline(cublas / 1e9, color="k", ls="--", lw=1.2, label=f"cuBLAS {cublas / 1e12:.3g} TFLOP/s")
    peak = bounds.unit_costs(suite).get("ffma_per_s")
    if peak:
        ax.axhline(2 * peak / 1e9, color="grey", ls=":", lw=1, label=f"FP32 FMA ceiling {2 * peak / 1e12:.3g} TFLOP/s")
    ax.set_xticks(list(xs), [k for k, *_ in ladder], rotation=20)
    top = max(measured + [b for _, b, _ in with_bound] + [g for _, g, _, _ in marks]
              + [cublas / 1e9 if cublas else 0, 2 * peak / 1e9 if peak else 0])
    ax.set_ylim(0, top * 1.3)
    ax.set(ylabel="GFLOP/s", xlabel="kernel (ladder order)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")
    return save(fig, suite, f"GEMM ladder at {n}x{n}x{n}: measured against the binding bound and the prediction", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
