"""Edge detection (gpubench/analysis/edges.py) on synthetic bandwidth-by-working-set curves, and plots/hierarchy.py."""
import json
import math

import numpy as np
import pytest

from conftest import call
from gpubench.analysis.edges import cliffs, crossing, plateaus

KIB, MIB = 1 << 10, 1 << 20


def ladder(levels, edges, lo=16 * KIB, hi=480 * MIB, n=48, width=0.15, noise=0.0, seed=1):
    """A curve that holds levels[i] below edges[i] and falls smoothly (a logistic in log2 ws, `width`
    octaves wide) to the next level around each edge."""
    ws = [int(x) for x in np.geomspace(lo, hi, n)]
    rng = np.random.default_rng(seed)
    bw = []
    for w in ws:
        y = math.log(levels[-1])
        for k, e in enumerate(edges):  # sum of steps in log bandwidth
            step = math.log(levels[k]) - math.log(levels[k + 1])
            y += step / (1 + math.exp((math.log2(w) - math.log2(e)) / width))
        bw.append(math.exp(y) * (1 + noise * rng.uniform(-1, 1)))
    return ws, bw


H200 = dict(levels=[32e12, 10e12, 4.5e12], edges=[200 * KIB, 45 * MIB])


def test_three_levels_give_three_plateaus_and_two_cliffs():
    ws, bw = ladder(**H200)
    ps = plateaus(ws, bw)
    assert [round(p.level / 1e11) for p in ps] == [320, 100, 45]
    cs = cliffs(ws, bw)
    assert len(cs) == 2
    l1, l2 = cs
    # The edge is where the curve passes the geometric mean of the two levels: the logistic's middle.
    assert l1.mid_bytes == pytest.approx(200 * KIB, rel=0.08)
    assert l2.mid_bytes == pytest.approx(45 * MIB, rel=0.08)
    # 32 -> 10: the curve halves on the way down, just after the middle; 10 -> 4.5 halves near the bottom.
    assert 200 * KIB < l1.half_bytes < 400 * KIB
    assert 45 * MIB < l2.half_bytes < 90 * MIB


def test_noise_of_a_few_percent_changes_nothing():
    ws, bw = ladder(**H200, noise=0.04, seed=7)
    cs = cliffs(ws, bw)
    assert len(cs) == 2
    assert cs[0].mid_bytes == pytest.approx(200 * KIB, rel=0.15)
    assert cs[1].mid_bytes == pytest.approx(45 * MIB, rel=0.15)


def test_flat_curve_has_one_plateau_and_no_cliff():
    ws, bw = ladder(levels=[5e12, 5e12], edges=[1 * MIB])
    assert len(plateaus(ws, bw)) == 1
    assert cliffs(ws, bw) == []


def test_small_step_between_plateaus_is_not_a_cliff():
    # L2 that sags from 10.6 to 9.8 TB/s: two plateaus maybe, but no cliff between them.
    ws, bw = ladder(levels=[32e12, 10.6e12, 9.8e12, 4.5e12], edges=[200 * KIB, 12 * MIB, 45 * MIB])
    cs = cliffs(ws, bw)
    assert len(cs) == 2
    assert cs[0].upper.level > 30e12 and cs[1].lower.level < 5e12


def test_a_shallow_step_like_the_h200_l1_edge_is_a_cliff():
    # Measured on an H200: 31.5 TB/s up to 180 KiB, 26.7 TB/s from 224 KiB (L1 capacity at carve-out 0).
    ws, bw = ladder(levels=[31.5e12, 26.7e12, 9e12], edges=[200 * KIB, 30 * MIB])
    cs = cliffs(ws, bw)
    assert len(cs) == 2
    assert cs[0].mid_bytes == pytest.approx(200 * KIB, rel=0.08) and cs[0].half_bytes is None


def test_half_is_none_when_the_lower_level_is_more_than_half():
    ws, bw = ladder(levels=[10e12, 6e12], edges=[4 * MIB])
    (c,) = cliffs(ws, bw)
    assert c.half_bytes is None
    assert c.mid_bytes == pytest.approx(4 * MIB, rel=0.08)


def test_crossing_interpolates_in_log_working_set():
    assert crossing([1, 4], [4.0, 2.0], 3.0, 0, 1) == pytest.approx(2.0)
    assert crossing([1, 4], [4.0, 2.0], 1.0, 0, 1) is None


@pytest.mark.parametrize("ws, bw", [([1, 2], [1.0]), ([2, 1], [1.0, 1.0]), ([1, 2], [1.0, 0.0])])
def test_bad_curves_are_refused(ws, bw):
    with pytest.raises(ValueError):
        plateaus(ws, bw)


def suite_json(path, ws, bw, l1=256 * KIB, l2=60 * MIB):
    doc = {"context": {"suite": "gpu-memory-microbench", "gpu_name": "NVIDIA H200", "l2_bytes": str(l2),
                       "l1_smem_per_sm_bytes": str(l1)},
           "benchmarks": [{"name": f"hierarchy/read/ws:{w}/manual_time", "run_name": f"hierarchy/read/ws:{w}/manual_time",
                           "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "iterations": 10,
                           "real_time": 100.0, "cpu_time": 100.0, "time_unit": "us", "bytes_per_second": b,
                           "working_set_bytes": w} for w, b in zip(ws, bw)]}
    path.write_text(json.dumps(doc))
    return path


def test_plot_marks_the_edges(tmp_path, monkeypatch):
    from plots import hierarchy
    ws, bw = ladder(**H200, noise=0.02)
    f = suite_json(tmp_path / "benchmarks.json", ws, bw)
    saved = []
    monkeypatch.setattr(hierarchy, "save", lambda fig, *a: saved.append(fig) or 0)
    assert hierarchy.main([str(f)]) == 0
    ax = saved[0].axes[0]
    assert ax.get_xscale() == "log"
    labels = [line.get_label() for line in ax.get_lines()]
    assert sum(lab.startswith("edge ") for lab in labels) == 2
    assert any(lab.startswith("L2 (device)") for lab in labels)
    assert any(lab.startswith("L1 + shared per SM (device)") for lab in labels)
    clean_ws, clean_bw = ladder(**H200)
    assert [line.split(":")[0] for line in hierarchy.edge_lines(clean_ws, clean_bw)] == ["32.00 -> 10.00 TB/s",
                                                                                      "10.00 -> 4.50 TB/s"]


def test_script_writes_png_and_refuses_bad_input(tmp_path):
    ws, bw = ladder(**H200)
    f = suite_json(tmp_path / "benchmarks.json", ws, bw)
    r = call("hierarchy", f)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "hierarchy.png").stat().st_size > 10000
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = call("hierarchy", bad)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_no_hierarchy_points_writes_no_picture(tmp_path):
    f = suite_json(tmp_path / "benchmarks.json", [], [])
    r = call("hierarchy", f)
    assert r.returncode == 0 and not (tmp_path / "hierarchy.png").exists()
