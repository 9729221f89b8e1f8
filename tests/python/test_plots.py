"""Each plot script writes a readable PNG, and the figure holds the numbers from the JSON."""
import importlib

import matplotlib.image
import numpy as np
import pytest

from conftest import PLOT_SCRIPTS, call, run
from gpubench.suite_json import load


def check_png(path):
    img = matplotlib.image.imread(path)
    assert img.shape[0] > 300 and img.shape[1] > 500, img.shape
    assert np.std(img[..., :3]) > 0.05, "picture is blank"


@pytest.mark.parametrize("script", PLOT_SCRIPTS)
def test_script_writes_png_next_to_json(suite_file, script):
    r = call(script, suite_file)
    assert r.returncode == 0, r.stderr
    png = suite_file.parent / f"{script}.png"
    assert f"wrote {png}" in r.stdout
    check_png(png)


@pytest.mark.parametrize("script", PLOT_SCRIPTS)
def test_command_line(make_json, script):
    """python3 -m plots.NAME JSON as run_all.sh runs it (the other tests call main() in-process)."""
    path = make_json()
    r = run(script, path)
    png = path.parent / f"{script}.png"
    assert (r.returncode, r.stdout) == (0, f"{script}: wrote {png}\n"), r.stderr
    assert all(line.startswith(f"{script}: ") and "error" not in line for line in r.stderr.splitlines()), r.stderr
    check_png(png)


def test_output_option(make_json, tmp_path):
    out = tmp_path / "elsewhere" / "s.png"
    out.parent.mkdir()
    r = call("stride", make_json(), "-o", out)
    assert r.returncode == 0, r.stderr
    check_png(out)
    assert not (tmp_path / "stride.png").exists()


def figure(script, path, monkeypatch, tmp_path):
    """Run script.main in-process and hand back the figure it saved."""
    module = importlib.import_module(f"plots.{script}")
    saved, real = [], module.save

    def keep(fig, *args):
        saved.append(fig)
        return real(fig, *args)

    monkeypatch.setattr(module, "save", keep)
    assert module.main([str(path), "-o", str(tmp_path / f"{script}-inproc.png")]) == 0
    return saved[0]


