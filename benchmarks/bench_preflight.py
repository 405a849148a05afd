"""Preflight and snapshot against their peers, side by side in one run (DESIGN.md budgets).

Builds (or reuses) the reference venv of benchmarks/_refenv.py, installs stackcheck into it,
then times each command as a whole process, runs interleaved round-robin so a shared
machine's noise hits all alike, and prints medians [min-max] (wall and CPU) and ratios:

    budget (issue 13): preflight warm <= 1.5x the metadata floor, cold (STACKCHECK_NO_CACHE=1)
            <= 2.5x; snapshot >= 25x faster than collect_env; <= 0.05 ms per extra distribution.

"Warm" is a repeated run: the probe's metadata cache and the verdict cache hold this venv
(docs/cache.md); "cold" derives everything. Each budget is printed for wall and CPU time (CPU:
user + sys of the process, the steadier figure on a shared machine).

Then the scaling: venvs (no pip, nothing else) holding 0, 100, 1,000 and 5,000 synthetic tiny
distributions (METADATA with Name, Version and up to three Requires-Dist; a RECORD; an empty
package), judged with
``stackcheck preflight --python VENV/bin/python`` (the probe reads them in that interpreter,
with PYTHONPATH unset), warm (metadata cache) and cold (STACKCHECK_NO_CACHE=1). The marginal
cost per extra distribution is the least-squares slope of the medians over N.

Ratios are withheld (NOISY, exit 3) when the machine was too busy; see _refenv.MAX_SPREAD.

Usage: python benchmarks/bench_preflight.py [--runs N] [--venv PATH] [--profile ID]
                                            [--scale 100,1000,5000] [--scale-runs N] [--force]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import venv
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import FLOOR, FLOOR_CODE, bench_arguments, print_table, reference, time_commands  # noqa: E402

PER_DIST_BUDGET_MS = 0.05
WARM_BUDGET, COLD_BUDGET, SNAPSHOT_BUDGET = 1.5, 2.5, 25  # x the floor; x faster than collect_env


def synthetic_venv(root: Path, count: int) -> str:
    """A venv without pip holding ``count`` synthetic distributions, each requiring up to two
    earlier ones (so all are satisfied) and pytest for an extra; its python."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    site = next(root.glob("lib/python*/site-packages"))
    for i in range(count):
        name = f"synth_pkg_{i:05d}"
        d = site / f"{name}-1.{i % 7}.0.dist-info"
        d.mkdir()
        requires = [f"synth-pkg-{j:05d}>=1.0" for j in (i - 1, i // 2) if 0 <= j < i]
        requires.append('pytest>=8; extra == "test"')
        (d / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: synth-pkg-{i:05d}\nVersion: 1.{i % 7}.0\nProvides-Extra: test\n"
            + "".join(f"Requires-Dist: {r}\n" for r in requires)
            + "\nA synthetic distribution.\n"
        )
        (d / "RECORD").write_text(f"{name}/__init__.py,,\n{d.name}/METADATA,,\n{d.name}/RECORD,,\n")
        (site / name).mkdir()
        (site / name / "__init__.py").write_text("")
    return str(root / "bin" / "python")


def slope(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of (n, seconds) → seconds per unit of n."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def scaling(stackcheck: str, profile: str, counts: list[int], runs: int, env: dict[str, str], bench) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-scaling-"))
    try:
        targets = {n: synthetic_venv(work / f"n{n}", n) for n in [0, *counts]}
        commands: dict = {}
        for n, py in targets.items():
            argv = [stackcheck, "preflight", "--profile", profile, "--python", py]
            commands[f"preflight warm, {n:>5} synthetic"] = argv
            commands[f"preflight cold, {n:>5} synthetic"] = (argv, {"STACKCHECK_NO_CACHE": "1"})
            commands[f"floor, {n:>5} synthetic"] = [py, "-c", FLOOR_CODE]
        print(
            f"\nscaling: {', '.join(str(n) for n in targets)} synthetic distributions, {runs} "
            "interleaved runs"
        )
        results = time_commands(commands, runs, env, bench)
        print(f"  {'command':<40} {'wall median [min-max]':>26}  exit")
        for label, r in results.items():
            print(
                f"  {label:<40} {r['wall'] * 1000:8.1f}ms "
                f"[{r['wall_min'] * 1000:.0f}-{r['wall_max'] * 1000:.0f}]  {r['exit']}"
            )
        print("\nmarginal cost per extra distribution (least-squares slope of the medians):")
        for kind in ("preflight warm", "preflight cold", "floor"):
            labels = [label for label in results if label.startswith(kind + ",")]
            per = slope([(n, results[label]["wall"]) for n, label in zip(targets, labels)]) * 1000
            cpu = slope([(n, results[label]["cpu"]) for n, label in zip(targets, labels)]) * 1000
            print(f"  {kind:<15} = {cpu:7.4f} ms/distribution of CPU time (steadier on a busy machine)")
            budget = (
                f"budget <= {PER_DIST_BUDGET_MS} ms"
                if kind.startswith("preflight")
                else "importlib.metadata, for scale"
            )
            passes = per <= PER_DIST_BUDGET_MS if kind.startswith("preflight") else None
            print(bench.line(f"{kind:<15}", f"{per:7.4f} ms/distribution", tuple(labels), budget, passes))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="TRAIN-CPU")
    ap.add_argument(
        "--scale", default="100,1000,5000", help="synthetic distribution counts ('' to skip the scaling)"
    )
    ap.add_argument("--scale-runs", type=int, default=7)
    bench_arguments(ap, runs=15)
    args = ap.parse_args()

    python, stackcheck, env, bench = reference(args)
    preflight = f"stackcheck preflight --profile {args.profile}"
    cold = f"{preflight}, cold"
    collect, snapshot = "python -m torch.utils.collect_env", "stackcheck snapshot --json"
    commands = {
        FLOOR: [python, "-c", FLOOR_CODE],
        preflight: [stackcheck, "preflight", "--profile", args.profile],
        cold: ([stackcheck, "preflight", "--profile", args.profile], {"STACKCHECK_NO_CACHE": "1"}),
        snapshot: [stackcheck, "snapshot", "--json"],
        "stackcheck doctor": [stackcheck, "doctor"],
        "pip check": [python, "-m", "pip", "check"],
        collect: [python, "-m", "torch.utils.collect_env"],
    }
    results = time_commands(commands, args.runs, env, bench)
    print()
    print_table(results, bench, FLOOR)
    for clock in ("wall", "cpu"):
        print(f"\nbudgets ({clock} time):")
        pre, off, floor = (results[k][clock] for k in (preflight, cold, FLOOR))
        print(
            bench.budget_line(
                "preflight warm / floor ",
                pre / floor,
                (preflight, FLOOR),
                f"budget <= {WARM_BUDGET:g}x",
                pre / floor <= WARM_BUDGET,
            )
        )
        print(
            bench.budget_line(
                "preflight cold / floor ",
                off / floor,
                (cold, FLOOR),
                f"budget <= {COLD_BUDGET:g}x",
                off / floor <= COLD_BUDGET,
            )
        )
        faster = results[collect][clock] / results[snapshot][clock]
        print(
            bench.budget_line(
                "collect_env / snapshot ",
                faster,
                (collect, snapshot),
                f"budget >= {SNAPSHOT_BUDGET:g}x",
                faster >= SNAPSHOT_BUDGET,
            )
        )
        print(
            bench.budget_line(
                "pip check / preflight  ", results["pip check"][clock] / pre, ("pip check", preflight)
            )
        )
    counts = [int(n) for n in args.scale.split(",") if n.strip()]
    if counts:
        scaling(stackcheck, args.profile, counts, args.scale_runs, env, bench)
    bench.finish()


if __name__ == "__main__":
    main()
