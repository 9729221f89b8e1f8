"""gpubench/analysis/tc_predict.py: the tensor-core ladder's time rules on numbers computed by hand, and the committed
H200 run with the --ncu profile (results/h200/20261202T075839Z) predicted from its own micro families. That run
predates the model_* counts of model/tc_gemm_model.hpp; tests/python/data/tc_model_h200.json holds them, written by
`build/gpubench --plan-for harness/devices/h200.json --model_out FILE` (the tensor-core GEMM entries only), and the
test puts them beside a copy of the run."""
import gzip
import json
import math
import shutil

import pytest

from gpubench import suite_json
from gpubench.analysis import predict, tc_predict
from gpubench.analysis.bounds import TENSOR_CORE_MODELLED
from tests.python.conftest import RESULTS_DIR, ROOT, committed as committed_run

RUN = RESULTS_DIR / "h200" / "20261202T075839Z"
FIXTURE = ROOT / "tests" / "python" / "data" / "tc_model_h200.json"


class Rec:
    def __init__(self, **counts):
        self.counts = counts

    def get(self, k, default=math.nan):
        return self.counts.get(k, default)


def units():
    """A GPU of 1 SM at 1 MHz (1e6 clocks a second): mma.sync 1000 FLOP/clock, wgmma 2000 (n 128) and 4000 (n 256),
    1 wavefront a clock, copies at 1e6 B/s (ld.global), 2e6 (cp.async), 4e6 (L2 roof); the cluster micro's multicast at
    1e6 against unicast at 2e6 (a delivered multicast byte costs 2 unicast ones); HBM 1e6."""
    return {"mma_flops_per_clk": 1000, "wgmma_flops_per_clk": {128: 2000, 256: 4000}, "wavefronts_per_clk": 1.0,
            "ld_global_bytes_per_s": 1e6, "cp_async_bytes_per_s": 2e6, "l2_bytes_per_s": 4e6,
            "multicast_bytes_per_s": 1e6, "unicast_bytes_per_s": 2e6, "hbm_read_bytes_per_s": 1e6, "hbm_write_bytes_per_s": 1e6,
            "mix_cycles": MIX}


# The ldmatrix + mma.sync micro, cycles per step: at 16 warps phi = (30 - 25) / 20 = 0.25; at 8 warps phi =
# (20 - 16) / 12 = 1/3, and per warp-step a lone block's warps drive the tensor pipe (16 / 8) / (25 / 16) = 1.28
# times and the shared pipe (12 / 8) / (20 / 16) = 1.2 times slower than 16 warps.
MIX = {16: {"mix": 30, "ldmatrix": 20, "mma": 25}, 8: {"mix": 20, "ldmatrix": 12, "mma": 16}}


def rec(**over):
    c = dict(sm_clock_mhz=1, model_flops=4e9, model_wgmma_n=0, model_ldmatrix_wavefronts=3e6,
             model_wmma_load_wavefronts=0, model_wmma_stage_wavefronts=0, model_smem_fill_wavefronts=1e6,
             model_ld_global_bytes=2e6, model_cp_async_bytes=0, model_tma_bytes=0, model_tma_multicast_bytes=0,
             model_dram_bytes=3e5, model_c_store_bytes=1e5, model_stages=1, model_waves=2.0,
             model_mma_m16n8k16=0, model_blocks_per_sm=2, model_threads_per_block=256)
    c.update(over)
    return Rec(**c)


def test_one_stage_adds_copy_to_compute():
    """tensor 4e9 / 1000 / 1e6 = 4 s, shared 4e6 wavefronts = 4 s, copy 2e6 B / 1e6 = 2 s: main 2 + 4 = 6 s; HBM
    0.2 + 0.1 s; epilogue 0.1 s; whole waves: t = 6.1 s."""
    t, binding, parts = tc_predict.predict(rec(), units(), 1)
    assert parts["tensor"] == pytest.approx(4) and parts["shared memory"] == pytest.approx(4)
    assert parts["copy (L2 -> SM)"] == pytest.approx(2)
    assert parts["one_stage"] == 1.0 and parts["tail"] == 1.0
    assert t == pytest.approx(6.1)
    assert binding in ("tensor", "shared memory")


