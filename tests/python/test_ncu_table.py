"""gpubench/analysis/ncu_table.py on a small synthetic ncu CSV: the roofs table and the GEMM table against the model."""
import csv

import pytest

from gpubench.analysis import ncu_table as nt
from conftest import run
from gpubench.suite_json import TIME, load

METRICS = [nt.TIME, nt.LD_REQ, nt.LD_SEC, nt.SH_LD_WF, nt.SH_LD_INST, nt.OCCUPANCY, nt.FFMA, nt.L2_FROM_L1,
           nt.DRAM_RD, nt.DRAM_WR, nt.L1_HIT, nt.L2_HIT]


def write_csv(path, groups):
    """groups: [[{metric: value} per kernel]]; each group follows one marker kernel, as MH_PROFILE=1 writes it."""
    with open(path, "w", newline="") as f:
        f.write("==PROF== Connected to process 1\n")
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(["ID", "Kernel Name", *METRICS])
        w.writerow(["", "", *["" for _ in METRICS]])  # the units row
        i = 0
        for kernels in groups:
            w.writerow([i, "mh_profile_marker()", *["1" for _ in METRICS]])
            i += 1
            for k in kernels:
                w.writerow([i, "k()", *[f"{k.get(m, 0):,}" for m in METRICS]])
                i += 1
    return path


def moved(s, name):
    r = s.by_name[name]
    return r.get("bytes_per_second") * r.get(TIME)


@pytest.fixture
def profiled(make_json, tmp_path):
    """A suite file, and an ncu CSV + order file for 5 roofs and gemm/smem at 4096^3."""
    path = make_json()
    s = load(path)
    m = {n: moved(s, n) for n in ("ceiling/read/l1", "ceiling/read/l2", "ceiling/read/hbm", "ceiling/write/hbm",
                                  "ceiling/copy/hbm")}
    g = s.by_name["gemm/smem/m:4096/n:4096/k:4096"]
    groups = {
        # L1 roof: the working set comes from L2 once, a sliver of the bytes moved
        "ceiling/read/l1": [{nt.L1_HIT: 99.0, nt.L2_FROM_L1: m["ceiling/read/l1"] * 0.001 / 32, nt.L2_HIT: 90.0}],
        # L2 roof: no L1 hits, no DRAM
        "ceiling/read/l2": [{nt.L1_HIT: 0.0, nt.L2_FROM_L1: m["ceiling/read/l2"] / 32, nt.L2_HIT: 100.0,
                             nt.DRAM_RD: 1e3}],
        # HBM read roof measured in two kernels that each read half
        "ceiling/read/hbm": [{nt.TIME: 1.0, nt.L1_HIT: 0.0, nt.DRAM_RD: m["ceiling/read/hbm"] / 2}] * 2,
        # HBM write roof whose DRAM writes fall far short: not confirmed
        "ceiling/write/hbm": [{nt.DRAM_WR: m["ceiling/write/hbm"] * 0.5}],
        "ceiling/copy/hbm": [{nt.DRAM_RD: m["ceiling/copy/hbm"] / 2, nt.DRAM_WR: m["ceiling/copy/hbm"] / 2}],
        "gemm/smem/m:4096/n:4096/k:4096": [{
            nt.TIME: 2.0, nt.LD_REQ: g.get("model_ld_requests"), nt.LD_SEC: g.get("model_ld_sectors"),
            nt.SH_LD_WF: g.get("model_lds_wavefronts"), nt.SH_LD_INST: g.get("model_lds_inst"),
            nt.OCCUPANCY: 80.0, nt.FFMA: g.get("model_ffma_thread")}],
    }
    order = tmp_path / "ncu_order.txt"
    order.write_text("".join(f"{n}/manual_time\n" for n in groups))
    return path, write_csv(tmp_path / "ncu.csv", list(groups.values())), order


def table_rows(text, heading):
    part = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return {r[0]: r[1:] for r in ([c.strip() for c in l.strip("|").split("|")] for l in part.splitlines()
                                  if l.startswith("| ceiling/") or l.startswith("| gemm/"))}


def test_roofs_table_confirms_each_level(profiled, tmp_path):
    path, ncu, order = profiled
    out = tmp_path / "ncu.md"
    r = run("ncu_table", ncu, order, path, "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    rows = table_rows(text, "## Roofs")
    verdict = {n: cells[-1] for n, cells in rows.items()}
    assert verdict == {"ceiling/read/l1": "yes", "ceiling/read/l2": "yes", "ceiling/read/hbm": "yes",
                       "ceiling/write/hbm": "**no**", "ceiling/copy/hbm": "yes"}
    s = load(path)
    hbm = rows["ceiling/read/hbm"]
    # DRAM read is summed over the group's two kernels; the L1 hit rate is a time-weighted mean, not a sum
    assert float(hbm[5].replace(",", "")) == pytest.approx(moved(s, "ceiling/read/hbm") / 1e6, rel=1e-3)
    assert float(hbm[2]) == 0.0
    assert float(rows["ceiling/read/l1"][2]) == 99.0
    gemm = table_rows(text, "## GEMM kernels")["gemm/smem/m:4096/n:4096/k:4096"]
    model, measured = gemm[4].split(" / ")  # FFMA (G): model / ncu
    assert model == measured
    assert gemm[3].split(" / ")[1] == "80"
    assert "agree (within 2 %) on" in text


def test_roof_verdicts():
    g = {nt.L2_FROM_L1: 0.0, nt.L1_HIT: 0.0, nt.DRAM_RD: 100.0, nt.DRAM_WR: 0.0}
    assert nt.roof_confirmed("hbm", "read", 100.0, g) == "yes"
    assert nt.roof_confirmed("hbm", "write", 100.0, g) == "**no**"
    assert nt.roof_confirmed("l2", "read", 100.0, g) == "**no**"        # DRAM traffic at the L2 roof
    assert nt.roof_confirmed("l2", "read", 100.0, {**g, nt.DRAM_RD: 1.0}) == "yes"
    assert nt.roof_confirmed("l2", "read", 100.0, {**g, nt.DRAM_RD: 1.0, nt.L1_HIT: 50.0}) == "**no**"
    assert nt.roof_confirmed("l1", "read", 100.0, {**g, nt.L2_FROM_L1: 0.1}) == "yes"  # 3.2 B of 100
    assert nt.roof_confirmed("l1", "read", 100.0, {**g, nt.L2_FROM_L1: 1.0}) == "**no**"  # 32 B of 100
    assert nt.roof_confirmed("hbm", "read", float("nan"), g) == "n/a"


def test_group_count_mismatch_is_one_line_exit_2(profiled, tmp_path):
    path, ncu, order = profiled
    order.write_text(order.read_text() + "ceiling/fma/manual_time\n")
    r = run("ncu_table", ncu, order, path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "names in" in r.stderr


def test_ncu_filter_takes_the_roofs_and_the_new_gemm_kernels():
    import re

    from gpubench import families
    ncu = re.compile(families.ncu_filter())
    for name in ("ceiling/read/l1", "ceiling/write/hbm", "ceiling/copy/hbm", "gemm/blocktile_1d/m:4096/n:4096/k:4096",
                 "gemm/warptile_tuned/m:4092/n:4092/k:4092"):
        assert ncu.search(name + "/manual_time"), name
    for name in ("ceiling/fma", "ceiling/memcpy_d2d", "gemm/blocktile_2d/m:1024/n:1024/k:1024"):
        assert not ncu.search(name + "/manual_time"), name
