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


def chase_suite(uuid, cycles, spread=(270.0, 282.0, 297.0), slow=1.0, smid=None, per_sm=None):
    """A run on GPU `uuid` with latency chases {name: cycles_per_load} (time proportional, x slow) and, unless
    spread is None, the per-SM spread (cycles_min, cycles_median, cycles_max); smid: the chases' smid counter
    (one value for every repetition, or a list of 5), per_sm: {smid: sm<smid>_cycles} of the spread."""
    recs = {n: {"real_time": reps(c * 1e-6 * slow, 0.001), "cycles_per_load": [c * slow] * 5} for n, c in cycles.items()}
    if smid is not None:
        for n in cycles:
            recs[n]["smid"] = list(smid) if isinstance(smid, (list, tuple)) else [float(smid)] * 5
    if spread:
        recs[SPREAD] = {"real_time": reps(1e-3, 0.001), "cycles_min": [spread[0]] * 5,
                        "cycles_median": [spread[1]] * 5, "cycles_max": [spread[2]] * 5,
                        **{f"sm{k}_cycles": [v] * 5 for k, v in (per_sm or {}).items()}}
    s = suite(recs, {"gpu_name": "NVIDIA H200", "gpu_uuid": uuid, "git_commit": "a" * 40})
    s.path = f"{uuid}.json"
    return s


CYCLES = {L1: 32.0, MIXED: 157.0, L2: 281.0, HBM: 650.0, HOST: 2400.0}


def test_placement_is_the_per_sm_spread_past_l1():
    """27 cycles of spread: an L2 chase 27/281, an HBM one 27/650 (the same SM-to-L2 distance), an L1 one 0, a
    chase half past L1 half the 27 cycles; the host chase is not an SM's; no sm_spread, no term."""
    p = {n: profile.placement_term([x]) for n, x in profile.sm_placement(chase_suite("GPU-1", CYCLES)).items()}
    assert p[L1] == 0.0 and HOST not in p and SPREAD not in p
    assert p[L2] == pytest.approx((281 - 32) / (282 - 32) * 27 / 281)
    assert p[HBM] == pytest.approx(27 / 650)
    assert p[MIXED] == pytest.approx(0.5 * 27 / 157)
    assert profile.sm_placement(chase_suite("GPU-1", CYCLES, spread=None)) == {}


def test_with_placement_adds_root_sum_square_the_widest_run():
    a, b = chase_suite("GPU-1", CYCLES), chase_suite("GPU-2", CYCLES, spread=(270.0, 282.0, 310.0))
    ranges, raised, known = profile.with_placement({L2: 0.03, "gemm/x": 0.01}, [a, b])
    assert ranges[L2] == pytest.approx(math.hypot(0.03, (281 - 32) / 250 * 40 / 281))
    assert ranges["gemm/x"] == 0.01 and ranges[HBM] == pytest.approx(40 / 650) and L1 not in raised
    assert known == set()


PER_SM = {0: 283.0, 7: 275.0, 40: 291.0}


def test_runs_that_say_their_chasing_sm_take_the_difference_of_the_two_sms():
    """SM 40 is 9 cycles slower than the median, SM 7 7 faster: between them 16 cycles, not the 27 of the spread;
    both on SM 0 (1 cycle above the median on each GPU): nothing."""
    a = chase_suite("GPU-1", CYCLES, smid=40, per_sm=PER_SM)
    b = chase_suite("GPU-2", CYCLES, smid=7, per_sm=PER_SM)
    share = (281 - 32) / (282 - 32) / 281
    ranges, raised, known = profile.with_placement({}, [a, b])
    assert ranges[L2] == pytest.approx(share * 16) and ranges[HBM] == pytest.approx(16 / 650)
    assert known == raised == {L2, HBM, MIXED}
    same = profile.with_placement({L2: 0.01}, [chase_suite("GPU-1", CYCLES, smid=0, per_sm=PER_SM),
                                                  chase_suite("GPU-2", CYCLES, smid=0, per_sm=PER_SM)])
    assert same[0][L2] == pytest.approx(0.01) and same[1] == set()


