"""Plateaus and cliffs of a bandwidth-by-working-set curve (hierarchy/read/ws:*), as pure functions.

A plateau is a run of neighbouring points (ascending working set) whose bandwidths all stay within
`tol` of the run's median: one cache level serving every access. Between two plateaus lies a cliff,
where the working set outgrows the upper level. Each cliff gives two edges, found by interpolating
in log working set between the measured points:
- `mid_bytes`: where the curve crosses the geometric mean of the two plateau levels (the capacity
  of the upper level as the curve shows it);
- `half_bytes`: where it falls to half of the upper plateau (None if it never does before the
  next plateau: the lower level delivers more than half).
"""
import math
from dataclasses import dataclass


@dataclass
class Plateau:
    first: int     # index of its first point
    last: int      # index of its last point (inclusive)
    level: float   # median bandwidth of its points
    lo_bytes: float
    hi_bytes: float


@dataclass
class Cliff:
    upper: Plateau
    lower: Plateau
    mid_bytes: float
    half_bytes: float  # or None

    @property
    def ratio(self):
        return self.upper.level / self.lower.level


def _check(ws, bw):
    if len(ws) != len(bw):
        raise ValueError(f"{len(ws)} working sets but {len(bw)} bandwidths")
    if any(w <= 0 for w in ws) or any(not (b > 0) for b in bw):
        raise ValueError("working sets and bandwidths must be positive")
    if any(b <= a for a, b in zip(ws, ws[1:])):
        raise ValueError("working sets must be strictly ascending")


def _median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def plateaus(ws, bw, tol=0.12, min_points=3):
    """Maximal runs of >= min_points points within `tol` (relative) of their own median, left to right.

    Greedy: a run grows while the next point keeps every point of the run within tol of the run's
    median; a run too short to be a plateau is dropped (its points belong to a cliff)."""
    _check(ws, bw)
    out, i, n = [], 0, len(ws)
    while i < n:
        j = i
        while j + 1 < n:
            m = _median(bw[i:j + 2])
            if all(abs(b - m) <= tol * m for b in bw[i:j + 2]):
                j += 1
            else:
                break
        if j - i + 1 >= min_points:
            out.append(Plateau(i, j, _median(bw[i:j + 1]), ws[i], ws[j]))
            i = j + 1
        else:
            i += 1
    # A run that stopped on a noisy point, or on the tail of a cliff, and the run after it may be one level.
    merged = []
    for p in out:
        q = merged[-1] if merged else None
        if q and q.last + 1 == p.first and abs(q.level - p.level) <= tol * min(q.level, p.level):
            merged[-1] = Plateau(q.first, p.last, _median(bw[q.first:p.last + 1]), q.lo_bytes, p.hi_bytes)
        else:
            merged.append(p)
    return merged


def crossing(ws, bw, level, start, stop):
    """First working set in [ws[start], ws[stop]] where bw falls below `level`, interpolated linearly in
    log(ws) between the two points around it; None if it does not fall below there."""
    for k in range(start, stop):
        a, b = bw[k], bw[k + 1]
        if a >= level > b:
            t = (a - level) / (a - b)
            return math.exp(math.log(ws[k]) + t * (math.log(ws[k + 1]) - math.log(ws[k])))
    return None


def cliffs(ws, bw, tol=0.12, min_points=3, min_drop=1.15):
    """The cliffs between neighbouring plateaus whose levels differ by at least min_drop (upper/lower)."""
    ps = plateaus(ws, bw, tol, min_points)
    out = []
    for up, low in zip(ps, ps[1:]):
        if up.level < min_drop * low.level:
            continue
        mid = crossing(ws, bw, math.sqrt(up.level * low.level), up.first, low.last)
        half = crossing(ws, bw, up.level / 2, up.first, low.last)
        out.append(Cliff(up, low, mid, half))
    return out