def test_pipelined_overlaps_and_tail():
    """3 stages of cp.async: copy 8e6 B at the L2 roof = 2 s hides under compute 4 s; 2.5 waves take 3: t = 4 x 1.2
    + 0.1 s."""
    t, _, parts = tc_predict.predict(rec(model_stages=3, model_ld_global_bytes=0, model_cp_async_bytes=8e6,
                                         model_waves=2.5), units(), 1)
    assert parts["copy (L2 -> SM)"] == pytest.approx(2)
    assert parts["tail"] == pytest.approx(1.2)
    assert t == pytest.approx(4 * 1.2 + 0.1)


def test_wgmma_rate_by_n_and_multicast():
    """wgmma n 256 at 4000 FLOP/clock: 1 s; TMA 4e6 B at the roof 1 s plus multicast 3e6 B delivered, each costing
    2 unicast bytes (the cluster micro's unicast / multicast), at the roof 1.5 s = 2.5 s: the copy binds."""
    t, binding, parts = tc_predict.predict(rec(model_stages=4, model_wgmma_n=256, model_ldmatrix_wavefronts=0,
                                               model_ld_global_bytes=0, model_tma_bytes=4e6,
                                               model_tma_multicast_bytes=3e6), units(), 1)
    assert parts["tensor"] == pytest.approx(1)
    assert parts["copy (L2 -> SM)"] == pytest.approx(2.5)
    assert binding == "copy (L2 -> SM)"
    assert t == pytest.approx(2.6)
    assert tc_predict.wgmma_rate({64: 1, 128: 2}, 256) == 2  # the largest measured n below
    assert tc_predict.wgmma_rate({128: 2}, 64) == 2


def mma_rec(**over):
    """An mma.sync kernel: tensor 4 s, shared memory 1e6 ldmatrix + 1e6 fill wavefronts = 2 s, 2 blocks of 8 warps."""
    return rec(model_mma_m16n8k16=1e6, model_ldmatrix_wavefronts=1e6, **over)


def test_overlap_factor():
    assert tc_predict.overlap({"mix": 30, "ldmatrix": 20, "mma": 25}) == pytest.approx(0.25)
    assert tc_predict.overlap({"mix": 24, "ldmatrix": 20, "mma": 25}) == 0.0  # faster than the slower pipe: overlap
    assert tc_predict.overlap({"mix": 50, "ldmatrix": 20, "mma": 25}) == 1.0  # slower than the sum: they add
    assert tc_predict.combine(4, 2, 0.25) == pytest.approx(4.5)
    assert tc_predict.combine(2, 4, 1.0) == pytest.approx(6)


def test_mma_sync_pipelined_compute_uses_the_micro_overlap():
    """3 stages, copy 8e6 B at the L2 roof = 2 s: main = max(4 + 0.25 x 2, 2) = 4.5 s (the old rule said 4);
    t = 4.5 + 0.1 s."""
    t, _, parts = tc_predict.predict(mma_rec(model_stages=3, model_ld_global_bytes=0, model_cp_async_bytes=8e6),
                                     units(), 1)
    assert parts["ldmatrix/mma overlap"] == pytest.approx(0.25)
    assert parts["compute"] == pytest.approx(4.5)
    assert t == pytest.approx(4.6)


def test_mma_sync_one_stage_adds_copy_and_compute():
    """One stage, copy 6e6 B / 1e6 = 6 s, 2 blocks of 8 warps (16 warps: phi 0.25, compute 4.5 s): the block
    copies, waits, computes: main = 6 + 4.5 s; t = 10.6 s (copies hiding under the other block's compute would
    give (6 + 5.92) / 2; measured kernel 10 says they do not)."""
    t, _, parts = tc_predict.predict(mma_rec(model_ld_global_bytes=6e6), units(), 1)
    assert parts["compute"] == pytest.approx(4.5)
    assert t == pytest.approx(6 + 4.5 + 0.1)


