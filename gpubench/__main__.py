"""python3 -m gpubench TOOL [ARGS]: run one of the package's command-line tools (TOOL --help for its own)."""
import importlib
import sys

TOOLS = {
    "compare": "gpubench.regress.compare",
    "node_report": "gpubench.regress.node_report",
    "noise_profile": "gpubench.regress.noise_profile",
    "check_errors": "gpubench.regress.check_errors",
    "detection": "gpubench.regress.detection",
    "report": "gpubench.report",
    "bounds": "gpubench.analysis.bounds",
    "predict": "gpubench.analysis.predict",
    "ncu_table": "gpubench.analysis.ncu_table",
    "families": "gpubench.families",
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in TOOLS:
        given = f"unknown tool {argv[0]!r}; " if argv and argv[0] not in ("-h", "--help") else ""
        print(f"usage: python3 -m gpubench TOOL [ARGS]: {given}TOOL is one of {', '.join(TOOLS)}",
              file=sys.stderr if given else sys.stdout)
        return 2 if given or not argv else 0
    return importlib.import_module(TOOLS[argv[0]]).main(argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
