"""The GEMM ladder at the headline shape: each kernel's measured FLOP/s beside what its binding bound
allows (gpubench.analysis.bounds) and its predicted time (gpubench.analysis.predict), and cuBLAS: shared by
the ladder picture and the report."""
from gpubench.analysis import bounds
from gpubench.analysis import predict

SHAPES = (4096, 4092)  # headline first


def shape(n):
    return f"m:{n}/n:{n}/k:{n}"


def headline(suite):
    """(size, {kernel: record}) of the first headline shape the run has GEMM results at; (None, {}) if none."""
    for n in SHAPES:
        found = {r.fields["kernel"]: r for r in suite.ok("gemm") if r.name.endswith(shape(n))}
        if found:
            return n, found
    return None, {}


def steps(suite):
    """(size, [(kernel, measured FLOP/s, bound FLOP/s or None, binding resource or None)]) in ladder order,
    and cuBLAS's FLOP/s (or None)."""
    n, found = headline(suite)
    if not found:
        return None, [], None
    flops = 2.0 * n ** 3
    bound = {r.fields["kernel"]: (flops / b[binding], binding)
             for r, b, binding, _ in bounds.rows(suite) if r.name.endswith(shape(n)) and b[binding] > 0}
    out = [(k, found[k].get("flops_per_second"), *bound.get(k, (None, None)))
           for k in bounds.KERNELS if k in found]
    cublas = found["cublas"].get("flops_per_second") if "cublas" in found else None
    return n, out, cublas


def predicted(suite):
    """(size, {kernel: (measured s, predicted s or None, binding or None)}, missing unit costs) at the headline
    shape: gpubench.analysis.predict's rows, the one place its rules live."""
    n, found = headline(suite)
    if not found:
        return None, {}, []
    rows, missing = predict.predictions(suite)
    out = {k: (row["measured_s"], row["predicted_s"], row["binding"]) for k in bounds.KERNELS
           if k in found and (row := rows.get(found[k].name))}
    return n, out, missing
