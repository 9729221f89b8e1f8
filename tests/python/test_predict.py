"""gpubench/analysis/predict.py: the GEMM time rules on numbers computed by hand, and a committed run (no
issue family, counts from before the time model) predicted as nothing, with what it lacks named."""
import json
import math

import pytest

from gpubench.analysis import predict


class Rec:
    """A GEMM record as predict() reads it: model counts by name, no memory unit costs needed."""
    def __init__(self, **counts):
        self.counts, self.fields, self.name = counts, {"kernel": "warptile_tuned", "k": 4096}, "gemm/x"

    def get(self, k, default=math.nan):
        return self.counts.get(k, default)

    def has(self, k):
        return k in self.counts


def units():
    """Unit costs in chip-seconds: FFMA 1 ps (8 warps/SM) and 0.5 ps (16), a wavefront 2 ps; the 64:3 mix at
    8 warps takes 79 ps a trip (issue 67, shared 24: phi = (79 - 67) / 24 = 0.5), with a barrier every 4
    trips 89 ps (10 ps a trip: 40 ps a warp barrier); load latency 100 ps from L2 (1 MB), 300 ps from DRAM."""
    return {"ffma_s": {8: 1e-12, 16: 0.5e-12}, "wavefront_s": 2e-12,
            "mix": {(64, 3, 16, 8): {"trip_s": 79e-12, "barriers_per_trip": 0}},
            "mix_sync": {(64, 3, 16, 8): {"trip_s": 89e-12, "barriers_per_trip": 0.25}}, "memory": {},
            "latency_s": {"L2": 100e-12, "DRAM": 300e-12}, "l2_bytes": 1e6}


def kernel(**over):
    c = dict(model_ffma_warp=1000, model_lds_inst=47, model_sts_inst=10, model_ld_requests=20, model_st_requests=3,
             model_lds_wavefronts=120, model_sts_wavefronts=30, model_block_barriers=5, model_blocks=198,
             model_blocks_per_sm=2, model_threads_per_block=128, model_load_rounds=0, model_dram_bytes=5e5)
    c.update(over)
    return Rec(**c)


def test_prediction_by_hand():
    """issue 1080 x 1 ps; shared 150 x 2 ps = 300 ps; core 1080 + 0.5 x 300 = 1230 ps; barriers 5 blocks x 4 warps
    x 40 ps = 800 ps; 198 blocks on 132 SMs: 1.5 per SM, the busiest 2: tail 4/3 -> 2030 x 4/3 ps."""
    t, binding, parts = predict.predict(kernel(), units(), 132)
    assert parts["issue"] == pytest.approx(1080e-12)
    assert parts["shared memory"] == pytest.approx(300e-12)
    assert parts["phi"] == pytest.approx(0.5)
    assert parts["barriers"] == pytest.approx(800e-12)
    assert parts["tail"] == pytest.approx(4 / 3)
    assert t == pytest.approx(2030e-12 * 4 / 3)
    assert binding == "issue"


def test_shared_pipe_binds_when_larger():
    """Wavefronts x 10: shared 3000 ps > issue 1080 ps: core 3000 + 0.5 x 1080; binding shared memory."""
    t, binding, parts = predict.predict(kernel(model_lds_wavefronts=1200, model_sts_wavefronts=300, model_blocks=264),
                                        units(), 132)
    assert binding == "shared memory"
    assert t == pytest.approx(3000e-12 + 540e-12 + 800e-12)


