"""gpubench/regress/identity.py: which code two runs are of."""
from gpubench.regress.identity import same_code_and_machine

BASE = {"gpu_name": "NVIDIA H200", "gpu_uuid": "GPU-a", "git_commit": "c0ffee", "git_dirty": "true", "suite_version": "0.3.0"}


def test_dirty_trees_of_one_commit_with_different_bench_code_are_different_code():
    # The H200 runs of 2026-12-02: one stale commit, both trees dirty, gpubench's sources differ (a variant).
    a, b = dict(BASE, bench_code="342113e1131b395a"), dict(BASE, bench_code="bb2ac47246ba0090")
    assert same_code_and_machine(a, b) == ("same GPU", "different code")


def test_dirty_trees_with_equal_bench_code_are_the_same_benchmark_code():
    a = dict(BASE, bench_code="342113e1131b395a")
    assert same_code_and_machine(a, dict(a)) == ("same GPU", "same benchmark code")


def test_dirty_trees_without_bench_code_stay_unknown():
    assert same_code_and_machine(dict(BASE), dict(BASE)) == ("same GPU", "unknown")
