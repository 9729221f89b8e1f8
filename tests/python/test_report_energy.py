"""report.py with the energy family: its own section (pJ per byte or FLOP, in total and above idle, the power)
and a pJ/B-above-idle column in the Ceilings table beside each level's rate; neither without energy benchmarks."""
import json
import re

from conftest import run

# energy benchmark -> (the recorded benchmark whose entries it copies, counter stem, total, above idle) in J
ENERGY = {"energy/read/hbm/data:random": ("ceiling/read/hbm", "joules_per_byte", 109e-12, 81e-12),
          "energy/fma/data:random": ("ceiling/fma", "joules_per_flop", 6.0e-12, 4.1e-12)}


def with_energy_run(path):
    """Adds the energy benchmarks to the run at `path`: copies of the entries of the ceilings they measure, with
    the energy counters (repetition r off by r - 2 per mille)."""
    doc = json.loads(path.read_text())
    extra = []
    for name, (source, stem, total, above) in ENERGY.items():
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
    ceilings = section(text, "## Ceilings")
    header = row(ceilings, "ceiling")
    assert "pJ/B above idle" in header
    at = header.index("pJ/B above idle")
    assert row(ceilings, "read/hbm")[at] == "81.00" and row(ceilings, "fma")[at] == "4.10"
    assert row(ceilings, "read/l1")[at] == "–"  # no energy/read/l1 in this run


def test_no_energy_no_column(make_json):
    text = report(make_json(only={"ceiling"}))
    assert "## Energy" not in text and "pJ/B above idle" not in text