def test_global_loads_share_the_l1tex_pipe():
    """20 load requests at 1e11 /s (100 lines at 1e13 /s: fewer) add 200 ps to the 300 ps of wavefronts:
    core 1080 + 0.5 x 500 = 1330 ps; with the barriers and the tail 2130 x 4/3 ps."""
    u = units()
    u["memory"] = {"l1_requests_per_s": 1e11, "l1_lines_per_s": 1e13}
    t, binding, parts = predict.predict(kernel(model_ld_lines=100), u, 132)
    assert parts["L1 (requests, lines)"] == pytest.approx(200e-12)
    assert t == pytest.approx(2130e-12 * 4 / 3) and binding == "issue"
    # 400 requests: L1TEX 300 + 4000 ps over the issue of 1460 ps: L1TEX binds, through its global part;
    # core 4300 + 0.5 x 1460 ps.
    t, binding, parts = predict.predict(kernel(model_ld_lines=100, model_ld_requests=400), u, 132)
    assert binding == "L1 (requests, lines)"
    assert t == pytest.approx((4300e-12 + 0.5 * 1460e-12 + 800e-12) * 4 / 3)


def test_exposed_load_latency_by_hand():
    """3 load rounds per block; 198 blocks on 132 SMs, 2 resident: the busiest SM runs its 2 blocks together, so
    their rounds coincide: 3 x 100 ps from L2, added after the tail: 2030 x 4/3 + 300 ps; from DRAM 900 ps."""
    t, binding, parts = predict.predict(kernel(model_load_rounds=3 * 198), units(), 132)
    assert parts[predict.EXPOSED] == pytest.approx(300e-12)
    assert t == pytest.approx(2030e-12 * 4 / 3 + 300e-12) and binding == "issue"
    t, _, parts = predict.predict(kernel(model_load_rounds=3 * 198, model_dram_bytes=2e6), units(), 132)
    assert parts[predict.EXPOSED] == pytest.approx(900e-12)
    assert t == pytest.approx(2030e-12 * 4 / 3 + 900e-12)


def test_exposed_load_latency_per_wave_of_resident_blocks():
    """528 blocks, 2 resident: the busiest SM runs 4, in 2 waves of 2: 2 x 3 rounds x 100 ps. 30 rounds a block
    (3000 ps) outweigh the core (2030 ps): the load latency binds."""
    t, _, parts = predict.predict(kernel(model_load_rounds=3 * 528, model_blocks=528), units(), 132)
    assert parts[predict.EXPOSED] == pytest.approx(600e-12)
    assert parts["tail"] == 1 and t == pytest.approx(2030e-12 + 600e-12)
    t, binding, parts = predict.predict(kernel(model_load_rounds=30 * 264, model_blocks=264), units(), 132)
    assert binding == predict.EXPOSED and t == pytest.approx(2030e-12 + 3000e-12)


def test_small_grid_has_fewer_resident_warps():
    """132 blocks of 4 warps where 4 fit per SM: one block (4 warps) per SM, so FFMA at 8 warps' rate (the
    smallest measured, 1 ps), not 16's (0.5 ps) that a full SM would have."""
    assert predict.resident_blocks(kernel(model_blocks=132, model_blocks_per_sm=4), 132) == 1
    assert predict.resident_blocks(kernel(model_blocks=1000, model_blocks_per_sm=4), 132) == 4
    _, _, parts = predict.predict(kernel(model_blocks=132, model_blocks_per_sm=4), units(), 132)
    assert parts["issue"] == pytest.approx(1080e-12)
    _, _, parts = predict.predict(kernel(model_blocks=528, model_blocks_per_sm=4), units(), 132)
    assert parts["issue"] == pytest.approx(540e-12)


def test_overlap_ends():
    """A mix as long as its larger part overlaps (0), as long as the sum adds (1); beyond either end clamped."""
    assert predict.overlap(67, 67, 24) == 0
    assert predict.overlap(91, 67, 24) == 1
    assert predict.overlap(60, 67, 24) == 0
    assert predict.overlap(200, 67, 24) == 1
    assert predict.core_time(10, 4, 0.25) == 11


def test_resident_warps_never_borrow_a_fuller_sm():
    """12 resident warps take the 8-warp rates (fewer warps hide less); 4 the smallest measured."""
    assert predict.nearest_warps({4, 8, 16}, 12) == 8
    assert predict.nearest_warps({8, 16}, 4) == 8
    t16, *_ = predict.predict(kernel(model_blocks_per_sm=4, model_blocks=528), units(), 132)
    t8, *_ = predict.predict(kernel(model_blocks_per_sm=3, model_blocks=528), units(), 132)
    assert t16 < t8  # 16 warps: FFMA 0.5 ps; 12 warps: 8's 1 ps


