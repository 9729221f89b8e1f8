"""Tensor-core limits and the BF16 GEMM ladder, shared by plots/tensor.py, plots/tc_ladder.py and report.py.

Peaks per clock per SM are the model's (`peak_flops_per_clock_per_sm` in model.json, wgmma) where it gives one,
else the Hopper dense figures of docs/families/tensor.md (NVIDIA's H100 SXM datasheet / (132 SMs × 1830 MHz),
model::hopper_dense_per_clock_per_sm); on a GPU other than compute capability 9.0 there is no documented figure,
so no peak.
"""
from gpubench.analysis import bounds, limits, predict

HOPPER_DENSE_PER_CLOCK_PER_SM = {"fp16": 4096, "bf16": 4096, "tf32": 2048, "fp8_e4m3": 8192, "int8": 8192}
FP32_FMA_PER_CLOCK_PER_SM = 256  # 128 FP32 lanes × 2 FLOP (an FMA): the roof ceiling/fma measures
L2_FLOP_PER_BYTE = 64  # a 128×128 block tile reads 1/64 byte per FLOP from L2 (docs/families/tc-gemm.md)
LADDER_SHAPES = (4096, 8192)  # headline first


def is_hopper(suite):
    return str(suite.context.get("compute_capability", "")) == "9.0"


def peak_per_clock_per_sm(suite, rec):
    """The dense peak FLOP (int8: ops) per clock per SM of a tensor benchmark's data type, or None."""
    if rec.has("peak_flops_per_clock_per_sm"):
        return rec.get("peak_flops_per_clock_per_sm")
    return HOPPER_DENSE_PER_CLOCK_PER_SM.get(rec.fields.get("dtype")) if is_hopper(suite) else None


def per_clock_per_sm(suite, flops_per_second):
    """A FLOP/s figure per clock per SM at the run's observed clock, or None without clock and SMs."""
    clk = limits.clock_and_sms(suite)
    return flops_per_second / (clk[0] * clk[1]) if clk and flops_per_second else None


def fp32_roof_per_clock_per_sm(suite):
    """ceiling/fma of the run per clock per SM (measured), or None when the run lacks it."""
    return per_clock_per_sm(suite, suite.value("ceiling/fma", "flops_per_second"))


def bf16_peak(suite):
    """(FLOP/s, formula) of the BF16 dense peak at the run's clock on Hopper, or (None, why)."""
    clk = limits.clock_and_sms(suite)
    if not (clk and is_hopper(suite)):
        return None, "no documented BF16 peak for this GPU (docs/families/tc-gemm.md gives Hopper's)"
    per = HOPPER_DENSE_PER_CLOCK_PER_SM["bf16"]
    return clk[0] * clk[1] * per, f"{clk[2]} × {per} FLOP/clk/SM"


def l2_tile_bound(suite):
    """FLOP/s the 128×128 block tile allows at the run's ceiling/read/l2 (1/64 byte per FLOP), or None."""
    l2 = suite.value("ceiling/read/l2", "bytes_per_second")
    return l2 * L2_FLOP_PER_BYTE if l2 else None


def ladder(suite):
    """(n, [(kernel, FLOP/s)] in ladder order, cuBLAS BF16 FLOP/s or None) at the first of LADDER_SHAPES cubed
    the run has tensor-core GEMM results at; (None, [], None) when it has none."""
    for n in LADDER_SHAPES:
        tail = f"/m:{n}/n:{n}/k:{n}"
        found = {r.fields["kernel"]: r.get("flops_per_second") for r in suite.ok("gemm")
                 if r.fields.get("kernel") in bounds.TENSOR_CORE_KERNELS and r.name.endswith(tail)}
        if found:
            steps = [(k, found[k]) for k in bounds.TENSOR_CORE_KERNELS if k in found and k != "cublas_bf16"]
            return n, steps, found.get("cublas_bf16")
    return None, [], None


def predicted(suite, n):
    """({kernel: (measured s, predicted s or None, binding or None)} at n^3, missing unit costs): the time model's
    rows (gpubench/analysis/predict.py, the one place its rules live) for the ladder's kernels."""
    if n is None:
        return {}, []
    rows, missing = predict.predictions(suite)
    tail = f"/m:{n}/n:{n}/k:{n}"
    out = {k: (row["measured_s"], row["predicted_s"], row["binding"]) for k in bounds.TENSOR_CORE_MODELLED
           if (row := rows.get(f"gemm/{k}{tail}"))}
    return out, missing
