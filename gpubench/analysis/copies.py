"""The async-copy and cluster families as the pictures and the report see them (plots/async.py, plots/dsm.py,
report.py): a readable label per configuration and the limits each figure is drawn and tabulated beside
(docs/families/async-copy.md, docs/families/cluster.md)."""
SMEM_BYTES_PER_CLOCK_PER_SM = 128  # 32 banks × 4 B: one shared-memory wavefront per clock per SM
LEVELS = ("l2", "hbm")
# A bandwidth benchmark's method as drawn: tma splits by its first axis (kind:bulk, tensor, multicast, unicast).
METHODS = ("ld_st", "cp_async", "tma bulk", "tma tensor", "tma multicast", "tma unicast")


def method(rec):
    """'ld_st', 'cp_async' or 'tma <kind>'."""
    m = rec.fields.get("method", "")
    return f"{m} {rec.fields['kind']}" if m == "tma" and "kind" in rec.fields else m


def config(rec):
    """The configuration after async/<method>/<level>/<measure>/, kind left out: 'bytes:16/stages:4',
    'elem:2/box:64x64/swizzle:128'."""
    return "/".join(s for s in rec.name.split("/")[4:] if not s.startswith("kind:"))


def label(rec):
    """'cp_async bytes:16/stages:4', 'tma tensor elem:2/box:64x64/swizzle:128'."""
    return f"{method(rec)} {config(rec)}".strip()


def ceiling(suite, level):
    """(bytes/s, bytes/clk/SM) of ceiling/read/<level> of the same run; None for a figure it lacks."""
    name = f"ceiling/read/{level}"
    return suite.value(name, "bytes_per_second"), suite.value(name, "bytes_per_clock_per_sm")


def async_records(suite, measure, level=None):
    """async/<method>/<level>/<measure>/... of the run (both levels when level is None), in METHODS order and
    within a method in the run's (the plan's) order."""
    recs = [r for r in suite.ok("async") if r.fields.get("measure") == measure
            and (level is None or r.fields.get("level") == level) and method(r) in METHODS]
    return sorted(recs, key=lambda r: METHODS.index(method(r)))


def dsm_records(suite, kind, op=None):
    """dsm/<kind>/<op>/... of the run, by cluster size."""
    recs = [r for r in suite.ok("dsm") if r.fields.get("kind") == kind and (op is None or r.fields.get("op") == op)]
    return sorted(recs, key=lambda r: r.fields.get("cluster_size", 0))