def test_mix_by_ratio():
    """The mix nearest by factor: 21.3 FFMA per load picks 64:3 over 32:2 (16) and 16:6 (2.7)."""
    mixes = {(64, 3, 16, 8): 0, (32, 2, 16, 8): 0, (16, 6, 16, 8): 0, (64, 3, 16, 16): 0}
    assert predict.mix_for(mixes, 21.3, 8) == (64, 3, 16, 8)
    assert predict.mix_for(mixes, 17, 8) == (32, 2, 16, 8)
    assert predict.mix_for(mixes, 3, 8) == (16, 6, 16, 8)


def test_tail():
    assert predict.tail(264, 132) == 1
    assert predict.tail(1024, 132) == pytest.approx(8 / (1024 / 132))


def test_committed_run_predicts_nothing(tmp_path, capsys):
    """A committed run from before the issue family (and its counts): every prediction null, the lacks named."""
    from conftest import RESULTS_DIR
    run = sorted(p.parent for p in (RESULTS_DIR / "h200").glob("2*/model.json") if p.parent.name < "20261202")[-1]
    out = tmp_path / "p.json"
    assert predict.main([str(run), "-o", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert rows and all(r["predicted_s"] is None and r["measured_s"] > 0 for r in rows.values())
    err = capsys.readouterr().err
    assert "issue/ffma/warps:*" in err and "issue/mix_sync/*" in err and "model_threads_per_block" in err


def test_committed_run_folder_is_not_written_without_force(capsys):
    """The default output lies in the run's folder: refused for a committed run (one line, exit 2)."""
    from conftest import RESULTS_DIR
    run = sorted(p.parent for p in (RESULTS_DIR / "h200").glob("2*/model.json")
                 if not (p.parent / "predictions.json").exists())[-1]
    with pytest.raises(SystemExit) as e:
        predict.main([str(run)])
    assert e.value.code == 2 and "refusing to write" in capsys.readouterr().err
    assert not (run / "predictions.json").exists()


def test_not_a_folder(tmp_path, capsys):
    assert predict.main([str(tmp_path / "none")]) == 2
    assert "not a folder" in capsys.readouterr().err


def with_issue_family(path, ffma_per_clk=4.0, wavefronts_per_clk=1.0, phi=0.5, barrier_clk=3.0, clock=1.98e9, sms=132):
    """A synthetic run plus the issue family's benchmarks under their real names, their counters from ideal rates
    (FFMA and wavefronts per clock per SM, phi, SM clocks per warp barrier), and the counts model.json gains."""
    doc = json.loads(path.read_text())
    doc["benchmarks"] = [e for e in doc["benchmarks"] if not e["run_name"].startswith("issue/")]  # the recorded ones
    template = [e for e in doc["benchmarks"] if e["run_name"] == "ceiling/fma/manual_time"]
    s_ffma, s_wf = 1 / (ffma_per_clk * sms * clock), 1 / (wavefronts_per_clk * sms * clock)
    extra = []

    def add(name, counters):
        for e in template:
            c = {k: v.replace("ceiling/fma", name) if k in ("name", "run_name") else v for k, v in e.items()}
            c.pop("flops_per_second")
            c.update(counters)
            extra.append(c)
    for w in (4, 8, 16, 32):
        add(f"issue/ffma/warps:{w}", {"ffma_per_second": 1 / s_ffma})
    add("issue/lds/width:4/pattern:conflict_free/warps:32", {"wavefronts_per_second": 1 / s_wf})
    for f, lds, width in ((64, 3, 16), (32, 2, 16), (16, 6, 16), (16, 16, 4)):
        issue, shared = (f + lds) * s_ffma, lds * width / 4 * s_wf
        trip = predict.core_time(issue, shared, phi)
        for w in (8, 16, 32):
            add(f"issue/mix/ffma:{f}/lds:{lds}/width:{width}/warps:{w}", {"lds_per_second": lds / trip})
            add(f"issue/mix_sync/ffma:{f}/lds:{lds}/width:{width}/warps:{w}",
                {"lds_per_second": lds / (trip + 0.25 * barrier_clk / (sms * clock)), "barriers_per_trip": 0.25})
    doc["benchmarks"] += extra
    path.write_text(json.dumps(doc))
    model = {}
    for e in doc["benchmarks"]:
        name = e["run_name"].removesuffix("/manual_time")
        if name.startswith("gemm/") and "model_ffma_thread" in e and e.get("aggregate_name") == "median":
            model[name] = {"model_ffma_warp": e["model_ffma_thread"] / 32, "model_sts_inst": e["model_sts_wavefronts"],
                           "model_st_requests": 0, "model_blocks": 1024, "model_threads_per_block": 256,
                           "model_load_rounds": 1024 * 16}
    (path.parent / "model.json").write_text(json.dumps(model))
    return path


def test_a_run_with_the_issue_family_is_predicted(make_json, tmp_path):
    """Every unit cost read from its benchmark by name: the rates put in come back, the mixes give the phi they
    were made with, and every modelled GEMM benchmark gets a positive prediction and a binding resource."""
    from gpubench.suite_json import load
    path = with_issue_family(make_json())
    s = load(path)
    u, missing = predict.unit_costs(s)
    assert not missing
    assert set(u["ffma_s"]) == {4, 8, 16, 32} and u["ffma_s"][8] == pytest.approx(1 / (4 * 132 * 1.98e9))
    assert u["wavefront_s"] == pytest.approx(1 / (132 * 1.98e9))
    key = (64, 3, 16, 8)
    assert predict.overlap(u["mix"][key]["trip_s"], 67 * u["ffma_s"][8], 12 * u["wavefront_s"]) == pytest.approx(0.5)
    assert u["mix_sync"][key]["barriers_per_trip"] == 0.25
    out = tmp_path / "p.json"
    assert predict.main([str(path.parent), "-o", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert rows and all(r["predicted_s"] > 0 and r["binding"] for r in rows.values())
    assert {r["binding"] for r in rows.values()} <= {"issue", "shared memory", "L1 (requests, lines)", "L2", "HBM",
                                                     predict.EXPOSED}
    assert all(r["parts"][predict.EXPOSED] > 0 for r in rows.values())


def direct(**over):
    """A kernel that loads straight from global memory (kernel 2's shape of counts): no shared loads or stores,
    no barriers; 300 load requests of 1 line each."""
    c = dict(model_lds_inst=0, model_sts_inst=0, model_lds_wavefronts=0, model_sts_wavefronts=0,
             model_block_barriers=0, model_ld_requests=300, model_ld_lines=300, model_blocks=264)
    c.update(over)
    return kernel(**c)


def direct_units():
    """The L1-resident request rate 1e12 /s (1 ps a request); the load mix 3 ps a request when its misses come
    from L2, 5 ps from DRAM; lines at 1e14 /s (never binding here)."""
    u = units()
    u["memory"] = {"l1_requests_per_s": 1e12, "l1_lines_per_s": 1e14}
    u["direct_request_s"] = {"L2": 3e-12, "DRAM": 5e-12}
    return u


def test_direct_loads_take_the_load_mix_rate_of_their_operands_level():
    """300 requests: 900 ps with the operands in L2 (5e5 B <= 1 MB), 1500 ps beyond it, over the issue (1000 FFMA +
    303 loads and stores at 1 ps = 1303 ps) only from DRAM; core 1500 + phi 0.5 (the one mix) x 1303 ps."""
    _, binding, parts = predict.predict(direct(), direct_units(), 132)
    assert parts[predict.L1] == pytest.approx(900e-12) and binding == "issue"
    t, binding, parts = predict.predict(direct(model_dram_bytes=2e6), direct_units(), 132)
    assert parts[predict.L1] == pytest.approx(1500e-12)
    assert binding == predict.L1 and t == pytest.approx(1500e-12 + 0.5 * 1303e-12)


def test_direct_loads_charge_each_request_at_its_own_level():
    """With the model's DRAM requests (model/gemm_model.hpp tile_reuse), the additive rule: 100 of the 300 at
    DRAM's 5 ps, 200 at L2's 3 ps: 1100 ps, whatever the operands' total size says; none at DRAM: 900 ps even
    with the operands beyond L2; all: 1500 ps. (A mean of the two rates would give 300 / (2/3 x 1/3 + 1/3 x
    1/5) ps = 1046 ps for the first.)"""
    _, _, parts = predict.predict(direct(model_ld_requests_dram=100), direct_units(), 132)
    assert parts[predict.L1] == pytest.approx(1100e-12)
    _, _, parts = predict.predict(direct(model_ld_requests_dram=100, model_dram_bytes=2e6), direct_units(), 132)
    assert parts[predict.L1] == pytest.approx(1100e-12)
    _, _, parts = predict.predict(direct(model_ld_requests_dram=0, model_dram_bytes=2e6), direct_units(), 132)
    assert parts[predict.L1] == pytest.approx(900e-12)
    _, _, parts = predict.predict(direct(model_ld_requests_dram=300), direct_units(), 132)
    assert parts[predict.L1] == pytest.approx(1500e-12)


def test_direct_requests_by_level():
    """The split predict charges: DRAM's count and the rest at L2, empty levels left out; without the count, every
    request at the operands' level (5e5 B <= 1 MB of L2: L2; 2e6: DRAM)."""
    u = direct_units()
    assert predict.direct_requests(direct(model_ld_requests_dram=100), u) == {"L2": 200, "DRAM": 100}
    assert predict.direct_requests(direct(model_ld_requests_dram=0), u) == {"L2": 300}
    assert predict.direct_requests(direct(model_ld_requests_dram=300), u) == {"DRAM": 300}
    assert predict.direct_requests(direct(), u) == {"L2": 300}
    assert predict.direct_requests(direct(model_dram_bytes=2e6), u) == {"DRAM": 300}


def test_split_levels_need_both_mixes():
    """Requests at both levels and only the L2 mix measured: the L1-resident rate (1 ps a request)."""
    u = direct_units()
    u["direct_request_s"] = {"L2": 3e-12}
    _, _, parts = predict.predict(direct(model_ld_requests_dram=100), u, 132)
    assert parts[predict.L1] == pytest.approx(300e-12)


def test_tiled_kernels_keep_the_l1_resident_rate():
    """A kernel with shared loads (the default one) is charged 1 ps a request, the load mix or not."""
    _, _, parts = predict.predict(kernel(model_ld_lines=20, model_dram_bytes=2e6), direct_units(), 132)
    assert parts[predict.L1] == pytest.approx(20e-12)


def test_without_the_load_mix_the_l1_resident_rate():
    """A run without coalescing/mix/*: the rate before it (1 ps a request), for either level."""
    u = direct_units()
    u["direct_request_s"] = {"L2": 3e-12}
    _, _, parts = predict.predict(direct(model_dram_bytes=2e6), u, 132)
    assert parts[predict.L1] == pytest.approx(300e-12)
    _, _, parts = predict.predict(direct(), u, 132)
    assert parts[predict.L1] == pytest.approx(900e-12)


def test_lines_still_bound_direct_loads():
    """The naive kernel's lines (32 a request, at 1e12 /s: 9600 ps) outweigh the mix's 900 ps."""
    u = direct_units()
    u["memory"]["l1_lines_per_s"] = 1e12
    _, _, parts = predict.predict(direct(model_ld_lines=9600), u, 132)
    assert parts[predict.L1] == pytest.approx(9600e-12)


def with_load_mix(path, per_s):
    """The run at `path` plus coalescing/mix/bcast_row/<source> records with requests_per_second per_s[source]."""
    doc = json.loads(path.read_text())
    template = [e for e in doc["benchmarks"] if e["run_name"] == "ceiling/fma/manual_time"]
    for source, rate in per_s.items():
        for e in template:
            name = f"coalescing/mix/bcast_row/{source}"
            c = {k: v.replace("ceiling/fma", name) if k in ("name", "run_name") else v for k, v in e.items()}
            c.pop("flops_per_second")
            c["requests_per_second"] = rate
            doc["benchmarks"].append(c)
    path.write_text(json.dumps(doc))
    return path


def test_load_mix_read_by_name_and_fallback_noted(make_json, tmp_path, capsys):
    """unit_costs reads the two load-mix rates by their names (l1 is not used); a run with only one of them
    predicts all the same, and says on stderr which benchmark the rest fell back for."""
    from gpubench.suite_json import load
    path = with_load_mix(with_issue_family(make_json()), {"l1": 9e11, "l2": 2e11, "hbm": 1e11})
    u, missing = predict.unit_costs(load(path))
    assert not missing and u["direct_request_s"] == pytest.approx({"L2": 5e-12, "DRAM": 1e-11})
    path = with_load_mix(with_issue_family(make_json()), {"l2": 2e11})
    u, _ = predict.unit_costs(load(path))
    assert set(u["direct_request_s"]) == {"L2"}
    assert predict.main([str(path.parent), "-o", str(tmp_path / "p.json")]) == 0
    rows = json.loads((tmp_path / "p.json").read_text())
    assert all(r["predicted_s"] > 0 for r in rows.values())
    assert predict.direct_fallbacks(load(path), u) == {"DRAM": 6}  # naive and coalesced at 4092, 4096, 4096^2 x 1024
    err = capsys.readouterr().err
    assert "coalescing/mix/bcast_row/hbm (6 GEMM benchmarks)" in err and "bcast_row/l2" not in err


def test_split_check_predicts_the_split_mix(make_json):
    """coalescing/mix/bcast_row/split against the additive rule: l2 2e11 and hbm 1e11 requests/s, a broadcast and a
    row each: 2 / (5 ps + 10 ps) = 1.333e11 /s; without the split benchmark, None."""
    from gpubench.suite_json import load
    path = with_load_mix(with_issue_family(make_json()), {"l2": 2e11, "hbm": 1e11, "split": 1.25e11})
    measured, predicted = predict.split_check(load(path))
    assert measured == pytest.approx(1.25e11) and predicted == pytest.approx(2e11 / 1.5)
    assert predict.split_check(load(with_load_mix(with_issue_family(make_json()), {"l2": 2e11, "hbm": 1e11}))) is None


FINAL_RUN = "20261202T154742Z"  # the session's last full H200 run, with coalescing/mix
# Its model.json predates model_ld_requests_dram and model_dram_bytes_reuse: this file holds them, written by
# `build/gpubench --plan-for harness/devices/h200.json --model_out FILE` (the FP32 ladder's GEMM entries, those two
# counters only), and final_run_rows puts them beside a copy of the run.
REUSE_FIXTURE = "reuse_model_h200.json"


def final_run_rows(tmp_path, with_reuse):
    import shutil
    from pathlib import Path
    from gpubench import suite_json
    from tests.python.conftest import RESULTS_DIR
    run = RESULTS_DIR / "h200" / FINAL_RUN
    shutil.copy(run / "benchmarks.json.gz", tmp_path)
    model = json.loads((run / "model.json").read_text())
    if with_reuse:
        for name, counts in json.loads((Path(__file__).parent / "data" / REUSE_FIXTURE).read_text()).items():
            model[name].update(counts)
    (tmp_path / "model.json").write_text(json.dumps(model))
    rows, _ = predict.predictions(suite_json.load(tmp_path / "benchmarks.json.gz"))
    return lambda k, m, n=None, kk=None: (lambda r: r["predicted_s"] / r["measured_s"])(
        rows[f"gemm/{k}/m:{m}/n:{n or m}/k:{kk or m}"])


def test_final_run_fp32_ladder_bands(tmp_path):
    """The final run with the L2 reuse counts: at 4096^3 every ladder kernel within 0.85-1.15, at 1024^3 and
    2048^3 within 0.75-1.25. Coalesced, its A from DRAM and B from L2 (docs/families/issue.md): 1.05 at 4096^3,
    1.09 at 4092^3, 1.03 at 4096^2 x 1024 (everything in L2); naive's lines bind it, unchanged at 1.10."""
    from gpubench.analysis.bounds import KERNELS
    ratio = final_run_rows(tmp_path, with_reuse=True)
    fp32 = [k for k in KERNELS if k != "cublas"]
    assert {k for k in fp32 if not 0.85 <= ratio(k, 4096) <= 1.15} == set()
    for n in (1024, 2048):
        assert all(0.75 <= ratio(k, n) <= 1.25 for k in fp32), n
    assert 1.02 < ratio("coalesced", 4096) < 1.07
    assert 1.06 < ratio("coalesced", 4092) < 1.12
    assert 1.01 < ratio("coalesced", 4096, 4096, 1024) < 1.06
    assert 1.07 < ratio("naive", 4096) < 1.12


def test_final_run_without_reuse_counts_keeps_the_operand_level_rule(tmp_path):
    """The committed model.json alone: every request of coalesced at the operands' level (DRAM beyond L2):
    1.17 at 4096^3, 1.30 at 4096^2 x 1024, the miss the reuse rule removes."""
    ratio = final_run_rows(tmp_path, with_reuse=False)
    assert 1.15 < ratio("coalesced", 4096) < 1.2
    assert 1.25 < ratio("coalesced", 4096, 4096, 1024) < 1.35


def test_hbm_bound_takes_the_reuse_bytes_where_the_model_has_them():
    """bounds.py's HBM: model_dram_bytes_reuse (2e6 B at 1e15 B/s: 2 ns) over the compulsory 5e5 B when present."""
    from gpubench.analysis import bounds
    assert bounds.bounds(kernel(), {"hbm_bytes_per_s": 1e15}, 132)["HBM"] == pytest.approx(5e-10)
    assert bounds.bounds(kernel(model_dram_bytes_reuse=2e6), {"hbm_bytes_per_s": 1e15}, 132)["HBM"] == pytest.approx(2e-9)


NEWEST_RUN = "20261202T201546Z"  # `./run_all.sh --ncu` of the L2 reuse rule's code (model.json with its counts)


def test_newest_run_fp32_ladder_bands():
    """The committed --ncu run of the reuse rule's code, its own model.json: every ladder kernel within 0.85-1.15 at
    4096^3 and 0.75-1.25 at 1024^3 and 2048^3 (issue 28's targets); coalesced 1.05 at 4096^3 and 1.10 at 4092^3."""
    from gpubench import suite_json
    from gpubench.analysis.bounds import KERNELS
    from tests.python.conftest import RESULTS_DIR
    rows, _ = predict.predictions(suite_json.load(RESULTS_DIR / "h200" / NEWEST_RUN / "benchmarks.json.gz"))
    ratio = lambda k, n, kk=None: (lambda r: r["predicted_s"] / r["measured_s"])(rows[f"gemm/{k}/m:{n}/n:{n}/k:{kk or n}"])
    fp32 = [k for k in KERNELS if k != "cublas"]
    assert {k for k in fp32 if not 0.85 <= ratio(k, 4096) <= 1.15} == set()
    for n in (1024, 2048):
        assert all(0.75 <= ratio(k, n) <= 1.25 for k in fp32), n
    assert 1.02 < ratio("coalesced", 4096) < 1.08 and 1.07 < ratio("coalesced", 4092) < 1.13


# Issue 28's bands for the FP32 ladder's predicted / measured, by cube size.
LADDER_BANDS = {4096: (0.85, 1.15), 2048: (0.75, 1.25), 1024: (0.75, 1.25)}


def ladder_bands(suite):
    """(ratio(kernel, n): predicted / measured at n^3, {(kernel, n) outside LADDER_BANDS}) of a run's FP32 ladder."""
    from gpubench.analysis.bounds import KERNELS
    rows, _ = predict.predictions(suite)
    ratio = lambda k, n: (lambda r: r["predicted_s"] / r["measured_s"])(rows[f"gemm/{k}/m:{n}/n:{n}/k:{n}"])
    outside = {(k, n) for k in KERNELS if k != "cublas" for n, (lo, hi) in LADDER_BANDS.items() if not lo <= ratio(k, n) <= hi}
    return ratio, outside


# One benchmark code (b35fa7f8) on three GPUs: 044006Z meets issue 28's bands everywhere; the other two but for
# blocktile_2d at 1024^3 (a partial wave: 64 blocks of 8 warps on 132 SMs), at the band's edge on every GPU measured.
EDGE_RUNS = {"20261203T044006Z": set(), "20261203T043009Z": {("blocktile_2d", 1024)},
             "20261203T052444Z": {("blocktile_2d", 1024)}}


@pytest.mark.parametrize("run", sorted(EDGE_RUNS))
def test_runs_of_b35fa7f8_fp32_ladder_bands(run):
    from conftest import RESULTS_DIR, committed
    ratio, outside = ladder_bands(committed(RESULTS_DIR / "h200" / run / "benchmarks.json.gz"))
    assert outside == EDGE_RUNS[run]
    assert 0.73 < ratio("blocktile_2d", 1024) < 0.77


# The runs with the stream gate (harness/timer.cuh), the model unchanged: blocktile_2d at 1024^3 timed alone
# (launches_per_sample 1) no longer carries the host's launch latency, and every ladder kernel is inside
# issue 28's bands (075027Z: code 38e21a1; 075819Z, --ncu, and 080538Z: ea2b00f, one GPU; the same kernels).
GATED_RUNS = ("20261203T075027Z", "20261203T075819Z", "20261203T080538Z")


@pytest.mark.parametrize("run", GATED_RUNS)
def test_gated_runs_meet_the_fp32_ladder_bands(run):
    from conftest import RESULTS_DIR, committed
    suite = committed(RESULTS_DIR / "h200" / run / "benchmarks.json.gz")
    ratio, outside = ladder_bands(suite)
    assert outside == set()
    assert 0.75 < ratio("blocktile_2d", 1024) < 0.78  # inside, by 1-2 %
    assert suite.value("gemm/blocktile_2d/m:1024/n:1024/k:1024", "launches_per_sample") == 1
    peak = 2 * 128 * float(suite.context["sm_count"]) * suite.value("ceiling/fma", "sm_clock_mhz") * 1e6
    assert suite.value("ceiling/fma", "flops_per_second") >= 0.97 * peak


@pytest.mark.parametrize("run", GATED_RUNS)
def test_register_assignment_runs_opposite_to_the_two_bank_rule(run):
    """issue/ffma_banks: 'same' (b and c at indices of equal parity, where the index-mod-2 bank rule counts three
    times the extra reads) runs faster than 'split' at every occupancy, both well under issue/ffma: the reason
    predict has no register-bank term (docs/families/issue.md, "Register assignment")."""
    from conftest import RESULTS_DIR, committed
    suite = committed(RESULTS_DIR / "h200" / run / "benchmarks.json.gz")
    for w in (4, 8, 16, 32):
        rate = lambda p: suite.value(f"issue/ffma_banks/pattern:{p}/warps:{w}", "ffma_per_clk_sm")
        assert rate("same") > 1.04 * rate("split"), w
        assert rate("same") < 0.9 * suite.value(f"issue/ffma/warps:{w}", "ffma_per_clk_sm"), w
