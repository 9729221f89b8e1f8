"""Synthetic records for the families no GPU has run yet (async, dsm, tensor and the BF16
tensor-core GEMM ladder; smem_banks/ldmatrix is not here): the planned names (`gpubench --plan-for harness/devices/h200.json`) with
counters of the size the family docs predict for an H200 (132 SMs, 1980 MHz). They are NOT measurements: they
stand in until a recorded run is cut into data/h200_cut.json, so that every registered family has benchmarks,
pictures and report sections in the tests. Same tuple shape as synth.benchmarks().
"""
SMS, CLOCK = 132, 1.98e9  # the recorded run's context (h200_cut.json)
L2_BYTES = 62914560
LAUNCH_BYTES = 4 * L2_BYTES  # an async bandwidth launch moves 4 x L2 (docs/families/async-copy.md)


def _rate(bpc, sms=SMS):
    """bytes (or FLOP) per second of a figure per clock per SM."""
    return bpc * sms * CLOCK


def _entry(name, seconds, fixed=None, rates=None):
    counters = {k: (float(v), False) for k, v in (fixed or {}).items()}
    counters.update({k: (float(v), True) for k, v in (rates or {}).items()})
    return (name, "us", seconds, counters)


# async bandwidth: configuration -> (L2 B/clk/SM, HBM B/clk/SM, tile bytes, stages)
ASYNC_BW = {
    "ld_st/{}/bandwidth/tile:16384": (30.0, 15.1, 16384, 1),
    "cp_async/{}/bandwidth/bytes:4/stages:1": (12.5, 9.0, 16384, 1),
    "cp_async/{}/bandwidth/bytes:8/stages:2": (27.0, 14.8, 16384, 2),
    "cp_async/{}/bandwidth/bytes:16/stages:4": (39.5, 17.1, 16384, 4),
    "tma/{}/bandwidth/kind:bulk/copy:1024": (31.0, 15.9, 16384, 4),
    "tma/{}/bandwidth/kind:bulk/copy:16384": (40.2, 17.3, 16384, 4),
    "tma/{}/bandwidth/kind:tensor/elem:2/box:64x64/swizzle:none": (37.8, 17.0, 8192, 4),
    "tma/{}/bandwidth/kind:tensor/elem:2/box:64x64/swizzle:128": (38.6, 17.2, 8192, 4),
    "tma/{}/bandwidth/kind:tensor/elem:4/box:32x256/swizzle:128": (40.7, 17.4, 32768, 2),
}
# async latency: configuration -> (L2 cycles, bytes per copy); HBM adds ASYNC_HBM_EXTRA
ASYNC_LAT = {
    "ld_st/{}/latency/bytes:16": (590, 16), "ld_st/{}/latency/bytes:4096": (760, 4096),
    "cp_async/{}/latency/bytes:16": (640, 16),
    "tma/{}/latency/kind:bulk/bytes:16": (700, 16), "tma/{}/latency/kind:bulk/bytes:4096": (840, 4096),
    "tma/{}/latency/kind:bulk/bytes:16384": (1290, 16384),
    "tma/{}/latency/kind:tensor/elem:2/box:64x64/swizzle:128": (1050, 8192),
}
ASYNC_HBM_EXTRA = 480
# TMA multicast/unicast: cluster size -> (SMs used, multicast delivered B/clk/SM, unicast B/clk/SM)
MULTICAST = {2: (132, 61.0, 40.1), 4: (128, 79.5, 39.8), 8: (120, 88.2, 38.0)}
DSM_LATENCY = {"own_shared": (29, 7, 7), "own_cluster": (33, 7, 7), "remote": (196, 7, 9)}  # cycles, reader, owner
DSM_BW = {1: (125.0, 121.0), 2: (61.0, 70.5), 4: (58.2, 67.9), 8: (55.0, 64.1), 16: (49.8, 59.6)}  # read, write
DSM_SMS = {1: 132, 2: 132, 4: 128, 8: 120, 16: 112}
DSM_BARRIER = {1: 26.0, 2: 188.0, 4: 207.0, 8: 251.0, 16: 334.0}
# tensor: mma.sync dtype -> (zero, random FLOP/clk/SM, latency cycles); wgmma form -> {N: (zero, random)}
MMA = {"fp16": (2660, 2510, 33), "bf16": (2655, 2500, 33), "tf32": (1330, 1262, 34), "int8": (5310, 5080, 30)}
WGMMA = {"bf16/ss": {64: (3620, 3330), 128: (3880, 3560), 256: (3940, 3610)},
         "bf16/rs": {64: (3790, 3470), 256: (3950, 3620)},
         "fp8_e4m3/ss": {64: (7050, 6400), 256: (7860, 7100)}}
# BF16 ladder: kernel -> TFLOP/s at 4096^3 (8192^3: x1.05; 16384x200x4096: x0.4)
TC_GEMM = {"cublas_bf16": 702.0, "wmma": 246.0, "mma_swizzled": 381.0, "mma_conflicted": 79.0, "cp_async": 452.0,
           "cp_async_1stage": 298.0, "wgmma_tma": 517.0}
