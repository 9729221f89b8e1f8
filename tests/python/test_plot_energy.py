"""plots/energy.py: the staircase holds the energy family's numbers (pJ in total, and above idle in front), the
tensor cores' per FLOP beside FFMA's, the energy roofline one line per compute unit and level through
pJ/FLOP + pJ/B / intensity; it says which bars are missing, and writes nothing for a run without the family.
On a synthetic run (test_report_energy.ENERGY) and on a committed H200 run."""
import matplotlib.image
import numpy as np
import pytest

from conftest import call
from test_report_energy import COMMITTED, ENERGY, with_energy_run


@pytest.fixture
def spied(monkeypatch):
    """Runs plots/energy.py, recording each bar panel's (bottom, height) pairs and the roofline's lines."""
    import plots.energy as mod
    drawn = {}
    real_bars, real_roof = mod.bars, mod.roofline

    def bars(ax, recs, labels, counter):
        n = real_bars(ax, recs, labels, counter)
        drawn[counter] = [(round(p.get_y() * 1e3) / 1e3, round(p.get_height() * 1e3) / 1e3) for p in ax.patches]
        return n

    def roofline(ax, suite):
        n = real_roof(ax, suite)
        drawn["roofline"] = [(line.get_xdata(), line.get_ydata()) for line in ax.lines if len(line.get_xdata()) > 2]
        drawn["floors"] = sorted(round(line.get_ydata()[0], 3) for line in ax.lines if len(line.get_xdata()) == 2)
        return n

    monkeypatch.setattr(mod, "bars", bars)
    monkeypatch.setattr(mod, "roofline", roofline)

    def draw(*args):
        r = call("energy", *args)
        assert r.returncode == 0, r.stderr
        return r, drawn
    return draw


def test_staircase_and_roofline_hold_the_numbers(make_json, spied):
    path = with_energy_run(make_json(only={"ceiling"}))
    r, drawn = spied(path)
    img = matplotlib.image.imread(path.parent / "energy.png")
    assert img.shape[0] > 300 and img.shape[1] > 500 and np.std(img[..., :3]) > 0.05
    # HBM read: 109 pJ in total, 81 above idle; per FLOP: FFMA 6.0 and 4.1, wgmma 0.75 and 0.61 (its zero data
    # 0.5 and 0.36), mma.sync 1.0 and 0.8 -- each bar's total, then its part above idle.
    assert drawn["joules_per_byte"] == [(0.0, 109.0), (0.0, 81.0)]
    assert drawn["joules_per_flop"] == [(0.0, 6.0), (0.0, 4.1), (0.0, 0.75), (0.0, 0.61), (0.0, 0.5), (0.0, 0.36),
                                        (0.0, 1.0), (0.0, 0.8)]
    # One level (HBM, 81 pJ/B) for three compute units: 4.1, 0.61, 0.8 pJ/FLOP + 81 / intensity.
    assert drawn["floors"] == [0.61, 0.8, 4.1]
    assert len(drawn["roofline"]) == 3
    for (xs, ys), per_flop in zip(drawn["roofline"], (4.1, 0.61, 0.8)):
        assert np.allclose(ys, per_flop + 81.0 / np.asarray(xs), rtol=1e-9)
    assert "no energy/read/l1; its bar is left out" in r.stderr
    assert "no energy/mma/bf16/data:zero; its bar is left out" in r.stderr
    assert set(ENERGY) == {"energy/read/hbm/data:random", "energy/fma/data:random", "energy/wgmma/bf16/data:random",
                           "energy/wgmma/bf16/data:zero", "energy/mma/bf16/data:random"}


def test_committed_h200_run(tmp_path, spied):
    """The committed run (no tensor-core points yet): L1, L2, HBM and PCIe under FFMA, as measured."""
    _, drawn = spied(COMMITTED, "-o", tmp_path / "energy.png")
    assert (tmp_path / "energy.png").stat().st_size > 10000
    heights = [h for _, h in drawn["joules_per_byte"]]  # L1 and L2 in total and above idle, as the report has them
    assert np.allclose(heights[:4], [12.40, 8.51, 48.46, 37.09], rtol=1e-3)
    assert np.allclose(drawn["floors"], [3.96], rtol=1e-3)
    assert len(drawn["roofline"]) == 4  # shared / L1, L2, HBM, PCIe under FFMA
    xs, ys = drawn["roofline"][0]
    assert np.allclose(ys, drawn["floors"][0] + heights[1] / np.asarray(xs), rtol=1e-3)


def test_no_energy_family_no_picture(make_json):
    path = make_json(only={"ceiling"})
    r = call("energy", path)
    assert r.returncode == 0 and "no picture written" in r.stderr
    assert not (path.parent / "energy.png").exists()
