"""The latency detector (gpubench/analysis/latency_levels.py) on synthetic curves with known levels, its report table, and
the two latency pictures."""
import importlib
import math

import numpy as np
import pytest

from gpubench.analysis import latency_levels as lv
import synth_latency as sl
from conftest import call
from gpubench.suite_json import load
from test_plots import check_png, figure

KIB, MIB, GIB = sl.KIB, sl.MIB, sl.GIB


def curve(levels, lo=KIB, hi=4 * GIB, per_octave=3, noise=0.0, seed=0):
    ws = sl.log_sizes(lo, hi, per_octave, 128)
    rng = np.random.default_rng(seed)
    return ws, [sl.chase_latency(w, levels) * math.exp(rng.normal(0, noise)) for w in ws]


def check_levels(plats, levels, ws):
    """One plateau per level, at its latency (3 %), whose end brackets the level's capacity."""
    assert len(plats) == len(levels), [(p.start_ws, p.end_ws, p.latency) for p in plats]
    for p, (cap, cycles) in zip(plats, levels):
        # The last level is approached slowly (hits fall as C / ws): its plateau sits a little below it.
        assert p.latency == pytest.approx(cycles, rel=0.06 if math.isinf(cap) else 0.03)
        if math.isinf(cap):
            assert math.isnan(p.next_ws) and p.end_ws == ws[-1]
        else:
            assert p.end_ws <= 1.05 * cap and cap < p.next_ws, (p.end_ws, cap, p.next_ws)  # 1 % above C reads as C


def test_three_levels_exact():
    ws, lat = curve(sl.CACHE_LEVELS)
    check_levels(lv.find_plateaus(ws, lat), sl.CACHE_LEVELS, ws)


@pytest.mark.parametrize("seed", range(5))
def test_three_levels_with_noise(seed):
    ws, lat = curve(sl.CACHE_LEVELS, noise=0.015, seed=seed)
    check_levels(lv.find_plateaus(ws, lat), sl.CACHE_LEVELS, ws)


@pytest.mark.parametrize("seed", range(3))
def test_tlb_levels_two_points_per_octave(seed):
    levels = sl.TLB_LEVELS[2 * MIB][:2]  # hit, then a 45 % dearer level: both found, the miss cost right
    ws, lat = curve(levels, lo=4 * MIB, hi=256 * GIB, per_octave=2, noise=0.01, seed=seed)
    plats = lv.find_plateaus(ws, lat)
    check_levels(plats, levels, ws)
    assert plats[1].latency - plats[0].latency == pytest.approx(120, abs=12)


def test_order_of_points_does_not_matter():
    ws, lat = curve(sl.CACHE_LEVELS)
    a = lv.find_plateaus(ws, lat)
    b = lv.find_plateaus(ws[::-1], lat[::-1])
    assert [(p.start_ws, p.end_ws) for p in a] == [(p.start_ws, p.end_ws) for p in b]


def test_one_stray_point_does_not_split_a_level():
    ws, lat = curve(sl.CACHE_LEVELS)
    i = next(k for k, w in enumerate(ws) if w >= 8 * MIB)  # inside the L2 plateau
    lat[i] *= 1.6
    plats = lv.find_plateaus(ws, lat)
    assert len(plats) == 3
    assert plats[1].start_ws < ws[i] < plats[1].end_ws


def test_a_ramp_has_no_plateau_and_a_flat_line_is_one():
    ws = sl.log_sizes(KIB, GIB, 3, 128)
    assert lv.find_plateaus(ws, [30 * (w / KIB) ** 0.3 for w in ws]) == []  # +23 % per doubling
    flat = lv.find_plateaus(ws, [270.0] * len(ws))
    assert len(flat) == 1 and flat[0].start_ws == ws[0] and flat[0].end_ws == ws[-1] and math.isnan(flat[0].next_ws)


def test_too_few_points_are_no_level():
    ws = [1024, 2048, 4096, 8192, 16384, 32768]
    assert lv.find_plateaus(ws, [30, 30, 300, 300, 300, 300])[0].points == 4
    assert len(lv.find_plateaus(ws, [30, 30, 300, 300, 300, 300])) == 1  # two points at 30: not a level
    assert lv.find_plateaus([], []) == []


def test_bad_input():
    with pytest.raises(ValueError):
        lv.find_plateaus([1, 2], [1])


def test_knee_between_levels():
    ws, lat = curve(sl.CACHE_LEVELS)
    plats = lv.find_plateaus(ws, lat)
    k = lv.knee_ws(ws, lat, plats[0], plats[1])
    assert 224 * KIB < k < 2 * 224 * KIB  # halfway (in log) between 33 and 270: C / ws ~ 0.9... past C