def test_mma_sync_one_block_per_sm_adds_copy_and_compute():
    """One resident block of 8 warps: nothing hides its copy; the micro at 8 warps for both: phi 1/3, compute
    4 + 2/3 s; main = 6 + 4.667 s."""
    t, _, parts = tc_predict.predict(mma_rec(model_ld_global_bytes=6e6, model_blocks_per_sm=1), units(), 1)
    assert parts["ldmatrix/mma overlap"] == pytest.approx(1 / 3)
    assert t == pytest.approx(6 + 4 + 2 / 3 + 0.1)


def test_nearest_warps_and_lacks():
    assert tc_predict.nearest({8, 16}, 16) == 16 and tc_predict.nearest({8, 16}, 12) == 16
    assert tc_predict.nearest({8, 16}, 4) == 8 and tc_predict.nearest({16}, 8) == 16
    no_mix = dict(units(), mix_cycles={})
    assert tc_predict.lacks(mma_rec(), no_mix) == [tc_predict.MIX_UNIT]
    assert tc_predict.lacks(rec(), no_mix) == [] and tc_predict.lacks(mma_rec(), units()) == []


# The copy kinds of the micro at 16 warps, cycles per step, against mix = 30 there: 3 stages, phi_copy =
# (38 - 30) / 20 = 0.4; 1 stage, (55 - 40) / 30 = 0.5.
COPY = {3: {16: {"copy": 20, "mix_copy": 38}}, 1: {16: {"copy": 40, "mix_copy": 55}}}


def with_copy(**over):
    return {**units(), "copy_cycles": COPY, **over}


def cp_async_rec(**over):
    """Kernel 11's shape: 3 stages, 8e6 B of cp.async at the L2 roof = 2 s; compute 4.5 s (phi 0.25, 16 warps)."""
    return mma_rec(**dict(dict(model_stages=3, model_ld_global_bytes=0, model_cp_async_bytes=8e6), **over))


def test_copy_overlap_factor():
    assert tc_predict.copy_overlap(30, {"copy": 20, "mix_copy": 38}) == pytest.approx(0.4)
    assert tc_predict.copy_overlap(15, {"copy": 20, "mix_copy": 26}) == pytest.approx(0.4)  # the copy the longer
    assert tc_predict.copy_overlap(30, {"copy": 20, "mix_copy": 29}) == 0.0
    assert tc_predict.copy_overlap(30, {"copy": 20, "mix_copy": 60}) == 1.0


def test_cp_async_pipelined_adds_phi_copy_of_the_shorter():
    """main = max(4.5, 2) + 0.4 x 2 = 5.3 s (max alone said 4.5, the sum 6.5); t = 5.4 s."""
    t, _, parts = tc_predict.predict(cp_async_rec(), with_copy(), 1)
    assert parts["copy/compute overlap"] == pytest.approx(0.4)
    assert parts["compute"] == pytest.approx(4.5)
    assert t == pytest.approx(5.4)


def test_cp_async_one_stage_uses_its_stages():
    """One stage: copy 6e6 B at the stages:1 cp.async rate 2e6 B/s = 3 s, phi_copy of stages 1 = 0.5:
    main = 4.5 + 0.5 x 3 = 6 s (copy + compute said 7.5); t = 6.1 s."""
    t, _, parts = tc_predict.predict(cp_async_rec(model_stages=1, model_cp_async_bytes=6e6), with_copy(), 1)
    assert parts["copy/compute overlap"] == pytest.approx(0.5)
    assert t == pytest.approx(6.1)


def test_cp_async_copy_longer_than_compute():
    """copy 8 s (32e6 B at the roof) over compute 4.5 s: main = 8 + 0.4 x 4.5 = 9.8 s."""
    t, _, _ = tc_predict.predict(cp_async_rec(model_cp_async_bytes=32e6), with_copy(), 1)
    assert t == pytest.approx(9.9)


