"""gpubench's Python side: reading suite JSON (suite_json) and the family registry (families); analysis of
a run (analysis: bounds, edges, latency levels, the hierarchy curve, the GEMM ladder, the ncu table);
regression tracking (regress: compare, noise, noise profiles, node report, error check); and the run's
report. Each tool runs as `python3 -m gpubench TOOL ARGS` (see __main__) or as a console script once the
package is installed (pyproject.toml)."""
