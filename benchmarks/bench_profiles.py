"""The profile registry's cost, side by side with the interpreter floors.

Every command runs as a whole process (wall clock), runs interleaved so machine noise hits all
alike; prints medians and ratios to DESIGN.md's floor (`python -c "import importlib.metadata as m;
list(m.distributions())"`) and to a bare `python -c pass`. Loading and resolving the catalog is
on preflight's path, so it must stay a small part of preflight's ≤ 3× budget.

Usage: python benchmarks/bench_profiles.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).with_name("stackcheck")
PY = sys.executable

CASES = {
    "python -c pass": [PY, "-c", "pass"],
    "floor: list(distributions())": [PY, "-c", "import importlib.metadata as m; list(m.distributions())"],
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
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):
        for name, cmd in CASES.items():
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd="/")
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(v) for name, v in times.items()}
    bare, floor = medians["python -c pass"], medians["floor: list(distributions())"]
    print(f"{'what':<32}{'median':>10}{'× pass':>9}{'× floor':>9}   ({args.runs} interleaved runs)")
    for name, value in medians.items():
        print(f"{name:<32}{value * 1000:>8.1f}ms{value / bare:>9.2f}{value / floor:>9.2f}")


if __name__ == "__main__":
    main()
