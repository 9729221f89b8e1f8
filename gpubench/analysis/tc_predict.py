"""Time predictions for the BF16 tensor-core ladder (kernels 9-15, issue 30), from the counting model's counts
(model/tc_gemm_model.hpp through gemm/bench_tc_gemm.cu: model.json) and unit costs measured by the micro families
of the same run. Nothing is fitted to the GEMM kernels (docs/families/tc-gemm.md, "The time model").

  f = the GEMM record's own SM clock (sm_clock_mhz), S = SMs (context.sm_count)
  tensor  = FLOPs executed / (R x S x f), R: tensor/mma/bf16/throughput/data:random (WMMA and mma.sync: both run
            HMMA m16n8k16) or tensor/wgmma/bf16/ss/n:N/data:random (N: the kernel's wgmma n), FLOP/clock/SM;
  shared  = (ldmatrix + WMMA fragment + staging + tile-fill wavefronts) / (W x S x f), W = wavefronts per clock
            of smem_banks/ldmatrix/x:4/trans:0/layout:swizzled (the model's wavefronts per instruction over the
            measured cycles per instruction); wgmma's operand reads are inside R (the ss micro reads shared memory);
  copy    = L2 -> SM bytes / B: one-stage kernels (a block copies a tile, waits, computes) at the rate of the micro
            that does the same, async/ld_st/l2/bandwidth/tile:16384 (ld.global + st.shared) or
            async/cp_async/l2/bandwidth/bytes:16/stages:1; pipelined kernels keep several tiles in flight and
            reach the L2 roof, ceiling/read/l2; TMA multicast bytes (delivered into each block) at that roof
            scaled by what delivering by multicast costs against unicast in the cluster micro, which copies the
            same tiles both ways: x U / M, U and M async/tma/l2/bandwidth/kind:{unicast,multicast}/cluster_size:2
            (an SM receives every byte of its tiles either way; multicast saves L2 reads, not SM intake);
            pipelined TMA unicast kernels (TMA bytes, no multicast) whose loop, shape, tile (n), stages, blocks per
            SM, threads and warp specialization the GEMM-tile stream copies, TMA bytes at that stream's rate
            instead of the roof: async/tma/l2/bandwidth/kind:gemm_tiles/m:M/n:N/k:K bytes_per_second, kernel 12's
            own TMA loop with the wgmma left out (gemm/12_tma_tiles.cuh): neighbouring blocks' concurrent requests
            for the same tile merge before the L2 slices, so their tiles arrive faster than ceiling/read/l2 (ncu,
            kernel 12 at 4096^3: 52.4 M L2 sectors for 67.1 M delivered). A measured copy, not a fit: the stream
            never runs the kernel's compute. The stream runs the kernel's grid, so its time includes the same tail
            as t below: its rate x tail is the rate while every slot is busy, the one main's copy takes. A run
            without the stream at the kernel's key keeps the roof for it
            (stderr says so for kernel 12's loop, the one the stream runs: tile_stream_fallbacks);
  HBM     = compulsory reads / ceiling/read/hbm + C / ceiling/write/hbm (overlaps everything);
  epilogue= C bytes / ceiling/write/hbm, after the main loop (no tensor work of that block in flight);
  compute = max(tensor, shared) for WMMA and wgmma; for the mma.sync kernels (10, 10a, 11, 11a: ldmatrix feeds
            mma.sync in the same warps) max(tensor, shared) + phi x min(tensor, shared), phi the overlap of the two
            pipes measured by tensor/mma_ldmatrix/bf16/ops:{mix,ldmatrix,mma}/warps:W at the kernel's resident warps W:
            phi = (T_mix - max(T_ldmatrix, T_mma)) / min(T_ldmatrix, T_mma) in [0, 1] (0: they overlap, 1: they add);
  overlap : pipelined: main = max(compute, copy); one stage (a block copies a tile, waits at a barrier, computes):
            main = copy + compute. (Tried and dropped, 2026-12-02: the mma.sync kernels' copies hiding under the
            other resident block's compute, max(compute, (copy + compute of a lone block) / b), predicted kernel
            10 at 0.58 of its measured time on an H200; copy + compute gives 1.10: docs/families/tc-gemm.md);
            the cp.async mma.sync kernels (11, 11a: the same warps issue the cp.async and the ldmatrix / mma.sync
            through one MIO / LSU path) instead: main = max(compute, copy) + phi_copy x min(compute, copy),
            phi_copy measured at the kernel's stages S and resident warps W by kernels 11 / 11a's own loop in
            tensor/mma_ldmatrix/bf16/ops:{copy,mix_copy}/stages:S/warps:W against ops:mix/warps:W:
            phi_copy = (T_mix_copy - max(T_mix, T_copy)) / min(T_mix, T_copy) in [0, 1]. A run without those
            benchmarks keeps the rule above for them (stderr says so). Kernels 9, 10, 10a (ld.global into
            registers, then st.shared) keep it too: their copies are synchronous loads the warps wait on, not
            the micro's cp.async mix, and the rule above already holds them in band;
  tail    = ceil(waves) / waves (waves: work units over resident slots, model_waves);
  t = max(main x tail, HBM) + epilogue.
"""
import math

