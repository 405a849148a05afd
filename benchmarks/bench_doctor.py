"""doctor and `deps conflicts` / `deps tree` against pip check and pipdeptree, side by side.

Builds (or reuses) the reference venv of benchmarks/_refenv.py (~160 distributions), installs
this checkout into it, checks that `stackcheck deps conflicts --no-extras` and `pip check`
agree on it, then times every command as a whole process (wall clock, warm file cache, runs
interleaved) and prints medians and ratios.

    budget (DESIGN.md): requirement-conflict detection with pip check's findings, >= 5x faster.

Usage: python benchmarks/bench_doctor.py [--runs N] [--venv PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import bench_env, distribution_count, ensure_reference_venv, install_stackcheck, time_commands  # noqa: E402

FLOOR = "floor: list(importlib.metadata.distributions())"


def findings_agree(python: str, stackcheck: str, env: dict[str, str]) -> str:
    """Whether both tools report the same broken requirements on the reference venv."""
    pip = subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True, env=env)
    ours = subprocess.run(
        [stackcheck, "deps", "conflicts", "--no-extras", "--json"], capture_output=True, text=True, env=env
    )
    ours_lines = sorted(c["message"] for c in json.loads(ours.stdout)["conflicts"])
    pip_lines = sorted(ln for ln in pip.stdout.splitlines() if ln and ln != "No broken requirements found.")
    same = ours_lines == pip_lines and (pip.returncode == 0) == (ours.returncode == 0)
    return f"{'yes' if same else 'NO'} ({len(pip_lines)} findings from pip check, {len(ours_lines)} from stackcheck)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--venv", default=None, help="reference venv path (default .benchvenv)")
    args = ap.parse_args()

    python = ensure_reference_venv(args.venv)
    stackcheck = install_stackcheck(python)
    env = bench_env(python)
    commands = {
        FLOOR: [python, "-c", "import importlib.metadata as m; list(m.distributions())"],
        "stackcheck doctor": [stackcheck, "doctor"],
        "stackcheck deps conflicts": [stackcheck, "deps", "conflicts"],
        "stackcheck deps tree": [stackcheck, "deps", "tree"],
        "pip check": [python, "-m", "pip", "check"],
        "pipdeptree": [python, "-m", "pipdeptree"],
    }
    print(f"reference venv: {python} ({distribution_count(python)} distributions)")
    print(f"deps conflicts --no-extras and pip check agree: {findings_agree(python, stackcheck, env)}")
    print(f"{args.runs} interleaved runs each, medians of process wall time\n")
    results = time_commands(commands, args.runs, env)
    floor = results[FLOOR]
    print(f"  {'command':<50} {'wall':>9} {'x floor':>8} {'cpu':>9} {'x floor':>8}  exit")
    for label, r in results.items():
        print(
            f"  {label:<50} {r['wall'] * 1000:6.0f} ms {r['wall'] / floor['wall']:7.2f}x"
            f" {r['cpu'] * 1000:6.0f} ms {r['cpu'] / floor['cpu']:7.2f}x  {r['exit']}"
        )

    def ratio(a: str, b: str) -> str:
        return f"{results[a]['wall'] / results[b]['wall']:5.2f}x wall, {results[a]['cpu'] / results[b]['cpu']:5.2f}x cpu"

    print("\nside by side:")
    print(
        f"  pip check  / stackcheck deps conflicts = {ratio('pip check', 'stackcheck deps conflicts')}   (budget >= 5x)"
    )
    print(
        f"  pip check  / stackcheck doctor         = {ratio('pip check', 'stackcheck doctor')}   (doctor: every ISO/DEP/KERN/CUDA/KB check)"
    )
    print(f"  pipdeptree / stackcheck deps tree      = {ratio('pipdeptree', 'stackcheck deps tree')}")
    print(f"  stackcheck doctor / floor              = {ratio('stackcheck doctor', FLOOR)}")


if __name__ == "__main__":
    main()