def test_cp_async_falls_back_without_its_stages_or_kinds():
    """A run without the copy kinds, or without them at the kernel's stages, keeps max(compute, copy) /
    copy + compute, and copy_fallbacks names the benchmark; the ld.global kernels never take phi_copy."""
    for u in (units(), with_copy(copy_cycles={1: COPY[1]})):
        t, _, parts = tc_predict.predict(cp_async_rec(), u, 1)
        assert "copy/compute overlap" not in parts and t == pytest.approx(4.6)
    # the copy kinds at 16 warps, the mix at 8 only: no T_mix at the copy kinds' warps (compute at 8's phi 1/3)
    t, _, parts = tc_predict.predict(cp_async_rec(), with_copy(mix_cycles={8: MIX[8]}), 1)
    assert "copy/compute overlap" not in parts and t == pytest.approx(4 + 2 / 3 + 0.1)
    r = cp_async_rec()
    r.name = "gemm/cp_async/m:1/n:1/k:1"
    assert tc_predict.copy_fallbacks([r], units()) == [r.name] and tc_predict.copy_fallbacks([r], with_copy()) == []
    t, _, parts = tc_predict.predict(mma_rec(model_ld_global_bytes=6e6), with_copy(), 1)
    assert "copy/compute overlap" not in parts and t == pytest.approx(6 + 4.5 + 0.1)
    assert tc_predict.copy_phi(rec(model_cp_async_bytes=8e6, model_stages=3), with_copy()) is None  # no mma.sync


def test_cp_async_one_block_takes_nearest_warps():
    """One resident block (8 warps) with the copy kinds measured at 16 only: 16's phi_copy, and the mix's
    8-warp phi for the compute (1/3: 4 + 2/3 s); main = 4.667 + 0.4 x 2."""
    t, _, parts = tc_predict.predict(cp_async_rec(model_blocks_per_sm=1), with_copy(), 1)
    assert parts["copy/compute overlap"] == pytest.approx(0.4)
    assert t == pytest.approx(4 + 2 / 3 + 0.8 + 0.1)


class FakeRec:
    def __init__(self, name, cycles):
        self.name, self.cycles = name, cycles
        self.fields = dict(kv.split(":") for kv in name.split("/") if ":" in kv)

    def get(self, k, default=math.nan):
        return self.cycles if k == "cycles_per_step" else default


class FakeSuite:
    def __init__(self, recs):
        self.recs = recs

    def ok(self, family):
        return self.recs if family == "tensor" else []


def test_mix_cycles_keeps_complete_warps_only():
    recs = [FakeRec(tc_predict.MIX.format(kind=k, warps=w), c) for w, c in ((16, 30), (8, 20)) for k in tc_predict.MIX_KINDS]
    recs = [r for r in recs if r.name != tc_predict.MIX.format(kind="mma", warps=8)]
    copies = [FakeRec(tc_predict.COPY.format(kind=k, stages=s, warps=16), c) for s, c in ((3, 40), (1, 50))
              for k in tc_predict.COPY_KINDS]
    copies = [r for r in copies if r.name != tc_predict.COPY.format(kind="copy", stages=1, warps=16)]
    assert tc_predict.mix_cycles(FakeSuite(recs + copies)) == {16: {"mix": 30, "ldmatrix": 30, "mma": 30}}
    assert tc_predict.copy_cycles(FakeSuite(recs + copies)) == {3: {16: {"copy": 40, "mix_copy": 40}}}


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    """predictions.json rows of a copy of the committed run with the fixture's counts in its model.json."""
    d = tmp_path_factory.mktemp("run")
    shutil.copy(RUN / "benchmarks.json.gz", d)
    model = json.loads((RUN / "model.json").read_text())
    model.update(json.loads(FIXTURE.read_text()))
    (d / "model.json").write_text(json.dumps(model))
    rows, missing = predict.predictions(suite_json.load(d / "benchmarks.json.gz"))
    return rows, missing