LDSM = "smem_banks/ldmatrix/x:4/trans:0/layout:swizzled"
# ldmatrix + mma.sync in the mma.sync kernels' mix (micro/mma_ldmatrix.cuh): cycles_per_step of each kind at W warps.
MIX = "tensor/mma_ldmatrix/bf16/ops:{kind}/warps:{warps}"
MIX_KINDS = ("mix", "ldmatrix", "mma")
MIX_UNIT = MIX.format(kind="<mix|ldmatrix|mma>", warps="W") + " cycles_per_step (the mma.sync kernels' overlap)"
# Kernels 11 / 11a's cp.async loop with and without the compute (micro/mma_ldmatrix.cuh): cycles_per_step at S, W.
COPY = "tensor/mma_ldmatrix/bf16/ops:{kind}/stages:{stages}/warps:{warps}"
COPY_KINDS = ("copy", "mix_copy")
COPY_UNIT = COPY.format(kind="<copy|mix_copy>", stages="S", warps="W") + " cycles_per_step (the cp.async kernels' copy overlap)"
# Kernel 12's TMA loop streaming a GEMM's tiles without the wgmma (gemm/12_tma_tiles.cuh): bytes_per_second per key.
TILES = "async/tma/l2/bandwidth/kind:gemm_tiles/"
TILES_UNIT = TILES + "m:M/n:N/k:K bytes_per_second (the TMA unicast kernels' tile stream)"
# What ties a stream to a kernel: its counter (the stream's) and the kernel's model count, in key order after m, n, k.
# The tile's n is the wgmma's: in kernels 12-15 a consumer warpgroup's wgmma spans the block's whole N tile.
TILES_KEY = (("tile_n", "model_wgmma_n"), ("stages", "model_stages"), ("blocks_per_sm", "model_blocks_per_sm"),
             ("threads_per_block", "model_threads_per_block"), ("warp_specialized", "model_warp_specialized"))
# The unit costs read as one counter of one benchmark: unit -> (benchmark, counter).
SIMPLE = {"mma_flops_per_clk": ("tensor/mma/bf16/throughput/data:random", "flops_per_clock_per_sm"),
          "ld_global_bytes_per_s": ("async/ld_st/l2/bandwidth/tile:16384", "bytes_per_second"),
          "cp_async_bytes_per_s": ("async/cp_async/l2/bandwidth/bytes:16/stages:1", "bytes_per_second"),
          "multicast_bytes_per_s": ("async/tma/l2/bandwidth/kind:multicast/cluster_size:2", "bytes_per_second"),
          "unicast_bytes_per_s": ("async/tma/l2/bandwidth/kind:unicast/cluster_size:2", "bytes_per_second"),
          "l2_bytes_per_s": ("ceiling/read/l2", "bytes_per_second"),
          "hbm_read_bytes_per_s": ("ceiling/read/hbm", "bytes_per_second"),
          "hbm_write_bytes_per_s": ("ceiling/write/hbm", "bytes_per_second")}
