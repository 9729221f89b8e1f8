"""Plateaus and knees of the pointer-chase latency curves (latency/* benchmarks), as pure functions.

A level of the hierarchy shows as a plateau: consecutive working sets whose latency stays within a band
of relative width `tol`. The working set where a plateau ends is the level's capacity as the chase sees
it (the largest set still served at that latency; the next measured point is already slower), and the
step to the next plateau is the cost of missing that level. Points between plateaus are the transition
(caches that are not strictly LRU lose hits gradually). The same detector reads the TLB series (one load
per page: plateaus by pages touched, capacity = TLB reach) and the stride sweep (the fill granule).

report_section(suite) gives the report's Markdown table: level | latency cycles (ns) | capacity detected |
device reports.
"""
import math
import statistics
from dataclasses import dataclass

from gpubench.tables import human_bytes  # noqa: F401 (latency.py and latency_sm.py use it as lv.human_bytes)

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
TOL = 0.12        # band of a plateau: max / min <= 1 + TOL
SLOPE_TOL = 0.05  # flat: latency rises by at most 5 % per doubling of the working set
MIN_POINTS = 3    # fewer consecutive points in a band are a transition, not a level


@dataclass
class Plateau:
    first: int       # index of its first point (in the sorted curve)
    last: int        # index of its last point
    start_ws: float  # working set of its first point
    end_ws: float    # working set of its last point: the capacity as detected
    latency: float   # median latency over its points
    next_ws: float = math.nan  # working set of the first point after it (capacity < next_ws)

    @property
    def points(self):
        return self.last - self.first + 1


def _sorted_curve(ws, lat):
    pts = sorted((float(w), float(y)) for w, y in zip(ws, lat) if y is not None and not math.isnan(y) and y > 0)
    return [w for w, _ in pts], [y for _, y in pts]


def _slopes(xs, ys):
    """|d log(latency) / d log2(working set)| at each point, from its neighbours (one-sided at the ends)."""
    n, out = len(xs), []
    for i in range(n):
        a, b = max(i - 1, 0), min(i + 1, n - 1)
        out.append(0.0 if a == b else abs(math.log(ys[b] / ys[a])) / math.log2(xs[b] / xs[a]))
    return out


def find_plateaus(ws, lat, tol=TOL, slope_tol=SLOPE_TOL, min_points=MIN_POINTS):
    """Plateaus of a latency curve, in order of working set. ws, lat: sequences of equal length (any order).

    1. Cores: runs of points where the curve is flat (relative rise <= slope_tol per doubling, from the
       neighbours), split wherever the run leaves a band max/min <= 1 + tol. A cache past its capacity
       approaches the next level's latency only slowly; the slope test keeps that tail out of the levels.
    2. Each core takes in neighbouring points within tol / 2 of its median (the last point before a
       knee is often not flat by the slope test, but still at the level's latency).
    3. Cores of one level that a stray point split (at most three points apart, medians within tol / 2) merge.
    Cores with fewer than min_points points are dropped.
    """
    if len(ws) != len(lat):
        raise ValueError("ws and lat differ in length")
    xs, ys = _sorted_curve(ws, lat)
    n = len(xs)
    # Flat: a gentle slope across the neighbours, and not a spike above or below them.
    spike = lambda i: 0 < i < n - 1 and abs(math.log(2 * ys[i] / (ys[i - 1] + ys[i + 1]))) > math.log(1 + tol / 2)
    flat = [s <= slope_tol and not spike(i) for i, s in enumerate(_slopes(xs, ys))]
    cores, i = [], 0
    while i < n:
        if not flat[i]:
            i += 1
            continue
        first, lo, hi = i, ys[i], ys[i]
        while i + 1 < n and flat[i + 1] and max(hi, ys[i + 1]) / min(lo, ys[i + 1]) <= 1 + tol:
            i += 1
            lo, hi = min(lo, ys[i]), max(hi, ys[i])
        cores.append([first, i])
        i += 1
    near_ratio = lambda a, b: abs(math.log(a / b)) <= math.log(1 + tol / 2)
    near = lambda j, med: near_ratio(ys[j], med)
    for c in cores:
        med = statistics.median(ys[c[0]:c[1] + 1])
        while c[0] > 0 and near(c[0] - 1, med):
            c[0] -= 1
        while c[1] + 1 < n and near(c[1] + 1, med):
            c[1] += 1
    merged = []
    for c in cores:
        if merged and c[0] <= merged[-1][1] + 4:
            prev = merged[-1]
            m1, m2 = statistics.median(ys[prev[0]:prev[1] + 1]), statistics.median(ys[c[0]:c[1] + 1])
            if near_ratio(m1, m2):
                prev[1] = max(prev[1], c[1])
                continue
        if merged and c[0] <= merged[-1][1]:  # extensions met: the boundary goes to the first
            c[0] = merged[-1][1] + 1
            if c[0] > c[1]:
                continue
        merged.append(c)
    out = []
    for first, last in merged:
        if last - first + 1 >= min_points:
            out.append(Plateau(first, last, xs[first], xs[last], statistics.median(ys[first:last + 1]),
                               xs[last + 1] if last + 1 < n else math.nan))
    return out


