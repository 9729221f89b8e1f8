#!/usr/bin/env python3
"""Roofline: the roofs measured by the suite (FP32 FMA; HBM, L2 and L1 from the ceiling family's read roofs,
or the coalescing sweeps in older runs; shared-memory bandwidth) with each
GEMM kernel at 4092^3 placed once per level, at its arithmetic intensity against that level's bytes
(from the counting model), and at its measured GFLOP/s."""
from gpubench.analysis.bounds import KERNELS, unit_costs
from plots.plotting import nothing_to_plot, parse_args, plt, save

PROG = "roofline"
SHAPE = "m:4092/n:4092/k:4092"
# level -> (roof in bytes/s from the unit costs, model bytes of a GEMM record, marker)
LEVELS = {
    "HBM": (lambda u: u.get("hbm_bytes_per_s"), lambda r: r.get("model_dram_bytes"), "o"),
    "L2": (lambda u: u.get("l2_bytes_per_s"), lambda r: r.get("model_l2_read_sectors") * 32, "s"),
    "L1": (lambda u: u.get("l1_bytes_per_s"), lambda r: r.get("model_ld_sectors") * 32, "^"),
    "shared": (lambda u: u.get("smem_wavefronts_per_s", 0) * 128 or None,
               lambda r: (r.get("model_lds_wavefronts") + r.get("model_sts_wavefronts")) * 128, "D"),
}


def main(argv=None):
    suite, out = parse_args(PROG, __doc__, argv)
    gemms = {r.fields["kernel"]: r for r in suite.ok("gemm") if r.name.endswith(SHAPE)}
    units = unit_costs(suite)
    peak = units.get("ffma_per_s", 0) * 2
    if not gemms or not peak:
        return nothing_to_plot(PROG, suite, f"gemm/*/{SHAPE} or ceiling/fma")
    fig, ax = plt.subplots(figsize=(8.5, 6))
    xs = [2.0 ** e for e in range(-6, 13)]
    for i, (level, (roof, _, _)) in enumerate(LEVELS.items()):
        bw = roof(units)
        if bw:
            ax.plot(xs, [min(peak, bw * x) / 1e9 for x in xs], color=f"C{i}", lw=1.5,
                    label=f"{level} roof {bw / 1e12:.3g} TB/s")
    ax.axhline(peak / 1e9, color="k", lw=1, ls=":", label=f"FP32 FMA {peak / 1e12:.3g} TFLOP/s")
    flops = 2.0 * 4092 ** 3
    for j, name in enumerate(KERNELS + ("cublas",)):
        r = gemms.get(name)
        if not r:
            continue
        y = r.get("flops_per_second") / 1e9
        for i, (level, (_, nbytes, marker)) in enumerate(LEVELS.items()):
            b = nbytes(r) if name != "cublas" else (4.0 * 3 * 4092 ** 2 if level == "HBM" else float("nan"))
            if b == b and b > 0:
                ax.scatter(flops / b, y, marker=marker, color=plt.cm.tab20(j % 20), edgecolor="k", zorder=3, s=45,
                           label=name if i == 0 or name == "cublas" else None)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set(xlabel="arithmetic intensity (FLOP per byte moved at that level)", ylabel="GFLOP/s",
           xlim=(xs[0], xs[-1]))
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize="small", ncol=2, title="markers: o HBM, s L2, ^ L1, D shared", title_fontsize="small")
    return save(fig, suite, f"Roofline, GEMM at {SHAPE.replace('/', ' ')}", out, PROG)


if __name__ == "__main__":
    raise SystemExit(main())
