import math

import pytest

from gpubench import suite_json
import synth
from gpubench.suite_json import TIME, SuiteJsonError, load, parse_name


def test_parse_name_generic_and_named_segments():
    assert parse_name("coalescing/read/hbm/stride:1") == {
        "family": "coalescing", "op": "read", "level": "hbm", "stride": 1, "pos": ("read", "hbm")}
    f = parse_name("smem_banks/throughput/width:8/swizzle/stride:33")
    assert (f["mode"], f["layout"], f["width"], f["stride"]) == ("throughput", "swizzle", 8, 33)
    assert "layout" not in parse_name("smem_banks/latency/width:4/stride:0/pad:1")
    assert parse_name("new_family/x/y/size:big") == {"family": "new_family", "size": "big", "pos": ("x", "y")}


def test_records_have_logical_names_samples_and_seconds(suite_file):
    s = load(suite_file)
    assert len(s.records) == len(synth.benchmarks())
    assert not any("manual_time" in r.name for r in s.records)
    assert s.gpu_name == "NVIDIA H200"
    r = s.by_name["coalescing/read/hbm/stride:1"]
    assert r.fields["level"] == "hbm" and len(r.samples[TIME]) == 5
    assert r.median[TIME] == sorted(r.samples[TIME])[2]
    # microseconds and milliseconds in the file both come out as seconds
    expected = {name: t for name, _, t, _ in synth.benchmarks()}
    for name in ("coalescing/read/hbm/stride:1", "gemm/cublas/m:4092/n:4092/k:4092"):
        assert s.by_name[name].median[TIME] == pytest.approx(expected[name], rel=0.05)
    assert 0 < r.cv[TIME] < 0.05
    assert r.cv["sectors_per_request"] == 0.0
    assert "iterations" not in r.median and "repetition_index" not in r.median


def test_single_repetition_has_no_aggregates(make_json):
    s = load(make_json(reps=1))
    r = s.by_name["ceiling/memcpy_d2d"]
    assert len(r.samples[TIME]) == 1 and r.median[TIME] == r.samples[TIME][0]
    assert math.isnan(r.cv[TIME])


@pytest.mark.parametrize("shape", ("1.7.1", "1.8.3"))
def test_aggregates_only_uses_median_and_gb_cv(make_json, shape):
    full = load(make_json("full.json", shape=shape))
    agg = load(make_json("agg.json", shape=shape, aggregates_only=True))
    name = "gemm/smem/m:1024/n:1024/k:1024"
    assert agg.by_name[name].samples[TIME] == [pytest.approx(full.by_name[name].median[TIME])]
    # 1.8.3 writes a cv aggregate, 1.7.1 only mean and stddev: both give the same cv
    assert agg.by_name[name].cv[TIME] == pytest.approx(full.by_name[name].cv[TIME], rel=1e-6)


def test_errored_benchmarks_are_kept_and_flagged(make_json):
    s = load(make_json(errors={"gemm/naive/m:256/n:256/k:256": "CUDA error: out of memory"}))
    r = s.by_name["gemm/naive/m:256/n:256/k:256"]
    assert r.error == "CUDA error: out of memory"
    assert r not in s.ok("gemm") and s.value(r.name, TIME) is None
    assert s.value("gemm/naive/m:512/n:512/k:512", TIME) > 0


@pytest.mark.parametrize("content, message", [
    ("{not json", "not JSON"),
    ('{"context": {"suite": "gpu-memory-microbench"}}', 'no "benchmarks" list'),
    ("[1, 2]", 'no "benchmarks" list'),
    ('{"context": {"library_build_type": "release"}, "benchmarks": []}', "not from the suite"),
    ('{"context": {"suite": "someone-else"}, "benchmarks": []}', "not from the suite"),
])
def test_bad_files_raise_one_line_errors(write_json, content, message):
    with pytest.raises(SuiteJsonError) as e:
        load(write_json(content))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(SuiteJsonError, match="no such file"):
        load(tmp_path / "nope.json")


def test_load_or_exit_exits_2(write_json, capsys):
    with pytest.raises(SystemExit) as e:
        suite_json.load_or_exit(write_json("nope"), "stride")
    assert e.value.code == 2
    assert capsys.readouterr().err.startswith("stride: error: ")


# --- recorded data, skips, unusable times, duplicates, the barrier rename, model.json (issues 10, 12) ---

def test_recorded_run_reads_as_gpubench_wrote_it():
    """The cut of a real H200 run: the repetitions of the fully kept benchmarks give the median Google
    Benchmark itself computed, and the barriers come out under the sync/ family."""
    s = load(synth.RECORDED)
    doc = __import__("json").loads(synth.RECORDED.read_text())
    median = next(e for e in doc["benchmarks"] if e["run_name"] == "gemm/smem/m:4092/n:4092/k:4092/manual_time"
                  and e.get("aggregate_name") == "median")
    r = s.by_name["gemm/smem/m:4092/n:4092/k:4092"]
    assert len(r.samples[TIME]) == 5 and r.median[TIME] == pytest.approx(median["real_time"] * 1e-6)
    assert r.get("flops_per_second") == pytest.approx(median["flops_per_second"])
    assert "syncthreads/threads:1024/blocks_per_sm:2" not in s.by_name
    b = s.by_name["sync/syncthreads/threads:1024/blocks_per_sm:2"]
    assert b.fields["family"] == "sync" and b.fields["primitive"] == "syncthreads" and b.fields["threads"] == 1024


