"""compare.py --metric on the energy family's counters (joules_per_byte, joules_per_flop and their _above_idle):
more joules for the same work is worse, so a contender that spends more is slower (exit 1) and one that spends
less is faster, judged with the noise rules every metric gets."""
import json

import pytest

from conftest import run

HBM, FMA = "ceiling/read/hbm", "ceiling/fma"  # recorded benchmarks standing in for energy/... ones
VALUES = {"joules_per_byte": 1.09e-10, "joules_per_byte_above_idle": 8.1e-11,
          "joules_per_flop": 6.0e-12, "joules_per_flop_above_idle": 4.1e-12}


def with_energy(path, factors, spread=0.002):
    """Adds the energy counters to HBM (per byte) and FMA (per flop) in every repetition and aggregate of the
    run at `path`, times factors[name] (1 by default), each repetition off by a little (spread) like a real run."""
    doc = json.loads(path.read_text())
    for e in doc["benchmarks"]:
        name = e["name"].split("/manual_time")[0]
        if name not in (HBM, FMA):
            continue
        kind = "byte" if name == HBM else "flop"
        jitter = 1.0 + spread * ((e.get("repetition_index", 0) % 3) - 1)
        if e.get("aggregate_name") in ("stddev", "cv"):
            jitter = spread
        for counter, v in VALUES.items():
            if f"_per_{kind}" in counter:
                e[counter] = v * factors.get(name, 1.0) * jitter
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("metric", ["joules_per_byte", "joules_per_byte_above_idle"])
def test_more_joules_per_byte_is_slower(make_json, metric):
    base = with_energy(make_json("a.json", noise=0.003), {})
    cont = with_energy(make_json("b.json", seed=1, noise=0.003), {HBM: 1.10})
    r = run("compare", base, cont, "--metric", metric)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "lower is better" in r.stdout
    row = next(l for l in r.stdout.splitlines() if l.startswith(HBM + " "))
    assert row.endswith("slower") and "+10.0%" in row


@pytest.mark.parametrize("metric", ["joules_per_flop", "joules_per_flop_above_idle"])
def test_fewer_joules_per_flop_is_faster(make_json, metric):
    base = with_energy(make_json("a.json", noise=0.003), {})
    cont = with_energy(make_json("b.json", seed=1, noise=0.003), {FMA: 0.90})
    r = run("compare", base, cont, "--metric", metric)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "lower is better" in r.stdout
    row = next(l for l in r.stdout.splitlines() if l.startswith(FMA + " "))
    assert row.endswith("faster") and "-10.0%" in row