def test_names_by_device_sizes():
    ws, lat = curve(sl.CACHE_LEVELS)
    plats = lv.find_plateaus(ws, lat)
    assert lv.name_cache_levels(plats, 256 * KIB, 60 * MIB) == ["L1", "L2", "DRAM"]
    ws, lat = curve(sl.L2_LEVELS)
    assert lv.name_cache_levels(lv.find_plateaus(ws, lat), 0, 60 * MIB) == ["L2", "DRAM"]


@pytest.mark.parametrize("g", [16, 32, 64, 128])
def test_granule(g):
    strides = [8, 16, 32, 64, 128, 256]
    lat = [33 + 237 * min(1.0, s / g) for s in strides]
    assert lv.granule(strides, lat) == g
    noisy = [y * (1 + 0.01 * (-1) ** i) for i, y in enumerate(lat)]
    assert lv.granule(strides, noisy) == g
    assert math.isnan(lv.granule([8], [30]))


def test_human_bytes():
    assert lv.human_bytes(1024) == "1 KiB"
    assert lv.human_bytes(60 * MIB) == "60 MiB"
    assert lv.human_bytes(1536) == "1.5 KiB"
    assert lv.human_bytes(100) == "100 B"
    assert lv.human_bytes(4 * GIB) == "4 GiB"
    assert lv.human_bytes(None) == "–"


@pytest.fixture
def latency_json(tmp_path):
    return sl.write(tmp_path / "benchmarks.json")


def test_report_table_from_a_run(latency_json):
    lines = lv.report_section(load(latency_json))
    text = "\n".join(lines)
    assert lines[0].startswith("## Latency") and "| level | latency cycles (ns) | capacity detected | device reports |" in text
    rows = {l.split(" | ")[0].strip("| "): l for l in lines if l.startswith("| ") and "---" not in l}
    assert "| 33 (17 ns) | 203 KiB (< 256 KiB) | 256 KiB L1 + shared per SM |" in rows["L1 (through L1)"]
    assert "60 MiB (cudaDeviceProp::l2CacheSize)" in rows["L2 (through L1)"] and "40.3 MiB (< 50.8 MiB)" in rows["L2 (through L1)"]
    assert "DRAM (through L1)" in rows and "DRAM (ld.global.cg)" in rows
    assert "22.6 KiB (< 32 KiB)" in rows["L1, shared-memory carve-out max"]
    assert "reach 64 MiB = 32 pages" in rows["TLB hit, one load per 2 MiB"]
    assert "+1" in rows["TLB level 1 missed, one load per 2 MiB"]  # +115 or so over the hit
    assert "| 32 B |" in rows["L1 fill granule (stride sweep, ld.global)"]
    assert "| 64 B |" in rows["L2 fill granule from DRAM (stride sweep, cg)"]
    assert "min 26" in rows["L2 per SM, one line (cg)"] and "132 SMs" in rows["L2 per SM, one line (cg)"]


def test_report_section_empty_without_latency(make_json):
    assert lv.report_section(load(make_json(only={"coalescing", "gemm"}))) == []


@pytest.mark.parametrize("script", ["latency", "latency_sm"])
def test_pictures(latency_json, script):
    r = call(script, latency_json)
    assert r.returncode == 0, r.stderr
    check_png(latency_json.parent / f"{script}.png")


@pytest.mark.parametrize("script", ["latency", "latency_sm"])
def test_no_latency_benchmarks_no_picture(make_json, script):
    path = make_json(only={"coalescing", "gemm"})
    r = call(script, path)
    assert r.returncode == 0 and "no picture written" in r.stderr
    assert not (path.parent / f"{script}.png").exists()


@pytest.mark.parametrize("script", ["latency", "latency_sm"])
def test_bad_input_is_one_line(tmp_path, script):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    r = call(script, bad)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_latency_figure_content(latency_json, monkeypatch, tmp_path):
    from plots import latency
    fig = figure("latency", latency_json, monkeypatch, tmp_path)
    ax, sweep = fig.axes
    labels = [l.get_label() for l in ax.get_lines()]
    assert "through L1 (ld.global), 128 B stride" in labels and "L2 only, one load per 2 MiB (TLB)" in labels
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("L1: 33 cyc") for t in texts) and any(t.startswith("L2: 2") for t in texts)
    assert any(t.startswith("DRAM") for t in texts)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert any("knee 32 B" in t.get_text() for t in sweep.get_legend().get_texts())
    assert importlib.import_module("plots.latency").PROG == "latency"


def test_latency_sm_figure_content(latency_json, monkeypatch, tmp_path):
    fig = figure("latency_sm", latency_json, monkeypatch, tmp_path)
    (ax,) = fig.axes
    points = [l for l in ax.get_lines() if l.get_marker() == "o"]
    assert len(points) == 2 and all(len(l.get_xdata()) == sl.SM_COUNT for l in points)
    one_line = points[0].get_ydata()
    assert min(one_line) < 300 < max(one_line)  # near and far SMs both drawn