TC_SHAPES = {(4096, 4096, 4096): 1.0, (8192, 8192, 8192): 1.05, (16384, 200, 4096): 0.4}


def _async():
    out = []
    for cfg, (l2, hbm, tile, stages) in ASYNC_BW.items():
        for level, bpc, ws in (("l2", l2, L2_BYTES // 8), ("hbm", hbm, 4 * L2_BYTES)):
            out.append(_entry(f"async/{cfg.format(level)}", LAUNCH_BYTES / _rate(bpc),
                              dict(working_set_bytes=ws, tile_bytes=tile, stages=stages, blocks_per_sm=4),
                              dict(bytes_per_second=_rate(bpc), bytes_per_clock_per_sm=bpc)))
    for cfg, (cycles, size) in ASYNC_LAT.items():
        for level, extra, ws in (("l2", 0, 1 << 20), ("hbm", ASYNC_HBM_EXTRA, 4 * L2_BYTES)):
            out.append(_entry(f"async/{cfg.format(level)}", 32 * (cycles + extra) / CLOCK + 5e-6,
                              dict(cycles=cycles + extra, cycles_min=0.9 * (cycles + extra), bytes=size,
                                   working_set_bytes=ws)))
    for c, (sms, multi, uni) in MULTICAST.items():
        for kind, bpc in (("multicast", multi), ("unicast", uni)):
            delivered = _rate(bpc, sms)
            out.append(_entry(f"async/tma/l2/bandwidth/kind:{kind}/cluster_size:{c}", sms * 1024 * 16384 / delivered,
                              dict(active_clusters=sms // c, sms_used=sms, sm_clock_mhz=1980),
                              dict(bytes_per_second=delivered, bytes_per_clock_per_sm=bpc,
                                   l2_read_bytes_per_second=delivered / (c if kind == "multicast" else 1))))
    return out


def _dsm():
    out = [_entry(f"dsm/latency/target:{t}", 8192 * cyc / CLOCK + 3e-6, dict(cycles=cyc, reader_sm=r, owner_sm=o))
           for t, (cyc, r, o) in DSM_LATENCY.items()]
    for c, (read, write) in DSM_BW.items():
        sms = DSM_SMS[c]
        for op, bpc in (("read", read), ("write", write)):
            out.append(_entry(f"dsm/bandwidth/{op}/cluster_size:{c}", sms * 256 * 65536 / _rate(bpc, sms),
                              dict(active_clusters=sms // c, sms_used=sms, sm_clock_mhz=1980),
                              dict(bytes_per_second=_rate(bpc, sms), bytes_per_clock_per_sm=bpc)))
    for c, cyc in DSM_BARRIER.items():
        out.append(_entry(f"dsm/barrier/cluster_sync/cluster_size:{c}", 4096 * cyc / CLOCK,
                          dict(cycles_per_barrier=cyc, active_clusters=DSM_SMS[c] // c, sm_clock_mhz=1980)))
    out.append(_entry("dsm/barrier/syncthreads/cluster_size:1", 4096 * 21.0 / CLOCK,
                      dict(cycles_per_barrier=21.0, active_clusters=132, sm_clock_mhz=1980)))
    return out


def _flops(name, fpc, clock_mhz):
    # every clock at the run's 1980 MHz: compare.py calls a benchmark whose sm_clock_mhz is >1 % under the run's
    # "off-clock" (ambiguous), which the noise-only comparisons of test_compare.py must not see
    rate = fpc * SMS * clock_mhz * 1e6
    return _entry(name, 2.0 ** 33 * SMS / rate, dict(sm_clock_mhz=clock_mhz),
                  dict(flops_per_second=rate, flops_per_clock_per_sm=fpc))


def _tensor():
    out = []
    for dtype, (zero, rand, lat) in MMA.items():
        out += [_flops(f"tensor/mma/{dtype}/throughput/data:zero", zero, 1980),
                _flops(f"tensor/mma/{dtype}/throughput/data:random", rand, 1980),
                _entry(f"tensor/mma/{dtype}/latency", 4096 * lat / CLOCK, dict(cycles=lat))]
    for form, by_n in WGMMA.items():
        for n, (zero, rand) in by_n.items():
            out += [_flops(f"tensor/wgmma/{form}/n:{n}/data:zero", zero, 1980),
                    _flops(f"tensor/wgmma/{form}/n:{n}/data:random", rand, 1980)]
    return out


def _tc_gemm():
    out = []
    for (m, n, k), scale in TC_SHAPES.items():
        for kernel, tflops in TC_GEMM.items():
            rate = tflops * scale * 1e12
            ours = {} if kernel == "cublas_bf16" else dict(regs_per_thread=128, blocks_per_sm=2, threads_per_block=256)
            out.append(_entry(f"gemm/{kernel}/m:{m}/n:{n}/k:{k}", 2.0 * m * n * k / rate,
                              dict(max_rel_err=2.4e-6, tolerance=2 * k * 2 ** -23, **ours), dict(flops_per_second=rate)))
    return out


def benchmarks():
    return _async() + _dsm() + _tensor() + _tc_gemm()
