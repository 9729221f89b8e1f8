"""The pictures and report sections of the families issue 29 and 30 added (async, dsm, tensor, the BF16 tensor-core
GEMM ladder), from the recorded H200 run (tests/python/data/h200_cut.json, the new families cut from results/h200/20261202T075839Z)."""
import importlib
import json

import pytest

import synth
from conftest import call
from gpubench.suite_json import load
from gpubench.tables import num
from test_plots import check_png

NEW = {"async": "async", "dsm": "dsm", "tensor": "tensor", "tc_ladder": "gemm"}  # picture -> family it draws
FAMILIES = {"async", "dsm", "tensor", "gemm", "ceiling"}  # ceiling: the limits drawn beside them


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """One synthetic run with every new picture drawn (the figures kept) and the report written, once for the
    module: drawing is what takes the time. -> (path, {script: (CompletedProcess, figure)}, report text)."""
    path = synth.write(tmp_path_factory.mktemp("run") / "benchmarks.json", only=FAMILIES, reps=3)
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        for script in NEW:
            module, saved = importlib.import_module(f"plots.{script}"), []
            mp.setattr(module, "save", lambda fig, *a, real=module.save, saved=saved: saved.append(fig) or real(fig, *a))
            out[script] = (call(script, path), saved[0] if saved else None)
    r = call("report", path)
    assert r.returncode == 0, r.stderr
    return path, out, (path.parent / "report.md").read_text()


def test_every_new_picture_and_its_report_sections(drawn):
    path, figures, text = drawn
    for script, (r, _) in figures.items():
        assert r.returncode == 0 and r.stderr == "", r.stderr
        check_png(path.parent / f"{script}.png")
    s = load(path)
    expect = {  # heading -> a number of the input as its table writes it
        "## Asynchronous copies: bandwidth": num(s.value("async/tma/l2/bandwidth/kind:bulk/copy:16384", "bytes_per_clock_per_sm")),
        "## Asynchronous copies: latency": num(s.value("async/cp_async/hbm/latency/bytes:16", "cycles")),
        "## Distributed shared memory: bandwidth": num(s.value("dsm/bandwidth/write/cluster_size:8", "bytes_per_clock_per_sm")),
        "## Distributed shared memory: latency": num(s.value("dsm/latency/target:remote", "cycles")),
        "## Cluster barrier": num(s.value("dsm/barrier/cluster_sync/cluster_size:16", "cycles_per_barrier")),
        "## TMA multicast": num(s.value("async/tma/l2/bandwidth/kind:multicast/cluster_size:4", "l2_read_bytes_per_second"), 1e-12),
        "## Tensor cores: throughput": num(s.value("tensor/wgmma/bf16/ss/n:256/data:random", "flops_per_clock_per_sm")),
        "## Tensor cores: latency": num(s.value("tensor/mma/tf32/latency", "cycles")),
        "## Tensor-core GEMM ladder (BF16)": num(s.value("gemm/wgmma_tma/m:4096/n:4096/k:4096", "flops_per_second"), 1e-12),
    }
    for heading, number in expect.items():
        assert heading + "\n" in text, heading
        body = text.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
        assert f"| {number} |" in body, (heading, number)
    for script in NEW:
        assert f"]({script}.png)" in text


def test_ladder_rows_are_percent_of_cublas_bf16(drawn):
    path, _, text = drawn
    text = text.split("## Tensor-core GEMM ladder (BF16)\n", 1)[1]
    s = load(path)
    shape = "m:4096/n:4096/k:4096"
    mine, ref = (s.value(f"gemm/{k}/{shape}", "flops_per_second") for k in ("mma_swizzled", "cublas_bf16"))
    assert f"| mma_swizzled | {num(mine, 1e-12)} | {num(mine / ref, 100)} |" in text
    assert f"BF16 dense peak {num(132 * 1980e6 * 4096, 1e-12)} TFLOP/s" in text  # the context's SMs and clock


def test_async_bars_and_ceiling_lines_hold_the_run(drawn):
    path, figures, _ = drawn
    l2, hbm, lat = figures["async"][1].axes
    s = load(path)
    labels = [t.get_text() for t in l2.get_yticklabels()]
    i = labels.index("cp_async  bytes:16/stages:4")
    assert l2.patches[i].get_width() == pytest.approx(
        s.value("async/cp_async/l2/bandwidth/bytes:16/stages:4", "bytes_per_clock_per_sm"))
    ceiling = [line for line in l2.get_lines() if line.get_label().startswith("ceiling/read/l2")][0]
    assert ceiling.get_xdata()[0] == pytest.approx(s.value("ceiling/read/l2", "bytes_per_clock_per_sm"))
    assert any(line.get_label().startswith("ceiling/read/hbm") for line in hbm.get_lines())
    tma = {line.get_label(): line for line in lat.get_lines()}["tma bulk, HBM"]
    assert list(tma.get_xdata()) == [16, 1024, 4096, 8192, 16384]  # the recorded bulk latency sizes


def test_dsm_and_tensor_lines(drawn):
    path, figures, _ = drawn
    s = load(path)
    bw, barrier, latency, multicast = figures["dsm"][1].axes
    read = {line.get_label(): line for line in bw.get_lines()}["read"]
    assert list(read.get_xdata()) == [1, 2, 4, 8, 16]
    assert read.get_ydata()[1] == pytest.approx(s.value("dsm/bandwidth/read/cluster_size:2", "bytes_per_clock_per_sm"))
    l2_read = {line.get_label(): line for line in multicast.get_lines()}["multicast: read from L2"]
    rec = s.by_name["async/tma/l2/bandwidth/kind:multicast/cluster_size:8"]
    assert l2_read.get_ydata()[-1] == pytest.approx(rec.get("bytes_per_clock_per_sm") / 8)
    mma, wgmma = figures["tensor"][1].axes
    peaks = sorted({round(line.get_ydata()[0]) for line in wgmma.get_lines() if line.get_linestyle() == ":"})
    assert peaks == [4096, 8192]  # bf16, fp8 (docs/families/tensor.md)


def test_no_peak_where_no_figure_is_documented(make_json):
    """The Hopper peaks are not drawn or tabulated for another GPU (no invented numbers)."""
    path = make_json(only={"tensor"}, reps=3)
    doc = json.loads(path.read_text())
    doc["context"]["compute_capability"] = "8.0"
    path.write_text(json.dumps(doc))
    call("report", path)
    rows = (path.parent / "report.md").read_text().split("## Tensor cores: throughput\n", 1)[1].split("\n## ", 1)[0]
    assert "| 4,096 |" not in rows and "| mma | bf16 |" in rows


@pytest.mark.parametrize("script", NEW)
def test_nothing_to_plot_without_the_family(make_json, script):
    path = make_json(only={"ceiling", "coalescing"}, reps=3)
    r = call(script, path)
    assert r.returncode == 0 and "no picture written" in r.stderr
    assert not (path.parent / f"{script}.png").exists()