def lines(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def test_stride_content(suite_file, monkeypatch, tmp_path):
    fig = figure("stride", suite_file, monkeypatch, tmp_path)
    assert "NVIDIA H200" in fig._suptitle.get_text()  # get_suptitle() needs matplotlib 3.8
    hbm, l2, l1 = fig.axes
    assert [a.get_title() for a in fig.axes] == ["HBM", "L2", "L1"]
    assert "GB/s" in hbm.get_ylabel() and "stride" in hbm.get_xlabel() and hbm.get_xscale() == "log"
    s = load(suite_file)
    useful = lines(hbm)["read: useful"]
    strides = sorted(r.fields["stride"] for r in s.ok("coalescing") if r.fields["level"] == "hbm" and r.fields["op"] == "read")
    assert list(useful.get_xdata()) == strides and len(strides) == 10
    assert useful.get_ydata()[0] == pytest.approx(s.value("coalescing/read/hbm/stride:1", "useful_bytes_per_second") / 1e9)
    memcpy = [line for label, line in lines(hbm).items() if label.startswith("memcpy D2D")]
    assert memcpy and memcpy[0].get_ydata()[0] == pytest.approx(s.value("ceiling/memcpy_d2d", "bytes_per_second") / 1e9)
    assert not any(label.startswith("memcpy") for label in lines(l1))  # HBM panel only


def test_banks_content(suite_file, monkeypatch, tmp_path):
    fig = figure("banks", suite_file, monkeypatch, tmp_path)
    assert [a.get_title() for a in fig.axes] == ["4-byte elements", "8-byte elements", "16-byte elements"]
    ax = fig.axes[0]
    assert ax.get_xscale() == "symlog" and 0 in ax.get_xticks()
    got = lines(ax)
    assert {"pad 0", "pad 1", "swizzle", "pad 0: model"} <= got.keys()
    s = load(suite_file)
    base = "smem_banks/throughput/width:4"
    x = list(got["pad 0"].get_xdata())
    y = got["pad 0"].get_ydata()[x.index(32)]
    assert y == pytest.approx(s.value(f"{base}/stride:32/pad:0", "cycles_per_request"))
    model = got["pad 0: model"].get_ydata()[x.index(32)]
    ways = s.value(f"{base}/stride:32/pad:0", "conflict_ways")
    assert ways == 32 and model == pytest.approx(32 * s.value(f"{base}/stride:1/pad:0", "cycles_per_request"))


def test_sync_content(suite_file, monkeypatch, tmp_path):
    fig = figure("sync", suite_file, monkeypatch, tmp_path)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "cycles per barrier" and "warps" in ax.get_xlabel()
    s = load(suite_file)
    blocks = {r.fields["blocks_per_sm"] for r in s.ok("sync")}
    assert len(ax.get_lines()) == 3 * len(blocks)  # one line per primitive and blocks/SM
    first = ax.get_lines()[0]  # syncthreads, 1 block/SM
    threads = sorted(r.fields["threads"] for r in s.ok("sync")
                     if r.fields["primitive"] == "syncthreads" and r.fields["blocks_per_sm"] == 1)
    assert list(first.get_xdata()) == [t // 32 for t in threads]
    assert first.get_ydata()[-1] == pytest.approx(
        s.value(f"sync/syncthreads/threads:{threads[-1]}/blocks_per_sm:1", "cycles_per_barrier"))


def test_gemm_content(suite_file, monkeypatch, tmp_path):
    fig = figure("gemm", suite_file, monkeypatch, tmp_path)
    flops, pct = fig.axes
    assert "GFLOP/s" in flops.get_ylabel() and "% of cuBLAS" in pct.get_ylabel()
    assert "cublas" in lines(flops) and "cublas" not in lines(pct)
    s = load(suite_file)
    shape = "m:4092/n:4092/k:4092"
    expected = s.value(f"gemm/smem/{shape}", "flops_per_second") / s.value(f"gemm/cublas/{shape}", "flops_per_second")
    smem = lines(pct)["smem"]
    assert smem.get_ydata()[list(smem.get_xdata()).index(4092)] == pytest.approx(100 * expected)


@pytest.mark.parametrize("script, needs", [("stride", "coalescing"), ("banks", "smem_banks"),
                                           ("sync", "sync"), ("gemm", "gemm"), ("roofline", "gemm")])
def test_missing_family_exits_0_without_png(make_json, script, needs):
    path = make_json(only={"ceiling"})
    r = call(script, path)
    assert r.returncode == 0
    assert "no picture written" in r.stderr
    assert not (path.parent / f"{script}.png").exists()


def test_partial_data_still_plots_and_says_what_is_missing(make_json, monkeypatch, tmp_path):
    from synth import benchmarks
    l1 = [n for n, *_ in benchmarks() if n.startswith("coalescing/") and "/l1/" in n]
    path = make_json(only={"coalescing"}, drop=l1)
    r = call("stride", path)
    assert r.returncode == 0, r.stderr
    assert "coalescing/*/l1" in r.stderr and "memcpy_d2d" in r.stderr
    check_png(path.parent / "stride.png")
    assert [a.get_title() for a in figure("stride", path, monkeypatch, tmp_path).axes] == ["HBM", "L2"]


def test_errored_benchmarks_are_not_plotted(make_json, monkeypatch, tmp_path):
    path = make_json(errors={"coalescing/read/hbm/stride:4": "launch failed"})
    hbm = figure("stride", path, monkeypatch, tmp_path).axes[0]
    assert 4 not in list(lines(hbm)["read: useful"].get_xdata())
    assert 4 in list(lines(hbm)["write: useful"].get_xdata())
