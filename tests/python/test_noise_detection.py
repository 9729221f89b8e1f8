"""python3 -m gpubench detection (gpubench/regress/detection.py) on the committed runs of one code on one H200
(results/h200/20261202T0{75839,80432,80735}Z): the issue-27 figures, pinned, so that a change to the verdict
rules, the profiles or the thresholds that loses them fails here (docs/regression-tracking.md, "Detection")."""
import json
from pathlib import Path

import pytest

from conftest import call, run_file

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "results" / "h200"
SAME_GPU_RUNS = tuple(run_file(H200 / r) for r in ("20261202T075839Z", "20261202T080432Z", "20261202T080735Z"))


def figures(*args):
    r = call("detection", *SAME_GPU_RUNS, *args, "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def same_gpu():
    return figures("--profile", H200 / "same_gpu_profile.json")


def test_same_gpu_targets(same_gpu):
    """Every ordered pair of the three runs, the committed same-GPU profile (made from these runs: in sample):
    nothing flagged; the median threshold over launches >= 100 µs <= 1.5 %; a 3 % slowdown planted in every
    benchmark caught >= 95 % of the time where the threshold is <= 2 %."""
    d = same_gpu
    assert d["pairs"] == 6 and d["false_alarms"] == {"flagged": 0, "pairs_exit_1": 0}
    assert d["threshold"]["floor"] == 0 and d["threshold"]["median"] <= 0.015
    assert d["planted"]["rate"] >= 0.95


def test_same_gpu_figures_as_measured(same_gpu):
    """The figures as docs/regression-tracking.md gives them."""
    d = same_gpu
    assert round(d["threshold"]["median"], 4) == 0.0069 and d["judged_per_pair"] == pytest.approx(682.333, abs=1e-3)
    assert (d["planted"]["caught"], d["planted"]["benchmarks"]) == (3479, 3528)
    assert (d["planted"]["caught_all"], d["planted"]["all"]) == (3674, 4094)


def test_between_gpu_profile_on_the_same_runs():
    """The same pairs judged as if the baselines were other H200s (the between-GPU profile): the floor sets most
    thresholds, and a 3 % change is almost never called."""
    d = figures("--profile", H200 / "noise_profile.json")
    assert d["threshold"]["median"] == pytest.approx(0.05) and d["threshold"]["floor"] > 3000
    assert d["planted"]["benchmarks"] == 0 and d["planted"]["rate_all"] < 0.02


def test_text_output_and_bad_input(tmp_path):
    r = call("detection", *SAME_GPU_RUNS[:2], "--profile", H200 / "same_gpu_profile.json")
    assert r.returncode == 0 and r.stdout.startswith("detection: 2 runs, 2 ordered pairs")
    assert "planted +3.0% in every benchmark of the contender: caught (slower)" in r.stdout
    r = call("detection", SAME_GPU_RUNS[0])
    assert r.returncode == 2 and r.stderr.strip() == "detection: error: give at least two runs"
    r = call("detection", SAME_GPU_RUNS[0], tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
