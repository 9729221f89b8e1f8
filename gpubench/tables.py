"""Tables and number formats shared by report.py, compare.py, bounds.py and ncu_table.py."""
import math

MISSING = "–"


def missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def num(v, scale=1.0, none=MISSING):
    """Report style: 1,234 from 100 up, 12.34 from 1, three significant digits below."""
    if missing(v):
        return none
    v *= scale
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) >= 1 else f"{v:.3g}"


def sig(v, digits=3, none="n/a"):
    """`digits` significant digits."""
    return none if missing(v) else f"{v:.{digits}g}"


def seconds(v, digits=4):
    """A duration in the largest unit that keeps it >= 1: 1.5 ms, 12.3 µs, 800 ns."""
    if missing(v):
        return "n/a"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(v) >= scale:
            return f"{v / scale:.{digits}g} {unit}"
    return f"{v * 1e9:.{digits}g} ns"


def markdown(headers, rows):
    """Markdown table lines, ending with an empty line."""
    lines = ["| " + " | ".join(map(str, headers)) + " |", "|" + " --- |" * len(headers)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows] + [""]


def text(headers, rows):
    """Plain-text table lines, columns padded to their widest cell."""
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    fmt = lambda row: "  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip()
    return [fmt(headers), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


def human_bytes(b):
    """1024 -> '1 KiB', 3 * 2**20 -> '3 MiB', 1536 -> '1.5 KiB'."""
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return "–"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            v = b / size
            return f"{v:.0f} {unit}" if abs(v - round(v)) < 0.05 else f"{v:.3g} {unit}"
    return f"{b:.0f} B"


def pivot(recs, row, col, cell, corner="", col_label=str):
    """(headers, rows) of a wide table: one row per row(record) label, one column per col(record) key, each
    cell cell(record), column headers col_label(key). Rows keep their first appearance's order, columns are
    sorted by key where the keys compare (numbers, (size, label) tuples); a missing combination reads MISSING."""
    rows, cols, cells = {}, {}, {}
    for r in recs:
        rk, ck = row(r), col(r)
        rows.setdefault(rk, None)
        cols.setdefault(ck, None)
        cells[rk, ck] = cell(r)
    try:
        order = sorted(cols)
    except TypeError:  # keys of mixed types: first appearance
        order = list(cols)
    return [corner, *map(col_label, order)], [[rk, *(cells.get((rk, ck), MISSING) for ck in order)] for rk in rows]