# Each unit cost and what measures it, in the order a run's missing ones are named.
UNITS = {"mma_flops_per_clk": " ".join(SIMPLE["mma_flops_per_clk"]),
         "wgmma_flops_per_clk": "tensor/wgmma/bf16/ss/n:N/data:random flops_per_clock_per_sm (per n)",
         "wavefronts_per_clk": f"{LDSM}: wavefronts_per_instruction (model) / cycles_per_instruction",
         **{k: " ".join(v) for k, v in SIMPLE.items() if k != "mma_flops_per_clk"}}
# The counts a prediction needs (gemm/bench_tc_gemm.cu exports them).
COUNTS = ("model_flops", "model_wgmma_n", "model_ldmatrix_wavefronts", "model_wmma_load_wavefronts",
          "model_wmma_stage_wavefronts", "model_smem_fill_wavefronts", "model_ld_global_bytes", "model_cp_async_bytes",
          "model_tma_bytes", "model_tma_multicast_bytes", "model_dram_bytes", "model_c_store_bytes", "model_stages",
          "model_waves", "model_mma_m16n8k16", "model_blocks_per_sm", "model_threads_per_block")


def unit_costs(suite):
    """(units, missing): the measured unit costs, and the benchmarks the run lacks."""
    u = {k: suite.value(name, counter) for k, (name, counter) in SIMPLE.items()}
    u = {k: v for k, v in u.items() if v}
    u["wgmma_flops_per_clk"] = {int(r.fields["n"]): r.get("flops_per_clock_per_sm")
                                for r in suite.ok("tensor") if r.name.startswith("tensor/wgmma/bf16/ss/")
                                and r.fields.get("data") == "random" and r.get("flops_per_clock_per_sm") > 0}
    r = suite.by_name.get(LDSM)
    cycles = suite.value(LDSM, "cycles_per_instruction")
    if r is not None and cycles and r.has("wavefronts_per_instruction"):
        u["wavefronts_per_clk"] = r.get("wavefronts_per_instruction") / cycles
    u["mix_cycles"] = mix_cycles(suite)
    u["copy_cycles"] = copy_cycles(suite)
    u["tile_streams"] = tile_streams(suite)
    missing = [UNITS[k] for k in UNITS if not u.get(k)]
    return u, missing


def mix_cycles(suite):
    """{warps per SM: {kind: cycles_per_step}} of the ldmatrix + mma.sync micro, warps with all three kinds only."""
    out = {}
    for r in suite.ok("tensor"):
        if r.name.startswith("tensor/mma_ldmatrix/bf16/") and "stages" not in r.fields and r.get("cycles_per_step") > 0:
            out.setdefault(int(r.fields["warps"]), {})[r.fields["ops"]] = r.get("cycles_per_step")
    return {w: c for w, c in out.items() if all(k in c for k in MIX_KINDS)}


def copy_cycles(suite):
    """{stages: {warps per SM: {kind: cycles_per_step}}} of the copy kinds, (stages, warps) with both kinds only."""
    out = {}
    for r in suite.ok("tensor"):
        if r.name.startswith("tensor/mma_ldmatrix/bf16/") and "stages" in r.fields and r.get("cycles_per_step") > 0:
            out.setdefault(int(r.fields["stages"]), {}).setdefault(int(r.fields["warps"]), {})[r.fields["ops"]] = \
                r.get("cycles_per_step")
    out = {s: {w: c for w, c in ws.items() if all(k in c for k in COPY_KINDS)} for s, ws in out.items()}
    return {s: ws for s, ws in out.items() if ws}


def tile_streams(suite):
    """{(m, n, k, tile_n, stages, blocks_per_sm, threads_per_block, warp_specialized): bytes_per_second} of the
    GEMM-tile stream micro."""
    out = {}
    for r in suite.ok("async"):
        if r.name.startswith(TILES) and r.get("bytes_per_second") > 0 and all(r.has(k) for k, _ in TILES_KEY):
            shape = tuple(int(r.fields[d]) for d in ("m", "n", "k"))
            out[shape + tuple(int(r.get(k)) for k, _ in TILES_KEY)] = r.get("bytes_per_second")
    return out


def tma_unicast_pipelined(rec):
    """A kernel whose copies are pipelined TMA unicast loads alone (kernels 12-14)."""
    return rec.get("model_tma_bytes") > 0 and not rec.get("model_tma_multicast_bytes") > 0 and rec.get("model_stages") > 1


