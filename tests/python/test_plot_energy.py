"""plots/energy.py: the staircase holds the energy family's numbers (pJ in total, and above idle in front),
says which bars are missing, and writes nothing for a run without the family."""
import matplotlib.image
import numpy as np

from conftest import call
from test_report_energy import ENERGY, with_energy_run


def test_staircase_holds_the_numbers(make_json, monkeypatch):
    path = with_energy_run(make_json(only={"ceiling"}))
    drawn = {}
    import plots.energy as mod
    real = mod.bars

    def spy(ax, recs, labels, counter):
        n = real(ax, recs, labels, counter)
        drawn[counter] = [(round(p.get_y() * 1e3) / 1e3, round(p.get_height() * 1e3) / 1e3) for p in ax.patches]
        return n

    monkeypatch.setattr(mod, "bars", spy)
    r = call("energy", path)
    assert r.returncode == 0, r.stderr
    img = matplotlib.image.imread(path.parent / "energy.png")
    assert img.shape[0] > 300 and img.shape[1] > 500 and np.std(img[..., :3]) > 0.05
    # HBM read: 109 pJ in total, 81 above idle; FFMA: 6.0 and 4.1 pJ.
    assert drawn["joules_per_byte"] == [(0.0, 109.0), (0.0, 81.0)]
    assert drawn["joules_per_flop"] == [(0.0, 6.0), (0.0, 4.1)]
    assert "no energy/read/l1; its bar is left out" in r.stderr
    assert set(ENERGY) == {"energy/read/hbm/data:random", "energy/fma/data:random"}


def test_no_energy_family_no_picture(make_json):
    path = make_json(only={"ceiling"})
    r = call("energy", path)
    assert r.returncode == 0 and "no picture written" in r.stderr
    assert not (path.parent / "energy.png").exists()
