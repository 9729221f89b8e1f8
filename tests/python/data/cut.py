#!/usr/bin/env python3
"""Cuts tests/python/data/h200_cut.json from H200 output: every benchmark's median entry (most smem_banks
latency and store widths left out for size) plus every repetition and aggregate of a few benchmarks, exactly
as gpubench wrote them (Google Benchmark 1.8.3), minus keys no script reads. The first source gives the
context; later sources add the families the first lacks (the ceiling roofs, hierarchy, latency and link
families postdate the committed run the fixture was first cut from).

usage: python3 tests/python/data/cut.py SRC.json [MORE.json ...] tests/python/data/h200_cut.json
  e.g. results/h200/20261130T182315Z/benchmarks.json plus the per-family JSON of a later H200 run
"""
import json
import re
import sys

DROP = re.compile(r"^smem_banks/(latency|store_throughput)/width:(8|16)/")
FULL = {"coalescing/read/hbm/stride:1", "ceiling/memcpy_d2d", "smem_banks/throughput/width:4/stride:32/pad:0",
        "syncthreads/threads:1024/blocks_per_sm:2", "gemm/smem/m:4092/n:4092/k:4092"}
UNREAD = {"family_index", "per_family_instance_index", "threads", "cpu_time", "iterations"}


def main(*paths):
    *sources, dst = paths
    keep, seen, context = [], set(), None
    for src in sources:
        with open(src) as f:
            doc = json.load(f)
        context = context or dict(doc["context"], cut_from=" + ".join(sources))
        names = set()
        for e in doc["benchmarks"]:
            name = e["run_name"].removesuffix("/manual_time")
            if DROP.match(name) or name in seen:
                continue
            names.add(name)
            if name in FULL or e.get("aggregate_name") == "median":
                keep.append({k: v for k, v in e.items() if k not in UNREAD})
        seen |= names
    out = {"context": context, "benchmarks": keep}
    with open(dst, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit("usage: cut.py SRC.json [MORE.json ...] DST.json")
    main(*sys.argv[1:])