def tile_stream_rate(rec, u):
    """Bytes per second at which the GEMM-tile stream delivers this kernel's tiles (its shape and TILES_KEY match),
    or None: not a pipelined TMA unicast kernel, or the run lacks the stream at its key."""
    if not tma_unicast_pipelined(rec):
        return None
    fields, counts = getattr(rec, "fields", {}), [rec.get(m) for _, m in TILES_KEY]
    if not all(d in fields for d in ("m", "n", "k")) or any(math.isnan(v) for v in counts):
        return None  # model.json from before model_warp_specialized: no key to match
    key = tuple(int(fields[d]) for d in ("m", "n", "k")) + tuple(int(v) for v in counts)
    return u.get("tile_streams", {}).get(key)


def tile_stream_fallbacks(recs, u):
    """The benchmarks of kernels running the loop the stream runs (TMA unicast, pipelined, not warp-specialized:
    kernel 12) whose TMA bytes stay at the L2 roof: the run lacks the stream at their key."""
    return [r.name for r in recs if tma_unicast_pipelined(r) and r.get("model_warp_specialized") == 0
            and tile_stream_rate(r, u) is None]


def lacks(rec, u):
    """The unit costs this record needs beyond unit_costs' common ones: the mix micro for an mma.sync kernel."""
    return [MIX_UNIT] if rec.get("model_mma_m16n8k16") > 0 and not u.get("mix_cycles") else []


def nearest(measured, warps):
    """The measured warps per SM nearest `warps` (by factor; the smaller on a tie)."""
    return min(sorted(measured), key=lambda w: abs(math.log(w / warps)))


def added_share(together, a, b):
    """How much of the shorter of two times (a, b) running them together (together) adds to the longer one's,
    clamped to [0, 1]: 0 when they overlap wholly, 1 when their times add (0 when the shorter is 0). The one form
    of every overlap factor of both time models (gpubench/analysis/predict.py's phi too)."""
    lo, hi = min(a, b), max(a, b)
    if lo <= 0:
        return 0.0
    return min(1.0, max(0.0, (together - hi) / lo))


def resident_warps(rec):
    """The warps a kernel keeps resident on an SM (at least one block's): the micros' W to match."""
    return rec.get("model_threads_per_block") / 32 * max(1.0, rec.get("model_blocks_per_sm"))


def overlap(c):
    """phi of one warps' {kind: cycles}: how much of the shorter pipe's time the mix adds to the longer one's."""
    return added_share(c["mix"], c["ldmatrix"], c["mma"])


def copy_overlap(mix, copy):
    """phi_copy of one (stages, warps): the mix kind's compute alone (T_mix), the copy loop alone (T_copy), both in
    the kernels' loop (T_mix_copy): how much of the shorter one's time the loop adds to the longer one's."""
    return added_share(copy["mix_copy"], mix, copy["copy"])


def copy_phi(rec, u):
    """phi_copy of a cp.async mma.sync kernel at its stages and resident warps (nearest measured warps that also
    have the mix kind), or None: not such a kernel, or the run lacks the copy kinds at its stages."""
    if not (rec.get("model_mma_m16n8k16") > 0 and rec.get("model_cp_async_bytes") > 0):
        return None
    at_stages = u.get("copy_cycles", {}).get(int(rec.get("model_stages")), {})
    both = {w for w in at_stages if w in u.get("mix_cycles", {})}
    if not both:
        return None
    w = nearest(both, resident_warps(rec))
    return copy_overlap(u["mix_cycles"][w]["mix"], at_stages[w])


def copy_fallbacks(recs, u):
    """The cp.async mma.sync kernels' benchmarks whose copy overlap falls back to the rule without phi_copy."""
    return [r.name for r in recs if r.get("model_mma_m16n8k16") > 0 and r.get("model_cp_async_bytes") > 0
            and copy_phi(r, u) is None]


def combine(tensor, shared, phi):
    """Tensor and shared-memory time of warps that issue both: the longer, plus phi of the shorter."""
    return max(tensor, shared) + phi * min(tensor, shared)