@pytest.mark.parametrize("shape", ("1.7.1", "1.8.3"))
def test_skips_are_not_errors(make_json, shape):
    name = "sync/syncwarp/threads:1024/blocks_per_sm:2"
    s = load(make_json(shape=shape, skips={name: "does not fit: 2 blocks of 1024 threads"}))
    r = s.by_name[name]
    assert r.skipped == "does not fit: 2 blocks of 1024 threads" and r.error is None
    assert s.skips() == [r] and s.errors() == [] and r not in s.ok("sync") and s.value(name, TIME) is None


@pytest.mark.parametrize("where", ["iteration", "median"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 0.0, -1.0])
def test_unusable_times_are_one_line_errors(write_json, where, bad):
    doc = synth.suite_json(only={"ceiling"})
    entry = next(e for e in doc["benchmarks"] if (e["run_type"] == "iteration") == (where == "iteration")
                 and e.get("aggregate_name") in (None, "median"))
    entry["real_time"] = bad
    with pytest.raises(SuiteJsonError, match="is not a positive number") as e:
        load(write_json(__import__("json").dumps(doc)))
    assert entry["run_name"].removesuffix("/manual_time") in str(e.value) and "\n" not in str(e.value)


def test_zero_spread_aggregates_are_fine(make_json):
    """A stddev or cv of 0 (identical repetitions) is a value, not an unusable time."""
    s = load(make_json(noise=0.0))
    assert s.by_name["ceiling/fma"].cv[TIME] == 0.0


def test_duplicate_entries_are_unusable(write_json):
    doc = synth.suite_json(only={"ceiling"})
    doc["benchmarks"] += [e for e in doc["benchmarks"] if e["run_name"].startswith("ceiling/fma")]
    with pytest.raises(SuiteJsonError, match="ceiling/fma is listed twice"):
        load(write_json(__import__("json").dumps(doc)))
    reps1 = synth.suite_json(only={"ceiling"}, reps=1, shape="1.7.1")
    for e in reps1["benchmarks"]:
        e.pop("repetition_index", None)
    reps1["benchmarks"] += reps1["benchmarks"][:1]
    with pytest.raises(SuiteJsonError, match="listed twice"):
        load(write_json(__import__("json").dumps(reps1)))


@pytest.mark.parametrize("shape", ("1.7.1", "1.8.3"))
def test_a_benchmark_listed_twice_without_extra_repetitions_is_unusable(write_json, shape):
    """Listed twice is refused even where the repetition count cannot tell: a run written with only aggregates
    (--benchmark_report_aggregates_only) that holds one benchmark's aggregates twice, and a run whose
    repetition 0 is there twice and repetition 4 not (as many repetitions as declared)."""
    import json
    doc = synth.suite_json(only={"ceiling"}, shape=shape, aggregates_only=True)
    doc["benchmarks"] += [e for e in doc["benchmarks"] if e["run_name"] == "ceiling/fma/manual_time"]
    with pytest.raises(SuiteJsonError, match="ceiling/fma is listed twice"):
        load(write_json(json.dumps(doc)))
    doc = synth.suite_json(only={"ceiling"}, shape=shape)
    fma = [e for e in doc["benchmarks"] if e["run_name"] == "ceiling/fma/manual_time"]
    fma[4].update(repetition_index=0, real_time=fma[0]["real_time"])
    with pytest.raises(SuiteJsonError, match="ceiling/fma is listed twice"):
        load(write_json(json.dumps(doc)))
    assert load(write_json(json.dumps(synth.suite_json(only={"ceiling"}, shape=shape, aggregates_only=True))))


def test_old_barrier_names_read_as_sync(make_json):
    old, new = load(make_json("old.json", old_names=True)), load(make_json("new.json"))
    assert set(old.by_name) == set(new.by_name)
    assert old.by_name["sync/named_barrier/threads:64/blocks_per_sm:1"].fields["primitive"] == "named_barrier"


def test_model_side_file_stands_in_for_model_counters(make_json):
    """A run whose predictions are in model.json (gpubench --model_out) reads like one that carried them as
    counters: Record.get falls back on the model, and bounds.py gives the same table."""
    import json
    from gpubench.analysis import bounds
    counters = make_json("benchmarks.json", subdir="counters")
    doc = json.loads(counters.read_text())
    model = {}
    predicted = ("model_", "sectors_per_request", "conflict_ways")
    for e in doc["benchmarks"]:
        for k in [k for k in e if k.startswith(predicted)]:
            model.setdefault(e["run_name"], {}).setdefault(k, e.pop(k))  # the first entry, not stddev/cv
    side = make_json("benchmarks.json", subdir="side")
    side.write_text(json.dumps(doc))
    (side.parent / "model.json").write_text(json.dumps(model))
    a, b = load(counters), load(side)
    name = "gemm/naive/m:4092/n:4092/k:4092"
    assert "model_ffma_thread" not in b.by_name[name].median and b.by_name[name].model["model_ffma_thread"] > 0
    assert b.by_name[name].get("model_ffma_thread") == a.by_name[name].get("model_ffma_thread")
    assert b.value("coalescing/read/hbm/stride:32", "sectors_per_request") == 32
    assert bounds.markdown(a) == bounds.markdown(b) and "| gemm/naive/m:4092/n:4092/k:4092 |" in bounds.markdown(b)


def test_unreadable_model_file_is_unusable(make_json):
    path = make_json()
    (path.parent / "model.json").write_text("[1, 2")
    with pytest.raises(SuiteJsonError, match="model.json: not a readable model file"):
        load(path)


def test_context_keys_are_carried(write_json):
    doc = synth.suite_json(only={"ceiling"})
    doc["context"].update(gpu_uuid="GPU-1234", git_commit="abc123", suite_version="2")
    s = load(write_json(__import__("json").dumps(doc)))
    assert s.gpu_uuid == "GPU-1234" and s.context["git_commit"] == "abc123" and s.context["suite_version"] == "2"