MMA_SYNC = ("mma_swizzled", "mma_conflicted", "cp_async", "cp_async_1stage")


def test_committed_run_predicts_every_kernel_at_4096(committed):
    """The committed run predates the ldmatrix + mma.sync micro: the mma.sync kernels are left unpredicted, and
    the missing list names the micro; every other kernel is predicted."""
    rows, missing = committed
    assert [m for m in missing if "tensor" in m or "async" in m or "ldmatrix" in m] == [tc_predict.MIX_UNIT], missing
    for k in MMA_SYNC:
        assert rows[f"gemm/{k}/m:4096/n:4096/k:4096"]["predicted_s"] is None, k
    for k in set(TENSOR_CORE_MODELLED) - set(MMA_SYNC):
        row = rows[f"gemm/{k}/m:4096/n:4096/k:4096"]
        assert row["predicted_s"] > 0 and row["binding"], k
        assert set(row["parts"]) >= {"tensor", "shared memory", "copy (L2 -> SM)", "HBM", "tail"}


def test_committed_run_bindings_and_band(committed):
    """What the model says of the committed run (docs/families/tc-gemm.md, "The time model"): the bank-conflicted
    wgmma kernels are bound by the copies; these five are within 0.80-1.20 of measured at 4096^3 (the mma.sync
    kernels need the ldmatrix + mma.sync micro, which the run predates). Kernel 15 ran there with its stages
    released at cluster scope, a cost the model does not count: 2.1x its prediction (the CTA-scope release since,
    results/experiments/wgmma_multicast_cta_release/, runs it at 0.54 of that time)."""
    rows, _ = committed
    at = lambda k: rows[f"gemm/{k}/m:4096/n:4096/k:4096"]
    for k in ("wgmma_tma", "wgmma_ws", "wgmma_persistent", "wgmma_multicast"):
        assert at(k)["binding"] == "copy (L2 -> SM)", k
    for k in ("wmma", "wgmma_tma", "wgmma_ws", "wgmma_persistent"):
        assert 0.8 <= at(k)["predicted_s"] / at(k)["measured_s"] <= 1.2, k
    assert 2.0 <= at("wgmma_multicast")["measured_s"] / at("wgmma_multicast")["predicted_s"] <= 2.2


def test_fixture_matches_the_ladder():
    """The fixture has every modelled kernel at the bench's 4096^3 and no cuBLAS (no model for it)."""
    names = json.loads(FIXTURE.read_text())
    assert {n.split("/")[1] for n in names} == set(TENSOR_CORE_MODELLED)
    assert not any("cublas" in n for n in names)


def test_run_without_counts_predicts_no_tensor_core_kernel():
    """The committed run alone (model.json from before the tensor-core model): no tensor-core row at all."""
    rows, _ = predict.predictions(suite_json.load(RUN / "benchmarks.json.gz"))
    assert not any(n.split("/")[1] in TENSOR_CORE_MODELLED for n in rows)


NEW_RUN = RESULTS_DIR / "h200" / "20261202T154742Z"  # the session's last full run: the owned L2 roof, the mix micro


def test_final_run_band_and_known_misses():
    """The run with every unit cost the model reads (docs/families/tc-gemm.md, "Predicted against measured"):
    six of nine in 0.80-1.20 at 4096^3; the three outside are the misses the doc explains (cp_async's copies do
    not wholly hide, the one-stage cp.async partly does, kernel 12's requests merge before L2)."""
    rows, missing = predict.predictions(suite_json.load(NEW_RUN / "benchmarks.json.gz"))
    assert not [m for m in missing if "tensor" in m or "async" in m]
    ratio = {k: rows[f"gemm/{k}/m:4096/n:4096/k:4096"]["predicted_s"] / rows[f"gemm/{k}/m:4096/n:4096/k:4096"]["measured_s"]
             for k in TENSOR_CORE_MODELLED}
    inside = {k for k, r in ratio.items() if 0.8 <= r <= 1.2}
    assert inside == {"wmma", "mma_swizzled", "mma_conflicted", "wgmma_ws", "wgmma_persistent", "wgmma_multicast"}, ratio
    assert ratio["cp_async"] < 0.8 and ratio["cp_async_1stage"] > 1.2 and ratio["wgmma_tma"] > 1.2, ratio