def wgmma_rate(rates, n):
    """FLOP/clock/SM of wgmma at n: the measured n, else the largest measured below it, else the smallest."""
    below = [m for m in rates if m <= n]
    return rates[max(below)] if below else rates[min(rates)]


def terms(rec, u, sm_count):
    """Seconds per resource of one record: tensor, shared memory, copy (L2 -> SM), HBM, epilogue."""
    c = rec.get
    clocks = sm_count * c("sm_clock_mhz") * 1e6  # SM clocks per second, whole GPU
    n = int(c("model_wgmma_n"))
    rate = wgmma_rate(u["wgmma_flops_per_clk"], n) if n else u["mma_flops_per_clk"]
    wavefronts = sum(c(k) for k in ("model_ldmatrix_wavefronts", "model_wmma_load_wavefronts",
                                    "model_wmma_stage_wavefronts", "model_smem_fill_wavefronts"))
    one_stage = c("model_stages") <= 1
    if one_stage:
        copy = c("model_ld_global_bytes") / u["ld_global_bytes_per_s"] + c("model_cp_async_bytes") / u["cp_async_bytes_per_s"]
    else:
        # Merged requests: the kernel's own loop, copy only. The stream ran the kernel's grid at its residency, so its
        # time holds the same last-wave tail that t applies to main: its rate while every slot is busy is x tail.
        stream = tile_stream_rate(rec, u)
        tma_rate = stream * tail(c("model_waves")) if stream else u["l2_bytes_per_s"]
        copy = (c("model_ld_global_bytes") + c("model_cp_async_bytes")) / u["l2_bytes_per_s"] + c("model_tma_bytes") / tma_rate
    multicast_cost = u["unicast_bytes_per_s"] / u["multicast_bytes_per_s"]  # per delivered byte, unicast = 1
    copy += c("model_tma_multicast_bytes") * multicast_cost / u["l2_bytes_per_s"]
    c_bytes = c("model_c_store_bytes")
    return {"tensor": c("model_flops") / (rate * clocks),
            "shared memory": wavefronts / (u["wavefronts_per_clk"] * clocks),
            "copy (L2 -> SM)": copy,
            "HBM": (c("model_dram_bytes") - c_bytes) / u["hbm_read_bytes_per_s"] + c_bytes / u["hbm_write_bytes_per_s"],
            "epilogue (C stores)": c_bytes / u["hbm_write_bytes_per_s"]}, one_stage


def tail(waves):
    """The last wave's share: a grid of 3.9 waves takes as long as 4."""
    return math.ceil(waves - 1e-9) / waves if waves > 0 else 1.0


def mma_sync_compute(rec, t, mix):
    """(compute, phi) of an mma.sync kernel: tensor and shared memory combined by the micro's phi at the kernel's
    resident warps W."""
    phi = overlap(mix[nearest(mix, resident_warps(rec))])
    return combine(t["tensor"], t["shared memory"], phi), phi


def main_loop(rec, t, u, one_stage):
    """(main-loop seconds, extra parts): the overlap rule (module docstring)."""
    copy = t["copy (L2 -> SM)"]
    extra = {}
    compute = max(t["tensor"], t["shared memory"])
    if rec.get("model_mma_m16n8k16") > 0:
        compute, phi = mma_sync_compute(rec, t, u["mix_cycles"])
        extra = {"ldmatrix/mma overlap": phi, "compute": compute}
    if (phi_copy := copy_phi(rec, u)) is not None:
        extra["copy/compute overlap"] = phi_copy
        return combine(compute, copy, phi_copy), extra
    return (copy + compute if one_stage else max(compute, copy)), extra


def predict(rec, u, sm_count):
    """(seconds, binding, parts) of one tensor-core GEMM record with its model counts."""
    t, one_stage = terms(rec, u, sm_count)
    main, extra = main_loop(rec, t, u, one_stage)
    parts = dict(t, **extra, tail=tail(rec.get("model_waves")), one_stage=1.0 if one_stage else 0.0)
    seconds = max(main * parts["tail"], t["HBM"]) + t["epilogue (C stores)"]
    binding = max(("tensor", "shared memory", "copy (L2 -> SM)", "HBM"), key=lambda k: t[k])
    return seconds, binding, parts
