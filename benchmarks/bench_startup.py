"""The start-up path, before and after: ``--version``, ``--help`` (cached), a command's
``--help``, ``snapshot --json``, ``preflight --profile TRAIN-CPU`` and ``doctor``, against a bare
``python -c pass``, the metadata floor and ``python -m torch.utils.collect_env``, side by side
in one interleaved run.

Budgets (issue 13): ``--help`` / ``--version`` <= 2x ``python -c pass``; ``snapshot --json``
>= 25x faster than collect_env. With ``--rev REV``, ``src/`` of REV runs beside this checkout
(as in bench_revisions.py), each side with its own cache directory (warm after the warm-up
run, as on a user's machine). Commands run from a temporary directory outside any git
repository. The venv's console script (``bin/stackcheck``: it imports ``re`` before
stackcheck) is timed too where it runs this checkout.

Ratios are withheld (NOISY, exit 3) when the machine was too busy; see _refenv.MAX_SPREAD.

Usage: python benchmarks/bench_startup.py [--rev REV] [--python PATH] [--runs N] [--force]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import (  # noqa: E402
    FLOOR,
    FLOOR_CODE,
    ROOT,
    Bench,
    bench_arguments,
    bench_env,
    distribution_count,
    print_table,
    time_commands,
)
from bench_revisions import export_src, stackcheck_from  # noqa: E402

PASS = "python -c pass"
COLLECT = "python -m torch.utils.collect_env"
WORK = {
    "--version": ("--version",),
    "--help": ("--help",),
    "preflight --help": ("preflight", "--help"),
    "snapshot --json": ("snapshot", "--json"),
    "preflight -p TRAIN-CPU": ("preflight", "--profile", "TRAIN-CPU"),
    "doctor": ("doctor",),
}


def runs_this_checkout(script: Path, python: str) -> bool:
    code = "import stackcheck, sys; sys.stdout.write(stackcheck.__file__)"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, env=bench_env(python))
    return script.exists() and done.stdout.startswith(str(ROOT / "src"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", help="also run src/ of this revision (the before side)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter (venv) to run in")
    bench_arguments(ap, runs=15)
    args = ap.parse_args()
    python = args.python
    work = Path(tempfile.mkdtemp(prefix="stackcheck-startup-"))
    sides = {"after": ROOT / "src"}
    if args.rev:
        sides = {"before": export_src(args.rev, work / "before"), **sides}
    commands: dict = {PASS: [python, "-c", "pass"], FLOOR: [python, "-c", FLOOR_CODE]}
    for side, src in sides.items():
        env = {"STACKCHECK_CACHE_DIR": str(work / f"cache-{side}")}
        for label, argv in WORK.items():
            commands[f"{side}: {label}"] = (stackcheck_from(python, src, *argv), env)
    script = Path(python).with_name("stackcheck")
    if runs_this_checkout(script, python):
        env = {"STACKCHECK_CACHE_DIR": str(work / "cache-script")}
        for label in ("--version", "--help"):
            commands[f"bin/stackcheck {label}"] = ([str(script), label], env)
    torch = subprocess.run([python, "-c", "import torch.utils.collect_env"], capture_output=True)
    if torch.returncode == 0:
        commands[COLLECT] = [python, "-m", "torch.utils.collect_env"]
    print(
        f"{python} ({distribution_count(python)} distributions); sides: {', '.join(sides)}"
        f"{f' (before = {args.rev})' if args.rev else ''}; {args.runs} interleaved runs, medians [min-max]"
    )
    bench = Bench(force=args.force)
    results = time_commands(commands, args.runs, bench_env(python), bench, cwd=str(work))
    print()
    print_table(results, bench, PASS)
    wall = {label: r["wall"] for label, r in results.items()}
    print("\nbudgets (wall):")
    starts = [f"{side}: {label}" for side in sides for label in ("--version", "--help")]
    for label in [*starts, *(k for k in results if k.startswith("bin/stackcheck"))]:
        value = wall[label] / wall[PASS]
        print(bench.budget_line(f"{label:<26} / pass", value, (label, PASS), "budget <= 2x", value <= 2))
    if COLLECT in wall:
        for side in sides:
            label = f"{side}: snapshot --json"
            value = wall[COLLECT] / wall[label]
            text = f"collect_env / {label:<19}"
            print(bench.budget_line(text, value, (COLLECT, label), "budget >= 25x", value >= 25))
    for side in sides:
        label = f"{side}: preflight -p TRAIN-CPU"
        print(bench.budget_line(f"{label:<26} / floor", wall[label] / wall[FLOOR], (label, FLOOR)))
    if "before" in sides:
        print("\nafter / before (wall):")
        for label in WORK:
            a, b = f"after: {label}", f"before: {label}"
            print(bench.budget_line(f"{label:<18}", wall[a] / wall[b], (a, b)))
    bench.finish()


if __name__ == "__main__":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # time what users run: with .pyc files
    main()
