"""doctor against pip check and the metadata floor, side by side.

Builds (or reuses) the reference venv of benchmarks/_refenv.py (~160 distributions), installs
this checkout into it, then times every command as a whole process (wall clock, warm file
cache, runs interleaved) and prints medians [min-max] and ratios. `deps conflicts` and
`deps tree` against uv, pip check and pipdeptree: benchmarks/bench_deps.py.

Ratios are withheld (NOISY, exit 3) when the machine was too busy; see _refenv.MAX_SPREAD.

Usage: python benchmarks/bench_doctor.py [--runs N] [--venv PATH] [--force]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import FLOOR, FLOOR_CODE, bench_arguments, print_table, reference, time_commands  # noqa: E402

DOCTOR, PIP = "stackcheck doctor", "pip check"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_arguments(ap, runs=11)
    args = ap.parse_args()

    python, stackcheck, env, bench = reference(args)
    commands = {
        FLOOR: [python, "-c", FLOOR_CODE],
        DOCTOR: [stackcheck, "doctor"],
        PIP: [python, "-m", "pip", "check"],
    }
    results = time_commands(commands, args.runs, env, bench)
    print()
    print_table(results, bench, FLOOR)
    print("\nside by side (wall):")
    print(
        bench.budget_line("pip check / doctor", results[PIP]["wall"] / results[DOCTOR]["wall"], (PIP, DOCTOR))
    )
    print(
        bench.budget_line(
            "doctor / floor    ", results[DOCTOR]["wall"] / results[FLOOR]["wall"], (DOCTOR, FLOOR)
        )
    )
    bench.finish()


if __name__ == "__main__":
    main()
