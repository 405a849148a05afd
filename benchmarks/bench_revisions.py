"""Two revisions of stackcheck side by side: "must not get slower" measured, not guessed.

Exports ``src/`` of REV (``git archive``) to a temporary directory and runs the same commands
from it and from this checkout, in the reference venv of benchmarks/_refenv.py, interleaved
round-robin so a shared machine's noise hits both alike. Each side gets its own metadata cache
(warm after the first run, as on a user's machine); "preflight, cold" runs with
STACKCHECK_NO_CACHE=1 (no metadata, graph or verdict cache). Prints medians [min-max] of process wall
and CPU time, the load, and the after/before ratio of each command (withheld when the run
was too noisy, see _refenv.Bench).

With ``--scale N`` both sides also judge venvs of 0 and N synthetic distributions
(``preflight --python``, bench_preflight's synthetic venvs) and the marginal cost per extra
distribution is printed for each.

Usage: python benchmarks/bench_revisions.py REV [--runs N] [--venv PATH] [--profile ID] [--scale N]
                                                [--force]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
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
    ensure_reference_venv,
    print_table,
    time_commands,
)


def export_src(rev: str, into: Path) -> Path:
    """``src/`` of ``rev`` unpacked below ``into``; a one-line error for an unknown revision."""
    into.mkdir(parents=True, exist_ok=True)
    archive = into / "src.tar"
    done = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), rev, "src"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"bench_revisions: cannot export {rev!r}: {done.stderr.strip()}")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def stackcheck_from(python: str, src: Path, *args: str) -> list[str]:
    """Run the stackcheck CLI of ``src`` with the venv's interpreter (nothing installed)."""
    code = f"import sys; sys.path.insert(0, {str(src)!r}); sys.argv[0] = 'stackcheck'; "
    code += "from stackcheck.cli import main; main()"
    return [python, "-c", code, *args]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the revision to compare with (e.g. a commit before a refactor)")
    ap.add_argument("--profile", default="TRAIN-CPU")
    ap.add_argument("--scale", type=int, default=0, help="N synthetic distributions (0: no scaling run)")
    bench_arguments(ap, runs=15)
    args = ap.parse_args()

    python = ensure_reference_venv(args.venv)
    work = Path(tempfile.mkdtemp(prefix="stackcheck-revisions-"))
    sides = {"before": export_src(args.rev, work / "before"), "after": ROOT / "src"}
    work_commands = {
        "preflight": ("preflight", "--profile", args.profile),
        "preflight, cold": ("preflight", "--profile", args.profile),  # STACKCHECK_NO_CACHE=1
        "doctor": ("doctor",),
        "snapshot --json": ("snapshot", "--json"),
        "deps conflicts": ("deps", "conflicts"),
        "deps tree": ("deps", "tree"),
    }
    sizes = (0, args.scale) if args.scale else ()
    if sizes:
        from bench_preflight import synthetic_venv

        for n in sizes:
            target = synthetic_venv(work / f"synthetic-{n}", n)
            work_commands[f"preflight, {n} synthetic"] = ("preflight", "-p", args.profile, "--python", target)
    commands: dict = {FLOOR: [python, "-c", FLOOR_CODE]}
    for side, src in sides.items():
        env = {"STACKCHECK_CACHE_DIR": str(work / f"cache-{side}")}
        for label, argv in work_commands.items():
            cold = {"STACKCHECK_NO_CACHE": "1"} if label.endswith(", cold") else {}
            commands[f"{side}: {label}"] = (stackcheck_from(python, src, *argv), {**env, **cold})
    print(
        f"reference venv: {python} ({distribution_count(python)} distributions); before = {args.rev}, "
        f"after = this checkout; {args.runs} interleaved runs, medians [min-max]"
    )
    bench = Bench(force=args.force)
    results = time_commands(commands, args.runs, bench_env(python), bench, cwd=str(work))
    print()
    print_table(results, bench, FLOOR)
    print("\nafter / before (wall):")
    for label in work_commands:
        a, b = f"after: {label}", f"before: {label}"
        print(bench.budget_line(f"{label:<16}", results[a]["wall"] / results[b]["wall"], (a, b)))
    print("\nafter / floor (wall):")
    for label in work_commands:
        a = f"after: {label}"
        print(bench.budget_line(f"{label:<16}", results[a]["wall"] / results[FLOOR]["wall"], (a, FLOOR)))
    if sizes:
        print(f"\nmarginal cost per extra distribution (0 → {args.scale} synthetic, wall medians):")
        for side in sides:
            a, b = (f"{side}: preflight, {n} synthetic" for n in reversed(sizes))
            per = (results[a]["wall"] - results[b]["wall"]) / args.scale * 1000
            cpu = (results[a]["cpu"] - results[b]["cpu"]) / args.scale * 1000
            print(f"  {side:<6} = {cpu:7.4f} ms/distribution of CPU time")
            print(
                bench.line(
                    f"{side:<6}", f"{per:7.4f} ms/distribution", (a, b), "budget <= 0.05 ms", per <= 0.05
                )
            )
    bench.finish()


if __name__ == "__main__":
    main()