def knee_ws(ws, lat, lower, upper):
    """Working set where the curve crosses the geometric middle of two plateaus' latencies (log-log
    interpolation between the two points around it); nan when it never does between them."""
    xs, ys = _sorted_curve(ws, lat)
    mid = math.sqrt(lower.latency * upper.latency)
    for j in range(lower.last, min(upper.first, len(xs) - 1)):
        if ys[j] < mid <= ys[j + 1]:
            f = (math.log(mid) - math.log(ys[j])) / (math.log(ys[j + 1]) - math.log(ys[j]))
            return math.exp(math.log(xs[j]) + f * (math.log(xs[j + 1]) - math.log(xs[j])))
    return math.nan


def name_cache_levels(plateaus, l1_bytes, l2_bytes):
    """Names for the plateaus of a chase through the hierarchy, by where each ends: by 1.5 x the L1 (+ shared)
    array 'L1', by 1.5 x the L2 'L2', else 'DRAM'; a second plateau of one name is 'L2 (2)' and so on
    (DRAM splits where TLB misses start). 0 for a size: no such level in this curve (ld.global.cg has no L1)."""
    names, counts = [], {}
    for p in plateaus:
        base = "L1" if l1_bytes and p.end_ws <= 1.5 * l1_bytes else "L2" if l2_bytes and p.end_ws <= 1.5 * l2_bytes else "DRAM"
        counts[base] = counts.get(base, 0) + 1
        names.append(base if counts[base] == 1 else f"{base} ({counts[base]})")
    return names


def granule(strides, lat, tol=0.05):
    """Fill granule from a sequential stride sweep: latency per load rises with the stride while several
    loads share one fill, and stops rising once every load needs its own. Returns the smallest stride
    whose latency is within tol of the largest stride's (nan without at least two strides)."""
    xs, ys = _sorted_curve(strides, lat)
    if len(xs) < 2:
        return math.nan
    top = ys[-1]
    for x, y in zip(xs, ys):
        if y >= top / (1 + tol):
            return x
    return math.nan


# ---- From a suite ------------------------------------------------------------------------------------

def curve(suite, prefix, stride, counter="cycles_per_load"):
    """(ws, latency, ns) of the records latency/<prefix>ws:*/stride:<stride>, sorted by working set."""
    recs = [r for r in suite.ok("latency") if r.name.startswith("latency/" + prefix + "ws:") and r.fields.get("stride") == stride]
    recs.sort(key=lambda r: r.fields["ws"])
    return ([r.fields["ws"] for r in recs], [r.get(counter) for r in recs], [r.get("ns_per_load") for r in recs])


def _ctx_int(suite, key):
    try:
        return int(suite.context.get(key, ""))
    except ValueError:
        return None


def _lat(cycles, ns):
    return f"{cycles:.0f} ({ns:.0f} ns)" if ns and not math.isnan(ns) else f"{cycles:.0f}"


def _ns_on(ws, ns, p):
    vals = [n for w, n in zip(ws, ns) if p.start_ws <= w <= p.end_ws and n is not None and not math.isnan(n)]
    return statistics.median(vals) if vals else math.nan


def _cap(p):
    if math.isnan(p.next_ws):
        return "– (the largest set measured)"
    return f"{human_bytes(p.end_ws)} (< {human_bytes(p.next_ws)})"


def _tail(label, ws, cyc, ns, plats):
    """A row for the largest working set when no plateau reaches it (the curve still rising there)."""
    if ws and (not plats or plats[-1].last < len(ws) - 1):
        return [[f"{label}: largest set, no plateau yet", _lat(cyc[-1], ns[-1]), f"– (at {human_bytes(ws[-1])})", "–"]]
    return []


def headline_levels(suite):
    """{"L1"|"L2"|"DRAM": (cycles, ns)}: the first plateau of each level in the chase through L1
    (latency/chase/ws:*/stride:128), for the report's summary; a level the curve does not show is absent."""
    l1, l2 = _ctx_int(suite, "l1_smem_per_sm_bytes"), _ctx_int(suite, "l2_bytes")
    ws, cyc, ns = curve(suite, "chase/", 128)
    plats = find_plateaus(ws, cyc)
    return {name: (p.latency, _ns_on(ws, ns, p))
            for name, p in reversed(list(zip(name_cache_levels(plats, l1, l2), plats))) if " " not in name}


