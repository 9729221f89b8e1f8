#!/usr/bin/env python3
"""The benchmark families as the Python and shell side sees them: one entry per family.

suite_json names the positional name segments from it, report.py takes its sections and pictures from it,
run_all.sh its quick subset and plot loop, tools/ncu_profile.sh and ncu_table.py what to profile and
tabulate, the tests what to expect. Adding a family: its C++ files, its plot script and one entry here.

  python3 gpubench/families.py --quick-filter   the --quick subset as one Google Benchmark regex
  python3 gpubench/families.py --plots          the plot scripts (plots/<name>.py), one a line
  python3 gpubench/families.py --ncu-filter     the benchmarks tools/ncu_profile.sh profiles
"""
import argparse
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    name: str                 # first name segment: "coalescing" in coalescing/read/hbm/stride:1
    fields: tuple = ()        # names of the positional (non key:value) segments after it, in order
    plots: tuple = ()         # plot scripts (plots/<name>.py) drawing this family
    sections: tuple = ()      # report.py functions writing its sections, in report order
    quick: str = None         # regex after "<name>/" of the --quick subset; None: not in it
    ncu: str = None           # regex after "<name>/" of what ncu_profile.sh profiles; None: nothing
    ncu_section: str = None   # ncu_table.py function tabulating the profile against the model
    old: tuple = ()           # earlier first segments, read as <name>/<old>/... (old baselines still compare)
    host_bound: str = None    # regex after "<name>/" of benchmarks that measure the host (its CPU, memory and PCIe
                              # path) as much as the GPU: compare.py judges them only against the same GPU
    unjudged: str = None      # regex after "<name>/" of benchmarks compare.py never calls slower or faster: their
                              # medians move between processes on one machine far beyond their repetitions' spread


FAMILIES = (
    Family("coalescing", ("op", "level"), plots=("stride",), sections=("coalescing",), quick="read/",
           ncu="", ncu_section="coalescing"),
    Family("ceiling", ("op", "level"), sections=("ceiling",), quick="", ncu="(read|write|copy)/",
           ncu_section="ceiling"),
    Family("hierarchy", ("op",), plots=("hierarchy",), sections=("hierarchy_edges",), quick="read/"),
    Family("latency", ("kind",), plots=("latency", "latency_sm"), sections=("latency",),
           quick="(chase/ws:|sm_spread/)", host_bound="link/host$"),
    Family("link", (), plots=("links",), sections=("links",), quick="(h2d|d2h)/pinned/ce/",
           host_bound="(h2d|d2h|bidir)/", unjudged="(h2d|d2h|bidir)/pageable/"),
    Family("smem_banks", ("mode", "layout"), plots=("banks",), sections=("smem_banks", "ldmatrix"),
           quick="(throughput/width:4/|ldmatrix/x:4/trans:0/)", ncu="", ncu_section="smem_banks"),
    Family("sync", ("primitive",), plots=("sync",), sections=("barriers",),
           quick="syncthreads/threads:(32|256|1024)/", old=("syncthreads", "syncwarp", "named_barrier")),
    Family("tensor", ("kind", "dtype", "mode"), plots=("tensor", "tc_ladder"), sections=("tensor_cores", "tensor_latency"),
           quick="(mma/bf16/|wgmma/bf16/ss/n:256/data:random)"),
    Family("energy", ("op", "level"), plots=("energy",), sections=("energy", "energy_by_level"), quick="fma/data:random/", host_bound="copy/"),
    Family("issue", ("kind",), sections=("issue_rates",), quick="(ffma|mix/ffma:64/lds:3/width:16)/warps:8/"),
    Family("gemm", ("kernel",), plots=("gemm", "roofline", "ladder"),
           sections=("gemm", "gemm_bounds", "gemm_ladder", "tc_gemm_ladder"),
           quick="((smem|cublas)/m:(1024|4092)|(cublas_bf16|mma_swizzled)/m:4096)/", ncu="[a-z0-9_]+/m:(4092/n:4092/k:4092|4096/n:4096/k:4096)/",
           ncu_section="gemm"),
    Family("async", ("method", "level", "measure"), plots=("async",), sections=("async_bandwidth", "async_latency"),
           quick="((ld_st/l2/bandwidth/tile:16384|cp_async/l2/bandwidth/bytes:16/stages:4|tma/l2/bandwidth/kind:bulk/copy:16384"
                 "|tma/l2/bandwidth/kind:tensor/elem:2/box:64x64/swizzle:128)/|(ld_st|cp_async)/l2/latency/bytes:16/"
                 "|tma/l2/latency/kind:bulk/bytes:16/|tma/l2/bandwidth/kind:multicast/cluster_size:2/)",
           ncu="((ld_st|cp_async)/(l2|hbm)/bandwidth/(tile:16384|bytes:16/stages:2)|tma/(l2|hbm)/bandwidth/kind:(bulk/copy:65536"
               "|tensor/elem:4/box:32x256/swizzle:none|multicast|unicast))/", ncu_section="async_copies"),
    Family("dsm", ("kind", "op"), plots=("dsm",),
           sections=("dsm_bandwidth", "dsm_latency", "cluster_barrier", "tma_multicast"), quick="(latency/target:remote|bandwidth/read/cluster_size:2/)"),
)
BY_NAME = {f.name: f for f in FAMILIES}
_OLD = {old: f.name for f in FAMILIES for old in f.old}


