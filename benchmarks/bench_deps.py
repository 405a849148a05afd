"""`stackcheck deps conflicts` and `deps tree` against uv, pip and pipdeptree, side by side.

Builds (or reuses) the reference venv of benchmarks/_refenv.py (~160 distributions), installs
this checkout into it, checks that `stackcheck deps conflicts --no-extras` and `pip check`
agree on it, then times every command as a whole process (wall clock, warm file cache and
metadata cache, runs interleaved; a warm `deps` run is answered from its stored answer, see
src/stackcheck/cli/answers.py) and prints medians [min-max] and the ratios, of wall and of CPU
time (user + sys: the steadier figure on a shared machine), next to `python -c pass` of the
same venv, the floor of any Python tool:

    budgets (DESIGN.md): deps conflicts, warm, <= 1.5x `uv pip check`; the findings of
    `pip check`, >= 5x faster than it; deps tree no slower than pipdeptree.

uv is looked up on PATH, then as the `uv` Python package's binary (`python -m uv` would add an
interpreter start to uv's time); without it the uv ratio is not measured, and says so.
Ratios are withheld (NOISY, exit 3) when the machine was too busy; see _refenv.MAX_SPREAD.

Usage: python benchmarks/bench_deps.py [--runs N] [--venv PATH] [--force]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _refenv import FLOOR, FLOOR_CODE, bench_arguments, print_table, reference, time_commands  # noqa: E402

CONFLICTS, TREE = "stackcheck deps conflicts", "stackcheck deps tree"
UV, PIP, PIPDEPTREE = "uv pip check", "pip check", "pipdeptree"
PASS = "python -c pass"


def find_uv() -> tuple[str | None, str]:
    """(the uv binary, where it was found) or (None, why not)."""
    on_path = shutil.which("uv")
    if on_path:
        return on_path, "on PATH"
    try:
        from uv import find_uv_bin  # the `uv` package from PyPI ships the binary

        return find_uv_bin(), "the uv Python package's binary"
    except (ImportError, FileNotFoundError) as exc:
        return None, f"uv not found (not on PATH, and the uv package: {type(exc).__name__}: {exc})"


def findings_agree(python: str, stackcheck: str, env: dict[str, str]) -> str:
    """Whether both tools report the same broken requirements on the reference venv."""
    pip = subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True, env=env)
    ours = subprocess.run(
        [stackcheck, "deps", "conflicts", "--no-extras", "--json"], capture_output=True, text=True, env=env
    )
    ours_lines = sorted(c["message"] for c in json.loads(ours.stdout)["conflicts"])
    pip_lines = sorted(ln for ln in pip.stdout.splitlines() if ln and ln != "No broken requirements found.")
    same = ours_lines == pip_lines and (pip.returncode == 0) == (ours.returncode == 0)
    verdict = "yes" if same else "NO"
    return f"{verdict} ({len(pip_lines)} findings from pip check, {len(ours_lines)} from stackcheck)"


def side_by_side(results: dict, bench, clock: str, no_uv: str) -> None:
    """The budget lines, on one clock (``wall`` or ``cpu``)."""

    def ratio(a: str, b: str) -> float:
        return results[a][clock] / results[b][clock]

    if not no_uv:
        print(
            bench.budget_line(
                "deps conflicts / uv pip check",
                ratio(CONFLICTS, UV),
                (CONFLICTS, UV),
                "budget <= 1.5x",
                ratio(CONFLICTS, UV) <= 1.5,
            )
        )
    else:
        print(f"  deps conflicts / uv pip check = not measured: {no_uv}")
    print(
        bench.budget_line(
            "pip check / deps conflicts   ",
            ratio(PIP, CONFLICTS),
            (PIP, CONFLICTS),
            "budget >= 5x",
            ratio(PIP, CONFLICTS) >= 5,
        )
    )
    print(
        bench.budget_line(
            "deps tree / pipdeptree       ",
            ratio(TREE, PIPDEPTREE),
            (TREE, PIPDEPTREE),
            "budget <= 1x",
            ratio(TREE, PIPDEPTREE) <= 1,
        )
    )
    for label in (CONFLICTS, TREE, *((UV,) if not no_uv else ())):
        print(bench.budget_line(f"{label} / {PASS}".ljust(29), ratio(label, PASS), (label, PASS)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_arguments(ap, runs=11)
    args = ap.parse_args()

    python, stackcheck, env, bench = reference(args)
    uv, uv_where = find_uv()
    commands = {
        FLOOR: [python, "-c", FLOOR_CODE],
        PASS: [python, "-c", "pass"],
        CONFLICTS: [stackcheck, "deps", "conflicts"],
        PIP: [python, "-m", "pip", "check"],
        TREE: [stackcheck, "deps", "tree"],
        PIPDEPTREE: [python, "-m", "pipdeptree"],
    }
    if uv:
        commands[UV] = [uv, "pip", "check", "--python", python]
    print(f"uv: {uv} ({uv_where})" if uv else f"uv: {uv_where}; `uv pip check` is not measured")
    print(f"deps conflicts --no-extras and pip check agree: {findings_agree(python, stackcheck, env)}")
    results = time_commands(commands, args.runs, env, bench)
    print()
    print_table(results, bench, FLOOR)

    for clock in ("wall", "cpu"):
        print(f"\nside by side ({clock}):")
        side_by_side(results, bench, clock, uv_where if not uv else "")
    bench.finish()


if __name__ == "__main__":
    main()