NEWEST_RUN = RESULTS_DIR / "h200" / "20261202T201546Z"  # --ncu run with the copy kinds (phi_copy)


def test_newest_run_band_with_phi_copy():
    """With phi_copy measured by the copy kinds (kernel 11: 0.58 at 3 stages, 11a: 0.65 at 1), eight of nine in
    0.80-1.20 at 4096^3; kernel 12 stays over (its requests merge before L2: docs/families/tc-gemm.md)."""
    rows, missing = predict.predictions(suite_json.load(NEWEST_RUN / "benchmarks.json.gz"))
    assert not [m for m in missing if "tensor" in m or "async" in m]
    ratio = {k: rows[f"gemm/{k}/m:4096/n:4096/k:4096"]["predicted_s"] / rows[f"gemm/{k}/m:4096/n:4096/k:4096"]["measured_s"]
             for k in TENSOR_CORE_MODELLED}
    assert {k for k, r in ratio.items() if not 0.8 <= r <= 1.2} == {"wgmma_tma"}, ratio
    assert 0.5 < rows["gemm/cp_async/m:4096/n:4096/k:4096"]["parts"]["copy/compute overlap"] < 0.7


# ---- Kernel 12's TMA loop, copy only: the GEMM-tile stream (async/tma/l2/bandwidth/kind:gemm_tiles/...) ----

TILE_KEY = (64, 64, 64, 128, 3, 2, 256, 0)  # m, n, k, tile_n, stages, blocks_per_sm, threads_per_block, warp_specialized


def tma_rec(**over):
    """Kernel 12's loop at 64^3: wgmma n 128, 2e9 FLOPs at 2000 FLOP/clock = 1 s; TMA 8e6 B, at the L2 roof (4e6 B/s)
    2 s; 3 stages, 2 blocks of 256 threads, not warp-specialized."""
    c = dict(model_stages=3, model_wgmma_n=128, model_flops=2e9, model_ldmatrix_wavefronts=0, model_smem_fill_wavefronts=0,
             model_ld_global_bytes=0, model_tma_bytes=8e6, model_warp_specialized=0)
    c.update(over)
    r = rec(**c)
    r.name, r.fields = "gemm/wgmma_tma/m:64/n:64/k:64", {"m": 64, "n": 64, "k": 64}
    return r


def with_stream(rate=1e7, key=TILE_KEY):
    return dict(units(), tile_streams={key: rate})


def test_tma_unicast_copy_at_the_tile_stream_rate():
    """With the stream at the kernel's key (1e7 B/s, 2.5x the L2 roof): copy 8e6 / 1e7 = 0.8 s under tensor 1 s;
    t = 1 + 0.1 s. Without it: copy at the roof, 2 s, binds: t = 2.1 s."""
    t, binding, parts = tc_predict.predict(tma_rec(), with_stream(), 1)
    assert parts["copy (L2 -> SM)"] == pytest.approx(0.8) and binding == "tensor"
    assert t == pytest.approx(1.1)
    t, binding, parts = tc_predict.predict(tma_rec(), units(), 1)
    assert parts["copy (L2 -> SM)"] == pytest.approx(2) and binding == "copy (L2 -> SM)"
    assert t == pytest.approx(2.1)


def test_tile_stream_tail_counted_once():
    """2.5 waves (tail 1.2): the stream ran the same grid, so its 5e6 B/s already holds the tail; copy 8e6 / (5e6 x
    1.2) = 1.333 s binds, main x tail = 1.6 s = the stream's own time for the bytes; t = 1.6 + 0.1 s."""
    t, binding, parts = tc_predict.predict(tma_rec(model_waves=2.5), with_stream(rate=5e6), 1)
    assert parts["copy (L2 -> SM)"] == pytest.approx(8 / 6) and binding == "copy (L2 -> SM)"
    assert t == pytest.approx(1.7)


