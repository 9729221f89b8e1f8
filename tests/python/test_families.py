"""gpubench/families.py: every entry points at things that exist, and its filters select real benchmark names."""
import importlib
import re
import subprocess
import sys

import pytest

from gpubench import families
from gpubench.analysis import ncu_table
from gpubench import report
import synth
from conftest import ROOT

NAMES = [n for n, *_ in synth.benchmarks()]  # the recorded H200 run's benchmarks


@pytest.mark.parametrize("fam", families.FAMILIES, ids=lambda f: f.name)
def test_entry_points_at_existing_scripts_and_functions(fam):
    assert any(n.startswith(fam.name + "/") for n in NAMES), f"no {fam.name}/ benchmark in the recorded run"
    for script in fam.plots:  # a script that writes <script>.png by default, where report.py looks for it
        module = importlib.import_module(f"plots.{script}")
        assert callable(module.main) and module.PROG == script
    for section in fam.sections:
        assert callable(getattr(report, section))
    if fam.ncu_section:
        assert callable(getattr(ncu_table, fam.ncu_section))


def test_quick_filter_takes_a_part_of_every_quick_family():
    quick = re.compile(families.quick_filter())
    chosen = [n for n in NAMES if quick.search(n + "/manual_time")]
    for fam in families.FAMILIES:
        picked = [n for n in chosen if n.startswith(fam.name + "/")]
        assert (len(picked) > 0) == (fam.quick is not None), fam.name
    # what bounds.py and the headlines need is in the quick subset
    for need in ("sync/syncthreads/threads:1024/blocks_per_sm:2", "ceiling/fma", "coalescing/read/hbm/stride:1",
                 "smem_banks/throughput/width:4/stride:1/pad:0", "gemm/smem/m:4092/n:4092/k:4092"):
        assert need in chosen
    assert len(chosen) < len(NAMES) / 2


def test_ncu_filter_profiles_micro_patterns_and_big_gemms():
    ncu = re.compile(families.ncu_filter())
    assert ncu.search("gemm/naive/m:4096/n:4096/k:4096/manual_time") and not ncu.search("gemm/naive/m:128/n:128/k:128/")
    assert ncu.search("coalescing/read/l2/stride:4") and not ncu.search("sync/syncwarp/threads:32/blocks_per_sm:1")


def test_old_names_map_to_their_family():
    assert families.canonical("syncthreads/threads:32/blocks_per_sm:1") == "sync/syncthreads/threads:32/blocks_per_sm:1"
    assert families.canonical("named_barrier/threads:64/blocks_per_sm:2").startswith("sync/named_barrier/")
    assert families.canonical("sync/syncwarp/threads:32/blocks_per_sm:1") == "sync/syncwarp/threads:32/blocks_per_sm:1"
    assert families.canonical("gemm/smem/m:1/n:1/k:1") == "gemm/smem/m:1/n:1/k:1"


def test_command_line_for_run_all():
    out = lambda *a: subprocess.run([sys.executable, "-m", "gpubench", "families", *a], cwd=ROOT, capture_output=True,
                                    text=True, check=True).stdout.split()
    assert out("--plots") == families.plots() == ["stride", "hierarchy", "latency", "latency_sm", "links", "banks", "sync",
                                                  "tensor", "tc_ladder", "energy", "gemm", "roofline", "ladder", "async", "dsm"]
    assert out("--quick-filter") == [families.quick_filter()]
    r = subprocess.run([sys.executable, "-m", "gpubench", "families"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "one of the arguments" in r.stderr


def test_host_bound_names_the_host_copies_and_the_host_chase_only():
    assert families.host_bound("link/d2h/pageable/ce/bytes:4194304")
    assert families.host_bound("link/h2d/pinned/sm/bytes:1024")
    assert families.host_bound("link/bidir/pageable/ce/bytes:33554432/manual_time")
    assert families.host_bound("latency/link/host")
    for name in ("link/peer/uni/ce/bytes:1024", "link/peer/bidir/sm/bytes:1024", "latency/link/peer",
                 "latency/link/hostile", "latency/chase/ws:1024/stride:128", "nope/link/host", "x"):
        assert not families.host_bound(name), name


def test_unjudged_names_the_pageable_copies_only():
    assert families.unjudged("link/bidir/pageable/ce/bytes:33554432")
    assert families.unjudged("link/h2d/pageable/ce/bytes:1024/manual_time")
    for name in ("link/h2d/pinned/ce/bytes:1024", "link/peer/uni/ce/bytes:1024", "latency/link/host", "x"):
        assert not families.unjudged(name), name