def get(name):
    """The Family of a family name, or None for one not registered."""
    return BY_NAME.get(name)


def canonical(name):
    """A benchmark name under its current family: 'syncthreads/threads:32/...' -> 'sync/syncthreads/threads:32/...'."""
    first = name.split("/", 1)[0]
    return f"{_OLD[first]}/{name}" if first in _OLD else name


def _matches(name, attr):
    f = get(canonical(name).split("/", 1)[0])
    pattern = f and getattr(f, attr)
    return bool(pattern and re.match(f"{f.name}/(?:{pattern})", canonical(name)))


def host_bound(name):
    """True for a benchmark that measures its host as much as its GPU (Family.host_bound): copies to and from
    host memory, pageable (the CPU stages them) and pinned (the host's PCIe path), and the chase through host
    memory: they differ between machines of one GPU model (docs/regression-tracking.md, "Host-bound benchmarks")."""
    return _matches(name, "host_bound")


def unjudged(name):
    """True for a benchmark compare.py never calls slower or faster (Family.unjudged): pageable copies move
    between two processes on one machine far beyond their own repetitions' spread (docs/regression-tracking.md,
    "Host-bound benchmarks")."""
    return _matches(name, "unjudged")


def _alternation(attr):
    parts = [f"{f.name}/{getattr(f, attr)}" for f in FAMILIES if getattr(f, attr) is not None]
    return "^(" + "|".join(parts) + ")"


def quick_filter():
    return _alternation("quick")


def ncu_filter():
    return _alternation("ncu")


def plots():
    """Every plot script, in registry order, each once."""
    return list(dict.fromkeys(p for f in FAMILIES for p in f.plots))


def sections():
    return [s for f in FAMILIES for s in f.sections]


def main(argv=None):
    p = argparse.ArgumentParser(prog="families", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--quick-filter", action="store_true", help="regex of the --quick subset")
    what.add_argument("--ncu-filter", action="store_true", help="regex of what ncu profiles")
    what.add_argument("--plots", action="store_true", help="plot script names, one a line")
    what.add_argument("--names", action="store_true", help="family names, one a line")
    args = p.parse_args(argv)
    if args.quick_filter:
        print(quick_filter())
    elif args.ncu_filter:
        print(ncu_filter())
    elif args.plots:
        print("\n".join(plots()))
    else:
        print("\n".join(f.name for f in FAMILIES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
