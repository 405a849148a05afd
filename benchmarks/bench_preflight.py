"""Preflight and snapshot against their peers, side by side in one run (DESIGN.md budgets).

Builds (or reuses) the reference venv of benchmarks/_refenv.py, installs stackcheck into it,
then times each command as a whole process (wall clock, warm file cache) and prints medians
and ratios:

    budget: preflight <= 3x the metadata floor; snapshot >= 10x faster than collect_env.

Usage: python benchmarks/bench_preflight.py [--runs N] [--venv PATH] [--profile ID]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import ROOT, distribution_count, ensure_reference_venv  # noqa: E402


def time_command(argv: list[str], runs: int, env: dict[str, str]) -> tuple[float, int]:
    """Median wall time (s) of ``runs`` runs after one warm-up, and the last exit code."""
    subprocess.run(argv, capture_output=True, env=env)
    times = []
    rc = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        rc = subprocess.run(argv, capture_output=True, env=env).returncode
        times.append(time.perf_counter() - t0)
    return statistics.median(times), rc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--venv", default=None, help="reference venv path (default .benchvenv)")
    ap.add_argument("--profile", default="TRAIN-CPU")
    args = ap.parse_args()

    python = ensure_reference_venv(args.venv)
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(ROOT)], check=True)
    bindir = Path(python).parent
    stackcheck = str(bindir / "stackcheck")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"

    commands = {
        "floor: list(importlib.metadata.distributions())": [python, "-c", "import importlib.metadata as m; list(m.distributions())"],
        f"stackcheck preflight --profile {args.profile}": [stackcheck, "preflight", "--profile", args.profile],
        "stackcheck snapshot --json": [stackcheck, "snapshot", "--json"],
        "stackcheck doctor": [stackcheck, "doctor"],
        "pip check": [python, "-m", "pip", "check"],
        "python -m torch.utils.collect_env": [python, "-m", "torch.utils.collect_env"],
    }
    n = distribution_count(python)
    print(f"reference venv: {python} ({n} distributions), {args.runs} runs each, medians of process wall time\n")
    results = {}
    for label, argv in commands.items():
        results[label], rc = time_command(argv, args.runs, env)
        print(f"  {label:<52} {results[label] * 1000:8.1f} ms  (exit {rc})", flush=True)

    floor = results["floor: list(importlib.metadata.distributions())"]
    print("\nratios to the floor:")
    for label, t in results.items():
        print(f"  {label:<52} {t / floor:6.2f}x")
    pre = results[f"stackcheck preflight --profile {args.profile}"]
    snap = results["stackcheck snapshot --json"]
    collect = results["python -m torch.utils.collect_env"]
    print("\nbudgets:")
    print(f"  preflight / floor            = {pre / floor:5.2f}x   (budget <= 3x)   {'PASS' if pre / floor <= 3 else 'OVER'}")
    print(f"  collect_env / snapshot       = {collect / snap:5.2f}x   (budget >= 10x)  {'PASS' if collect / snap >= 10 else 'UNDER'}")
    print(f"  pip check / preflight        = {results['pip check'] / pre:5.2f}x")


if __name__ == "__main__":
    main()
