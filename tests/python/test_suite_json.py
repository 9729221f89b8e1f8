import math

import pytest

import suite_json
import synth
from suite_json import TIME, SuiteJsonError, load, parse_name


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
