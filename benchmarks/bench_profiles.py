"""The profile registry's cost and the CLI's start, side by side with the interpreter floors.

Every command runs as a whole process (wall clock), runs interleaved so machine noise hits all
alike; prints medians [min-max] and ratios to DESIGN.md's floor (`python -c "import
importlib.metadata as m; list(m.distributions())"`) and to a bare `python -c pass`. Loading and
resolving the catalog is on preflight's path, so it must stay a small part of preflight's
budget; `--help` and `--version` have their own: <= 2x a bare interpreter start.

Ratios are withheld (NOISY, exit 3) when the machine was too busy; see _refenv.MAX_SPREAD.

Usage: python benchmarks/bench_profiles.py [--runs N] [--force]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import Bench, bench_arguments, time_commands  # noqa: E402

BIN = Path(sys.executable).with_name("stackcheck")
PY = sys.executable
PASS, FLOOR = "python -c pass", "floor: list(distributions())"

CASES = {
    PASS: [PY, "-c", "pass"],
    FLOOR: [PY, "-c", "import importlib.metadata as m; list(m.distributions())"],
    "stackcheck --version": [str(BIN), "--version"],
    "stackcheck --help": [str(BIN), "--help"],
    "load catalog + resolve 1": [
        PY,
        "-c",
        "from stackcheck.catalog import load_catalog; load_catalog().get('PT-SFT-CUDA')",
    ],
    "load catalog + resolve all": [
        PY,
        "-c",
        "from stackcheck.catalog import load_catalog as l; c = l(); [c.get(i) for i in c.ids(True)]",
    ],
    "stackcheck profiles list": [str(BIN), "profiles", "list"],
    "stackcheck profiles show": [str(BIN), "profiles", "show", "PT-SFT-CUDA"],
    "stackcheck profiles validate": [str(BIN), "profiles", "validate"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    bench_arguments(parser)
    args = parser.parse_args()
    bench = Bench(force=args.force)
    results = time_commands(CASES, args.runs, dict(os.environ), bench, cwd="/")
    print(
        f"{'what':<32}{'median [min-max]':>24}{'× pass':>9}{'× floor':>9}{'exit':>6} "
        f"  ({args.runs} interleaved runs)"
    )
    for name, r in results.items():
        span = f"{r['wall'] * 1000:.1f}ms [{r['wall_min'] * 1000:.0f}-{r['wall_max'] * 1000:.0f}]"
        x_pass = bench.ratio(r["wall"] / results[PASS]["wall"], name, PASS) or "noisy"
        x_floor = bench.ratio(r["wall"] / results[FLOOR]["wall"], name, FLOOR) or "noisy"
        print(f"{name:<32}{span:>24}{x_pass:>9}{x_floor:>9}{r['exit']:>6}")
    print("\nbudgets (wall):")
    for name in ("stackcheck --version", "stackcheck --help"):
        value = results[name]["wall"] / results[PASS]["wall"]
        print(
            bench.budget_line(f"{name:<20} / python -c pass", value, (name, PASS), "budget <= 2x", value <= 2)
        )
    bench.finish()


if __name__ == "__main__":
    main()
