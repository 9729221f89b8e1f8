"""The SM placement term across GPUs (profile.sm_placement / with_placement, compare's "SM placement" line): a
one-block latency chase runs on whichever SM its block lands on, and the same L2 loads take 271-298 cycles
depending on the SM (latency/sm_spread, every H200 alike); on another GPU the block lands elsewhere."""
import math

import pytest

from gpubench.regress import compare, profile
from test_noise import reps, suite

SPREAD = profile.SM_SPREAD
L1, L2, HBM = "latency/chase/ws:1024/stride:128", "latency/chase/ws:1048576/stride:128", "latency/chase/ws:1073741824/stride:128"
MIXED = "latency/chase/ws:262144/stride:128"
HOST = "latency/link/host"


def chase_suite(uuid, cycles, spread=(270.0, 282.0, 297.0), slow=1.0):
    """A run on GPU `uuid` with latency chases {name: cycles_per_load} (time proportional, x slow) and, unless
    spread is None, the per-SM spread (cycles_min, cycles_median, cycles_max)."""
    recs = {n: {"real_time": reps(c * 1e-6 * slow, 0.001), "cycles_per_load": [c * slow] * 5} for n, c in cycles.items()}
    if spread:
        recs[SPREAD] = {"real_time": reps(1e-3, 0.001), "cycles_min": [spread[0]] * 5,
                        "cycles_median": [spread[1]] * 5, "cycles_max": [spread[2]] * 5}
    s = suite(recs, {"gpu_name": "NVIDIA H200", "gpu_uuid": uuid, "git_commit": "a" * 40})
    s.path = f"{uuid}.json"
    return s


CYCLES = {L1: 32.0, MIXED: 157.0, L2: 281.0, HBM: 650.0, HOST: 2400.0}


def test_placement_is_the_per_sm_spread_past_l1():
    """27 cycles of spread: an L2 chase 27/281, an HBM one 27/650 (the same SM-to-L2 distance), an L1 one 0, a
    chase half past L1 half the 27 cycles; the host chase is not an SM's; no sm_spread, no term."""
    p = profile.sm_placement(chase_suite("GPU-1", CYCLES))
    assert p[L1] == 0.0 and HOST not in p and SPREAD not in p
    assert p[L2] == pytest.approx((281 - 32) / (282 - 32) * 27 / 281)
    assert p[HBM] == pytest.approx(27 / 650)
    assert p[MIXED] == pytest.approx(0.5 * 27 / 157)
    assert profile.sm_placement(chase_suite("GPU-1", CYCLES, spread=None)) == {}


def test_with_placement_adds_root_sum_square_the_widest_run():
    a, b = chase_suite("GPU-1", CYCLES), chase_suite("GPU-2", CYCLES, spread=(270.0, 282.0, 310.0))
    ranges, raised = profile.with_placement({L2: 0.03, "gemm/x": 0.01}, [a, b])
    assert ranges[L2] == pytest.approx(math.hypot(0.03, (281 - 32) / 250 * 40 / 281))
    assert ranges["gemm/x"] == 0.01 and ranges[HBM] == pytest.approx(40 / 650) and L1 not in raised


class Args:
    floor, k, min_time, metric, measured_floor = 0.05, 3.0, 1e-4, "real_time", None


def verdicts(base, cont, ranges):
    chosen = compare.Chosen("x", {n: 0.001 for n in ranges}, dict(ranges))
    chosen = compare.add_placement(chosen, [base], cont)
    return {r.name: r.verdict for r in compare.judge(Args, [base], cont, "real_time", chosen)}, chosen


def test_a_chase_on_another_gpu_moves_within_the_sm_spread():
    """A contender on another GPU whose chases are 6 % slower (its block on a farther SM): with the per-SM spread
    in the runs the L2 chase is within its range and same; without it, the 5 % floor calls it slower. On one GPU
    the term does not apply (the same SM from process to process)."""
    base, cont = chase_suite("GPU-1", CYCLES), chase_suite("GPU-2", CYCLES, slow=1.06)
    got, chosen = verdicts(base, cont, {L2: 0.01})
    assert got[L2] == "same" and chosen.placed == 3 and "SM placement: 3 one-SM latency benchmarks" in chosen.line
    bare = chase_suite("GPU-1", CYCLES, spread=None), chase_suite("GPU-2", CYCLES, spread=None, slow=1.06)
    assert verdicts(*bare, {L2: 0.01})[0][L2] == "slower"
    same_gpu = chase_suite("GPU-2", CYCLES)
    got, chosen = verdicts(same_gpu, cont, {L2: 0.01})
    assert got[L2] == "slower" and chosen.placed == 0
