"""report.py with the energy family: its own section (pJ per byte or FLOP, in total and above idle, the power),
a pJ/B-above-idle column in the Ceilings table beside each level's rate, and the levels side by side (latency,
bandwidth, energy) with the ordering check; none of it without energy benchmarks. On a synthetic run with the
tensor-core points and on a committed H200 run."""
import json
import re
from pathlib import Path

from conftest import ROOT, run

# energy benchmark -> (the recorded benchmark whose entries it copies, counter stem, total, above idle) in J.
# Synthetic figures (the tensor cores' are not measured yet): the tests check where they go, not what they are.
ENERGY = {"energy/read/hbm/data:random": ("ceiling/read/hbm", "joules_per_byte", 109e-12, 81e-12),
          "energy/fma/data:random": ("ceiling/fma", "joules_per_flop", 6.0e-12, 4.1e-12),
          "energy/wgmma/bf16/data:random": ("ceiling/fma", "joules_per_flop", 0.75e-12, 0.61e-12),
          "energy/wgmma/bf16/data:zero": ("ceiling/fma", "joules_per_flop", 0.5e-12, 0.36e-12),
          "energy/mma/bf16/data:random": ("ceiling/fma", "joules_per_flop", 1.0e-12, 0.8e-12)}
# A committed H200 run with the energy family (the figures below are what it measured).
COMMITTED = Path(ROOT) / "results/h200/20261202T080735Z/benchmarks.json.gz"


def with_energy_run(path, energy=None):
    """Adds the energy benchmarks (`energy`, default ENERGY) to the run at `path`: copies of the entries of the
    benchmarks named, with the energy counters (repetition r off by r - 2 per mille)."""
    doc = json.loads(path.read_text())
    extra = []
    for name, (source, stem, total, above) in (energy or ENERGY).items():
        for e in doc["benchmarks"]:
            if e["name"].split("/manual_time")[0] != source:
                continue
            c = dict(e, name=e["name"].replace(source, name, 1), run_name=e.get("run_name", e["name"]).replace(source, name, 1))
            k = 1 + 1e-3 * (e.get("repetition_index", 2) - 2)  # the median repetition (of 5) exact
            c.update({stem: total * k, stem + "_above_idle": above * k, "watts": 489.5, "idle_watts": 125.0,
                      "sm_clock_mhz": 1980.0, "throttled": 0.0, "energy_counter_period_ms": 20.0,
                      "energy_from_counter": 1.0})
            extra.append(c)
    doc["benchmarks"] += extra
    doc["context"].update(idle_watts="125.00", energy_source="counter")  # as gpubench writes them (strings)
    path.write_text(json.dumps(doc))
    return path


def report(path):
    r = run("report", path)
    assert r.returncode == 0, r.stderr
    return (path.parent / "report.md").read_text()


def row(text, first):
    m = re.search(r"^\| " + re.escape(first) + r" \| (.*) \|$", text, re.M)
    assert m, f"no row {first!r}"
    return m.group(1).split(" | ")


def section(text, title):
    return text.split(title + "\n", 1)[1].split("\n#", 1)[0]


def test_energy_section_and_ceilings_column(make_json):
    text = report(with_energy_run(make_json(only={"ceiling"})))
    energy = section(text, "## Energy")
    hbm = row(energy, "read/hbm/data:random")
    assert hbm[:8] == ["B", "109", "81.00", "490", "125", "1,980", "0", "counter"]
    assert row(energy, "fma/data:random")[:3] == ["FLOP", "6.00", "4.10"]
    assert row(energy, "wgmma/bf16/data:random")[:3] == ["FLOP", "0.75", "0.61"]
    assert row(energy, "wgmma/bf16/data:zero")[:3] == ["FLOP", "0.5", "0.36"]
    assert row(energy, "mma/bf16/data:random")[:3] == ["FLOP", "1.00", "0.8"]
    ceilings = section(text, "## Ceilings")
    header = row(ceilings, "ceiling")
    assert "pJ/B above idle" in header
    at = header.index("pJ/B above idle")
    assert row(ceilings, "read/hbm")[at] == "81.00" and row(ceilings, "fma")[at] == "4.10"
    assert row(ceilings, "read/l1")[at] == "–"  # no energy/read/l1 in this run


def test_no_energy_no_column(make_json):
    text = report(make_json(only={"ceiling"}))
    assert "## Energy" not in text and "pJ/B above idle" not in text


def test_levels_side_by_side_and_the_ordering(make_json):
    levels = section(report(with_energy_run(make_json(only={"ceiling"}))), "## Energy by level")
    # the register level: an FFMA's 4.1 pJ per FLOP over its 6 operand bytes per FLOP
    assert row(levels, "register (FFMA operand)")[2:4] == ["1.00", "0.683"]
    assert row(levels, "HBM")[2:4] == ["109", "81.00"]
    assert "| shared / L1 |" not in levels  # not measured in this run: no row
    assert "Idle 125 W, source counter." in levels
    assert ("Ordering per byte above idle (register < shared/L1 < L2 < HBM < PCIe) holds: register (FFMA operand) "
            "0.683 < HBM 81 (not measured: shared / L1, L2, PCIe (host→device)).") in levels


def test_an_ordering_that_breaks_is_said(make_json):
    cheap_hbm = dict(ENERGY, **{"energy/read/hbm/data:random": ("ceiling/read/hbm", "joules_per_byte", 0.5e-12, 0.3e-12)})
    levels = section(report(with_energy_run(make_json(only={"ceiling"}), cheap_hbm)), "## Energy by level")
    assert "does not hold: register (FFMA operand) 0.683 ≥ HBM 0.3" in levels


def test_committed_h200_run(tmp_path):
    """The committed H200 run: every level measured, the physics' ordering holds, the Ceilings column filled."""
    r = run("report", COMMITTED, "-o", tmp_path / "report.md")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "report.md").read_text()
    levels = section(text, "## Energy by level")
    assert [row(levels, lv)[3] for lv in ("shared / L1", "L2", "HBM", "PCIe (host→device)")] == ["8.51", "37.09", "129", "205"]
    assert row(levels, "shared / L1")[0] == "32 cycles (16 ns)"
    assert "(register < shared/L1 < L2 < HBM < PCIe) holds: register (FFMA operand) 0.66 < shared / L1 8.51 < " \
           "L2 37.1 < HBM 129 < PCIe (host→device) 205." in levels
    ceilings = section(text, "## Ceilings")
    at = row(ceilings, "ceiling").index("pJ/B above idle")
    assert row(ceilings, "read/l2")[at] == "37.09"