@pytest.mark.parametrize("other", [
    dict(smid=None, per_sm=PER_SM),               # an older run: no smid counter
    dict(smid=[7, 7, 40, 7, 7], per_sm=PER_SM),   # the block moved between repetitions
    dict(smid=3, per_sm=PER_SM),                  # no sm3_cycles in its spread
])
def test_a_run_that_cannot_say_its_sm_falls_back_on_the_spread(other):
    a = chase_suite("GPU-1", CYCLES, smid=40, per_sm=PER_SM)
    ranges, raised, known = profile.with_placement({}, [a, chase_suite("GPU-2", CYCLES, **other)])
    assert ranges[L2] == pytest.approx((281 - 32) / (282 - 32) * 27 / 281) and known == set()
    # --sm-placement named: no term where a run cannot say its SM
    assert profile.with_placement({L2: 0.01}, [a, chase_suite("GPU-2", CYCLES, **other)], unnamed=False) == \
        ({L2: 0.01}, set(), set())


class Args:
    floor, k, min_time, metric, measured_floor, skip_rule = 0.05, 3.0, 1e-4, "real_time", None, ()


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
    assert "0 the difference between the SMs they ran on (smid), 3 the per-SM spread" in chosen.line
    bare = chase_suite("GPU-1", CYCLES, spread=None), chase_suite("GPU-2", CYCLES, spread=None, slow=1.06)
    assert verdicts(*bare, {L2: 0.01})[0][L2] == "slower"
    same_gpu = chase_suite("GPU-2", CYCLES)
    got, chosen = verdicts(same_gpu, cont, {L2: 0.01})
    assert got[L2] == "slower" and chosen.placed == 0


def test_a_chase_on_an_sm_as_far_as_the_baselines_is_judged_without_the_spread():
    """Both runs name their chasing SM, 2 cycles apart: the term is 2 cycles, so a 6 % slower L2 chase is slower
    (with the spread's 27 cycles it was same above), and one within the SMs' difference is same."""
    per_sm = {5: 282.0, 9: 284.0}
    base = chase_suite("GPU-1", CYCLES, smid=5, per_sm=per_sm)
    got, chosen = verdicts(base, chase_suite("GPU-2", CYCLES, slow=1.06, smid=9, per_sm=per_sm), {L2: 0.01})
    assert got[L2] == "slower" and "3 the difference between the SMs they ran on (smid), 0 the per-SM spread" in chosen.line
    got, _ = verdicts(base, chase_suite("GPU-2", CYCLES, slow=1.007, smid=9, per_sm=per_sm), {L2: 0.01})
    assert got[L2] == "same"


def test_two_gpus_of_7047306_chase_from_sm_124_and_take_the_smid_term():
    """The committed runs of commit 7047306 on GPU-b2ab5978 and GPU-5e6c4e29: every chase ran on SM 124 in every
    repetition on both, whose L2 latency is 282.9 and 282.5 cycles (medians 282.6, 282.1): the term is that
    0.3-cycle difference of offsets, not the 26-cycle per-SM range, for all 148 one-SM latency benchmarks."""
    from conftest import RESULTS_DIR, committed
    runs = [committed(RESULTS_DIR / "h200" / r / "benchmarks.json.gz") for r in ("20261203T043009Z", "20261203T044006Z")]
    places = [profile.sm_placement(s) for s in runs]
    chases = [r for r in runs[0].records if r.name.startswith("latency/chase/")]
    assert chases and all(set(r.samples["smid"]) == {124.0} for r in chases)
    ranges, raised, known = profile.with_placement({}, runs)
    assert len(raised) == len(known) == 148
    l2 = "latency/chase/l2only/ws:4194304/stride:128"
    offsets = [p[l2].offset for p in places]
    assert abs(offsets[0] - offsets[1]) < 0.5 and min(p[l2].spread for p in places) > 20
    assert ranges[l2] < 0.002