@pytest.mark.parametrize("i, other", [(0, 128), (2, 128), (3, 256), (4, 4), (5, 1), (6, 384), (7, 1)])
def test_tile_stream_needs_the_kernels_whole_key(i, other):
    """A stream at another shape, tile n, stages, residency, threads or loop (warp-specialized) is not this kernel's
    stream: the roof stays (t = 2.1 s) and tile_stream_fallbacks names the benchmark."""
    key = TILE_KEY[:i] + (other,) + TILE_KEY[i + 1:]
    t, _, parts = tc_predict.predict(tma_rec(), with_stream(key=key), 1)
    assert t == pytest.approx(2.1)
    assert tc_predict.tile_stream_fallbacks([tma_rec()], with_stream(key=key)) == [tma_rec().name]
    assert tc_predict.tile_stream_fallbacks([tma_rec()], with_stream()) == []


def test_tile_stream_only_for_pipelined_tma_unicast():
    """Multicast kernels keep the roof x the cluster micro's cost (1.5 s for 3e6 B, plus 2 s unicast); cp.async
    bytes stay at the roof; a record without model_warp_specialized (older model.json) matches no stream;
    warp-specialized kernels (13, 14: a loop the stream does not run) are no fallback to report."""
    t, _, parts = tc_predict.predict(tma_rec(model_tma_multicast_bytes=3e6), with_stream(), 1)
    assert parts["copy (L2 -> SM)"] == pytest.approx(2 + 1.5)
    assert tc_predict.tile_stream_rate(tma_rec(model_tma_bytes=0, model_cp_async_bytes=8e6), with_stream()) is None
    old = tma_rec()
    del old.counts["model_warp_specialized"]
    assert tc_predict.tile_stream_rate(old, with_stream()) is None
    ws = tma_rec(model_warp_specialized=1)
    assert tc_predict.tile_stream_fallbacks([ws, tma_rec(model_tma_multicast_bytes=3e6)], units()) == []


class StreamRec(FakeRec):
    def __init__(self, name, counters):
        super().__init__(name, 0)
        self.counters = counters

    def get(self, k, default=math.nan):
        return self.counters.get(k, default)

    def has(self, k):
        return k in self.counters


def test_tile_streams_reads_the_key_off_the_counters():
    counters = dict(bytes_per_second=1e13, tile_n=128, stages=3, blocks_per_sm=2, threads_per_block=256, warp_specialized=0)
    recs = [StreamRec(tc_predict.TILES + "m:4096/n:4096/k:4096", counters),
            StreamRec(tc_predict.TILES + "m:8192/n:8192/k:8192", dict(counters, bytes_per_second=0)),
            StreamRec("async/tma/l2/bandwidth/kind:unicast/cluster_size:2", counters)]

    class Suite:
        def ok(self, family):
            return recs if family == "async" else []
    assert tc_predict.tile_streams(Suite()) == {(4096, 4096, 4096, 128, 3, 2, 256, 0): 1e13}


def stream_run(d, bytes_per_second):
    """A copy of the newest run with a GEMM-tile stream record at kernel 12's key (4096^3), bytes_per_second given:
    the cluster micro's unicast entries renamed and given the stream's counters (stands in for a run that has it)."""
    run = json.load(gzip.open(NEWEST_RUN / "benchmarks.json.gz"))
    src = "async/tma/l2/bandwidth/kind:unicast/cluster_size:2/manual_time"
    name = tc_predict.TILES + "m:4096/n:4096/k:4096/manual_time"
    extra = []
    for b in run["benchmarks"]:
        if b["run_name"] == src:
            e = dict(b, name=b["name"].replace(src, name), run_name=name, bytes_per_second=bytes_per_second, tile_n=128,
                     stages=3, blocks_per_sm=2, threads_per_block=256, warp_specialized=0)
            extra.append(e)
    assert extra
    run["benchmarks"] += extra
    with gzip.open(d / "benchmarks.json.gz", "wt") as f:
        json.dump(run, f)
    shutil.copy(NEWEST_RUN / "model.json", d)
    return suite_json.load(d / "benchmarks.json.gz")


