"""Preflight and snapshot against their peers, side by side in one run (DESIGN.md budgets).

Builds (or reuses) the reference venv of benchmarks/_refenv.py, installs stackcheck into it,
then times each command as a whole process, runs interleaved round-robin so a shared
machine's noise hits all alike, and prints medians (wall and CPU) and ratios:

    budget: preflight <= 3x the metadata floor; snapshot >= 10x faster than collect_env.

Usage: python benchmarks/bench_preflight.py [--runs N] [--venv PATH] [--profile ID]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import bench_env, distribution_count, ensure_reference_venv, install_stackcheck, time_commands  # noqa: E402

FLOOR = "floor: list(importlib.metadata.distributions())"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--venv", default=None, help="reference venv path (default .benchvenv)")
    ap.add_argument("--profile", default="TRAIN-CPU")
    args = ap.parse_args()

    python = ensure_reference_venv(args.venv)
    stackcheck = install_stackcheck(python)
    preflight = f"stackcheck preflight --profile {args.profile}"
    commands = {
        FLOOR: [python, "-c", "import importlib.metadata as m; list(m.distributions())"],
        preflight: [stackcheck, "preflight", "--profile", args.profile],
        "stackcheck snapshot --json": [stackcheck, "snapshot", "--json"],
        "stackcheck doctor": [stackcheck, "doctor"],
        "pip check": [python, "-m", "pip", "check"],
        "python -m torch.utils.collect_env": [python, "-m", "torch.utils.collect_env"],
    }
    print(
        f"reference venv: {python} ({distribution_count(python)} distributions); "
        f"{args.runs} interleaved runs, medians of process wall and CPU time\n"
    )
    results = time_commands(commands, args.runs, bench_env(python))
    floor = results[FLOOR]
    print(f"  {'command':<52} {'wall':>9} {'x floor':>8} {'cpu':>9} {'x floor':>8}  exit")
    for label, r in results.items():
        print(
            f"  {label:<52} {r['wall'] * 1000:7.1f}ms {r['wall'] / floor['wall']:7.2f}x "
            f"{r['cpu'] * 1000:7.1f}ms {r['cpu'] / floor['cpu']:7.2f}x  {r['exit']}"
        )
    pre, snap = results[preflight]["wall"], results["stackcheck snapshot --json"]["wall"]
    collect = results["python -m torch.utils.collect_env"]["wall"]
    print("\nbudgets (wall):")
    print(
        f"  preflight / floor       = {pre / floor['wall']:5.2f}x   (budget <= 3x)   {'PASS' if pre / floor['wall'] <= 3 else 'OVER'}"
    )
    print(
        f"  collect_env / snapshot  = {collect / snap:5.2f}x   (budget >= 10x)  {'PASS' if collect / snap >= 10 else 'UNDER'}"
    )
    print(f"  pip check / preflight   = {results['pip check']['wall'] / pre:5.2f}x")


if __name__ == "__main__":
    main()
