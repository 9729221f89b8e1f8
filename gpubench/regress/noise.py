"""The names of the former noise module, kept importable (node_report.py, tests, users' scripts). The code is
split by concern:
- verdict.py: noise estimates, thresholds and the verdict rules (RULES), compare_suites;
- identity.py: which GPU and code a run is (same_code_and_machine, code versions, boards, slug);
- profile.py: noise profiles (between GPUs of a model) and reading them back for a comparison;
- detection.py: detection power and false alarms on recorded runs.
"""
from gpubench.regress.detection import (BUCKETS, SIZES, _with_profile, configurations, detection_rate,  # noqa: F401
                                        detection_table, eligible, false_alarm_table, false_alarms, slowed)
from gpubench.regress.identity import (BOARD, _flag, _newest, bench_code, code_version, family_of,  # noqa: F401
                                       same_code_and_machine, slug)
from gpubench.regress.profile import (_boards, _by_code_version, _round_up, matching, profile,  # noqa: F401
                                      profile_document, profile_for_board, profile_for_runs, profile_ranges,
                                      profile_sigmas, profile_spread)
from gpubench.regress.verdict import (AMBIGUOUS, CLOCK, CLOCK_MIN, CLOCK_TOL, FASTER, FLOOR, GPU_PAIR,  # noqa: F401
                                      K_SIGMA, MEASURED_FLOOR, MIN_SAMPLES, MIN_TIME, OPTIONAL_RULES, RULES, SAME,
                                      SLOWER, rules_without,
                                      THROTTLED, TIME, Facts, Noise, Row, Rule, Verdict, _D2, _clock_change,
                                      between_noise, compare_suites, judge, noise, run_clock, unthrottled, verdict,
                                      within_noise)