def test_newest_run_with_a_tile_stream_moves_kernel_12_only(tmp_path):
    """The newest run plus a stream at 1e13 B/s: kernel 12 at 4096^3 takes copy = model_tma_bytes / (1e13 x tail) and no
    other kernel's prediction changes; without the stream the note names kernel 12's benchmarks (all its shapes);
    with it, its 4096^3 benchmark no more."""
    plain = predict.predictions(suite_json.load(NEWEST_RUN / "benchmarks.json.gz"))[0]
    suite = stream_run(tmp_path, 1e13)
    rows = predict.predictions(suite)[0]
    k12 = "gemm/wgmma_tma/m:4096/n:4096/k:4096"
    model = json.loads((NEWEST_RUN / "model.json").read_text())[k12]
    waves = model["model_waves"]  # 1024 blocks over 132 x 2 slots: 3.88 waves, tail 4 / 3.88
    assert rows[k12]["parts"]["copy (L2 -> SM)"] == pytest.approx(model["model_tma_bytes"] / (1e13 * tc_predict.tail(waves)))
    assert rows[k12]["parts"]["tail"] == pytest.approx(math.ceil(waves) / waves) and rows[k12]["parts"]["tail"] > 1
    assert rows[k12]["predicted_s"] < plain[k12]["predicted_s"]
    for n, row in rows.items():
        if n != k12 and row.get("predicted_s") is not None:
            assert row["predicted_s"] == pytest.approx(plain[n]["predicted_s"]), n
    before = predict.tc_fallback_note(suite_json.load(NEWEST_RUN / "benchmarks.json.gz"), plain)
    after = predict.tc_fallback_note(suite, rows)
    assert k12 in before and "kind:gemm_tiles" in before
    assert k12 not in (after or "") and "gemm/wgmma_ws/" not in before


# ---- Commit 7047306 (bench_code b35fa7f8) on two GPUs: the GEMM-tile stream in the run -----------------------

STREAM_RUNS = {"20261203T043009Z": "--ncu", "20261203T044006Z": "plain", "20261203T052444Z": "plain, a third GPU"}


@pytest.mark.parametrize("run", sorted(STREAM_RUNS))
def test_stream_runs_meet_the_ladder_targets(run):
    """Issue 30's targets on the three runs of one code: every tensor-core step within 0.80-1.20 at 4096^3 (kernel 12
    at 0.92 / 0.91 / 0.91 with its copy at the run's own tile stream, 1.25-1.27 with the L2 roof on the runs before),
    the best hand-written kernel >= 0.90 x cuBLAS BF16 (0.98, 1.00, 0.97), and no fallback note for kernel 12 at 4096^3."""
    suite = committed_run(RESULTS_DIR / "h200" / run / "benchmarks.json.gz")
    rows, missing = predict.predictions(suite)
    assert not missing
    at = lambda k: rows[f"gemm/{k}/m:4096/n:4096/k:4096"]
    ratio = {k: at(k)["predicted_s"] / at(k)["measured_s"] for k in TENSOR_CORE_MODELLED}
    assert all(0.8 <= r <= 1.2 for r in ratio.values()), ratio
    assert 0.88 < ratio["wgmma_tma"] < 0.95, ratio
    best = min(at(k)["measured_s"] for k in TENSOR_CORE_MODELLED)
    assert suite.value("gemm/cublas_bf16/m:4096/n:4096/k:4096", suite_json.TIME) / best >= 0.9
    assert "gemm/wgmma_tma/m:4096/n:4096/k:4096" not in (predict.tc_fallback_note(suite, rows) or "")
    rate = suite.value(tc_predict.TILES + "m:4096/n:4096/k:4096", "bytes_per_second")
    assert 1.3 < rate / suite.value("ceiling/read/l2", "bytes_per_second") < 1.4