def rows(suite):
    """[level, latency cycles (ns), capacity detected, device reports] for the latency family."""
    l1, l2, mem = (_ctx_int(suite, k) for k in ("l1_smem_per_sm_bytes", "l2_bytes", "global_mem_bytes"))
    reports = {"L1": f"{human_bytes(l1)} L1 + shared per SM" if l1 else "–",
               "L2": f"{human_bytes(l2)} (cudaDeviceProp::l2CacheSize)" if l2 else "–",
               "DRAM": f"{human_bytes(mem)} device memory" if mem else "–"}
    out = []
    ws, cyc, ns = curve(suite, "chase/", 128)
    plats = find_plateaus(ws, cyc)
    for name, p in zip(name_cache_levels(plats, l1, l2), plats):
        out.append([f"{name} (through L1)", _lat(p.latency, _ns_on(ws, ns, p)), _cap(p), reports.get(name.split()[0], "–")])
    out += _tail("through L1", ws, cyc, ns, plats)
    ws, cyc, ns = curve(suite, "chase/l2only/", 128)
    plats = find_plateaus(ws, cyc)
    for name, p in zip(name_cache_levels(plats, 0, l2), plats):
        out.append([f"{name} (ld.global.cg)", _lat(p.latency, _ns_on(ws, ns, p)), _cap(p), reports.get(name.split()[0], "–")])
    out += _tail("ld.global.cg", ws, cyc, ns, plats)
    for cv in ("min", "max"):
        ws, cyc, ns = curve(suite, f"chase/carveout:{cv}/", 128)
        plats = find_plateaus(ws, cyc)
        if plats:
            p = plats[0]
            out.append([f"L1, shared-memory carve-out {cv}", _lat(p.latency, _ns_on(ws, ns, p)), _cap(p),
                        "carve-out 0 % (most L1)" if cv == "min" else "carve-out 100 % (least L1)"])
    for stride, page in ((65536, "64 KiB"), (2 * MIB, "2 MiB")):
        ws, cyc, ns = curve(suite, "chase/l2only/", stride)
        plats = find_plateaus(ws, cyc)
        for i, p in enumerate(plats):
            miss = f", +{p.latency - plats[i - 1].latency:.0f} over the level before" if i else ""
            level = "TLB hit" if i == 0 else f"TLB level {i} missed"
            reach = "– (the largest set measured)" if math.isnan(p.next_ws) else \
                f"reach {human_bytes(p.end_ws)} = {p.end_ws / stride:.0f} pages"
            out.append([f"{level}, one load per {page}", _lat(p.latency, _ns_on(ws, ns, p)) + miss, reach, "not reported"])
        out += _tail(f"one load per {page}", ws, cyc, ns, plats)
    for level, what in (("l1", "L1 fill granule (stride sweep, ld.global)"), ("l2", "L2 fill granule from DRAM (stride sweep, cg)")):
        recs = sorted((r for r in suite.ok("latency") if r.name.startswith(f"latency/stride_sweep/{level}/")),
                      key=lambda r: r.fields["stride"])
        if len(recs) >= 2:
            g = granule([r.fields["stride"] for r in recs], [r.get("cycles_per_load") for r in recs])
            top = recs[-1]
            out.append([what, _lat(top.get("cycles_per_load"), top.get("ns_per_load")) + " per miss",
                        human_bytes(g), "32 B sector, 128 B line (CUDA guide)"])
    for r in sorted(suite.ok("latency"), key=lambda r: r.fields.get("ws", 0)):
        if r.name.startswith("latency/sm_spread/"):
            out.append([f"L2 per SM, {'one line' if r.fields['ws'] <= 128 else human_bytes(r.fields['ws']) + ' ring'} (cg)",
                        f"min {r.get('cycles_min'):.0f} / median {r.get('cycles_median'):.0f} / p95 "
                        f"{r.get('cycles_p95'):.0f} / max {r.get('cycles_max'):.0f}",
                        f"{r.get('sms'):.0f} SMs", "–"])
    return out


def report_section(suite):
    """Markdown lines for report.py (a SECTIONS entry): [] when the run has no latency benchmarks."""
    body = rows(suite)
    if not body:
        return []
    head = ["level", "latency cycles (ns)", "capacity detected", "device reports"]
    lines = ["## Latency and capacity (pointer chase)", "",
             "Plateaus found in the chase curves (gpubench/analysis/latency_levels.py); capacity is the largest working set "
             "still at the level's latency, below the next point measured.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in body] + [""]
