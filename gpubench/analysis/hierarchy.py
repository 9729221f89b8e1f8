"""The read-bandwidth curve over working sets (hierarchy/read/ws:*), the device sizes beside it and one
line per cliff: shared by the hierarchy picture and the report."""
from gpubench.analysis.edges import cliffs
from gpubench.tables import human_bytes as human


def curve(suite):
    """(working sets, bandwidths in B/s) of the error-free hierarchy points, ascending."""
    pts = sorted((r.fields["ws"], r.get("bytes_per_second")) for r in suite.ok("hierarchy")
                 if isinstance(r.fields.get("ws"), int) and r.get("bytes_per_second") > 0)
    return [w for w, _ in pts], [b for _, b in pts]


def device_sizes(suite):
    """[(label, bytes)] of the sizes in the run's context: L1 per SM (with carve-out 0) and L2."""
    out = []
    for key, label in (("l1_smem_per_sm_bytes", "L1 + shared per SM"), ("l2_bytes", "L2")):
        try:
            v = int(suite.context.get(key, ""))
        except ValueError:
            continue
        if v > 0:
            out.append((label, v))
    return out


def edge_lines(ws, bw):
    """One line of text per cliff, for the picture and for the report."""
    lines = []
    for c in cliffs(ws, bw):
        half = f"halves at {human(c.half_bytes)}" if c.half_bytes else "does not halve"
        lines.append(f"{c.upper.level / 1e12:.2f} -> {c.lower.level / 1e12:.2f} TB/s: edge {human(c.mid_bytes)}, {half}")
    return lines
