"""The reference environment of DESIGN.md's performance budgets, shared by every benchmark.

A venv with torch (the CPU build, installed from the local wheel), transformers, accelerate,
datasets, jupyter and friends — about 160 distributions. It is built once into a git-ignored
directory (``.benchvenv/`` by default) and reused; a marker file records the package list so a
changed list rebuilds it.

    from _refenv import ensure_reference_venv
    python = ensure_reference_venv()          # -> ".../.benchvenv/bin/python"

Run it directly to build (or check) the venv:  ``python benchmarks/_refenv.py [PATH]``
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATH = ROOT / ".benchvenv"

# torch 2.13.0 is the only torch served from a local file here (any other version would be a
# multi-GB download); pipdeptree is a peer we measure against.
PACKAGES = (
    "torch==2.13.0",
    "transformers",
    "accelerate",
    "datasets",
    "jupyter",
    "pipdeptree",
    "scikit-learn",
    "matplotlib",
)
_MARKER = ".stackcheck-refenv"


def _python_of(path: Path) -> Path:
    return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_reference_venv(path: str | os.PathLike | None = None, *, quiet: bool = True) -> str:
    """Build the reference venv at ``path`` unless an up-to-date one is there; return its python."""
    target = Path(path) if path else DEFAULT_PATH
    python = _python_of(target)
    marker = target / _MARKER
    wanted = "\n".join(PACKAGES) + "\n"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return str(python)
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(target)
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", *PACKAGES]
    if quiet:
        cmd.insert(4, "-q")
    subprocess.run(cmd, check=True)
    marker.write_text(wanted)
    return str(python)


def install_stackcheck(python: str) -> str:
    """Install this checkout (editable) into the venv; return its ``stackcheck`` script."""
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(ROOT)], check=True
    )
    return str(Path(python).parent / "stackcheck")


def bench_env(python: str) -> dict[str, str]:
    """The environment of a shell that activated the venv: no PYTHONPATH, its bin first, and
    bytecode written as usual (with PYTHONDONTWRITEBYTECODE, as some CI images set it, every
    run would compile the sources of a fresh checkout again, and a side by side would time that)."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PATH"] = f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


# The noise rule. A ratio is reported only from a run where (a) the other work on the machine
# stayed at or under its cores: the 1-minute load average, read at the start and at the end,
# less the benchmark's own one runnable process (OWN_LOAD), was <= the number of cores, and
# (b) every command it compares had (max - min) / median <= 1.0 over its runs: one run taking
# twice the time of another means something else had the cores. Otherwise the ratio is
# printed as NOISY and the script exits 3 (--force reports it, marked).
MAX_SPREAD = 1.0
OWN_LOAD = 1.0
NOISY = "NOISY — not reported, rerun on a quieter machine"
EXIT_NOISY = 3


def machine_load() -> tuple[float, int]:
    """(1-minute load average, cores)."""
    return os.getloadavg()[0], os.cpu_count() or 1


def spread(samples: list[float]) -> float:
    """(max - min) / median of one command's samples."""
    import statistics

    med = statistics.median(samples)
    return (max(samples) - min(samples)) / med if med > 0 else 0.0


def summary(samples: list[float]) -> dict:
    """median, min, max and spread of a list of timings (seconds)."""
    import statistics

    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "spread": spread(samples),
    }


class Bench:
    """One benchmark run: the machine load at its start and end, the timings it took, and the
    noise rule applied to every ratio it prints (see MAX_SPREAD). ``finish()`` exits 3 when a
    ratio was withheld, unless ``force``."""

    def __init__(self, force: bool = False):
        self.force = force
        self.cores = machine_load()[1]
        self.loads: list[float] = []
        self.samples: dict[str, list[float]] = {}
        self.withheld = 0

    def load(self, when: str) -> str:
        """Read the load now; the line to print."""
        value, self.cores = machine_load()
        self.loads.append(value)
        busy = "  (other work over the cores)" if value - OWN_LOAD > self.cores else ""
        return f"machine load {when}: {value:.2f} (1-min average) on {self.cores} cores{busy}"

    def add(self, label: str, samples: list[float]) -> dict:
        self.samples[label] = list(samples)
        return summary(samples)

    def noise(self, *labels: str) -> list[str]:
        """Why a ratio between ``labels`` is not to be trusted ([] = it is)."""
        peak = max(self.loads, default=0.0)
        why = (
            [f"load {peak:.2f} - {OWN_LOAD:g} (this benchmark) > {self.cores} cores"]
            if peak - OWN_LOAD > self.cores
            else []
        )
        for label in labels:
            s = spread(self.samples[label])
            if s > MAX_SPREAD:
                why.append(f"{label}: (max-min)/median = {s:.2f} > {MAX_SPREAD:g}")
        return why

    def ratio(self, value: float, *labels: str) -> str | None:
        """``value`` formatted, or None when the noise rule withholds it (counted)."""
        if self.noise(*labels) and not self.force:
            self.withheld += 1
            return None
        return f"{value:6.2f}x"

    def line(
        self, text: str, shown: str, labels: tuple[str, ...], budget: str = "", passes: bool | None = None
    ) -> str:
        """ "  TEXT = SHOWN  (budget …)  PASS", or "  TEXT = NOISY — … (why)" when the noise
        rule withholds a figure computed from ``labels`` (counted)."""
        why = self.noise(*labels)
        if why and not self.force:
            self.withheld += 1
            return f"  {text} = {NOISY} ({'; '.join(why)})"
        verdict = "" if passes is None else ("PASS" if passes else "OVER")
        forced = "  [forced: " + "; ".join(why) + "]" if why else ""
        return (
            f"  {text} = {shown}"
            + (f"   ({budget})" if budget else "")
            + (f"   {verdict}" if verdict else "")
            + forced
        )

    def budget_line(
        self, text: str, value: float, labels: tuple[str, ...], budget: str = "", passes: bool | None = None
    ) -> str:
        return self.line(text, f"{value:6.2f}x", labels, budget, passes)

    def finish(self) -> None:
        if self.withheld:
            print(
                f"\n{self.withheld} ratio(s) withheld by the noise rule (load - {OWN_LOAD:g} <= cores, "
                f"(max-min)/median <= {MAX_SPREAD:g}); --force reports them anyway"
            )
            sys.exit(EXIT_NOISY)


def bench_arguments(parser, runs: int | None = None) -> None:
    """--force, shared by every benchmark script; --runs N and --venv PATH where ``runs`` is
    given (the scripts that time commands in the reference venv)."""
    parser.add_argument(
        "--force",
        action="store_true",
        help="report ratios even from a noisy run (for exploration; they are marked [forced])",
    )
    if runs is not None:
        parser.add_argument(
            "--runs", type=int, default=runs, help=f"interleaved runs per command (default {runs})"
        )
        parser.add_argument("--venv", default=None, help="reference venv path (default .benchvenv)")


FLOOR = "floor: list(importlib.metadata.distributions())"
FLOOR_CODE = "import importlib.metadata as m; list(m.distributions())"


def reference(args) -> tuple[str, str, dict[str, str], Bench]:
    """The reference venv (built if needed) with this checkout installed: (its python, its
    stackcheck, the environment to run them in, a Bench honouring --force); prints which."""
    python = ensure_reference_venv(args.venv)
    stackcheck = install_stackcheck(python)
    print(
        f"reference venv: {python} ({distribution_count(python)} "
        f"distributions); {args.runs} interleaved runs "
        "per command, medians [min-max] of process wall and CPU time"
    )
    return python, stackcheck, bench_env(python), Bench(force=args.force)


def time_commands(
    commands: dict[str, list[str] | tuple[list[str], dict[str, str]]],
    runs: int,
    env: dict[str, str],
    bench: Bench | None = None,
    cwd: str | None = None,
) -> dict[str, dict]:
    """Per command: median, min and max of process wall time and of CPU time (user + sys of
    the child, in s), and the last exit code. A command is an argv, or (argv, extra env).
    Runs are interleaved (round-robin after one warm-up each) so the noise of a shared machine
    hits every command alike; CPU time is the steadier figure when other work competes for
    the cores. With ``bench``, the wall samples go to it (for its noise rule) and the machine
    load is printed before and after."""
    import resource
    import time

    if bench is not None:
        print(bench.load("at start"))

    def split(cmd):
        return (cmd[0], {**env, **cmd[1]}) if isinstance(cmd, tuple) else (cmd, env)

    for cmd in commands.values():
        argv, cmd_env = split(cmd)
        subprocess.run(argv, capture_output=True, env=cmd_env, cwd=cwd)
    wall: dict[str, list[float]] = {k: [] for k in commands}
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    codes: dict[str, int] = {}
    for _ in range(runs):
        for label, cmd in commands.items():
            argv, cmd_env = split(cmd)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            codes[label] = subprocess.run(argv, capture_output=True, env=cmd_env, cwd=cwd).returncode
            wall[label].append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[label].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    out = {}
    for k in commands:
        w, c = summary(wall[k]), summary(cpu[k])
        out[k] = {
            "wall": w["median"],
            "wall_min": w["min"],
            "wall_max": w["max"],
            "cpu": c["median"],
            "cpu_min": c["min"],
            "cpu_max": c["max"],
            "exit": codes[k],
            "samples": wall[k],
        }
        if bench is not None:
            bench.add(k, wall[k])
    if bench is not None:
        print(bench.load("at end"))
    return out


def interleave(steps: dict, runs: int, bench: Bench | None = None, phase: str = "") -> dict[str, dict]:
    """Time callables ``step(i)`` round-robin (one warm-up call each, with i = -1), ``runs``
    times each: per label the summary() of its wall times, with the samples given to ``bench``
    (``phase`` names this part of the run where the load is printed)."""
    import time

    if bench is not None:
        print(bench.load(f"at start{phase}"))
    for step in steps.values():
        step(-1)
    samples: dict[str, list[float]] = {k: [] for k in steps}
    for i in range(runs):
        for label, step in steps.items():
            t0 = time.perf_counter()
            step(i)
            samples[label].append(time.perf_counter() - t0)
    if bench is not None:
        for label, values in samples.items():
            bench.add(label, values)
        print(bench.load(f"at end{phase}"))
    return {k: summary(v) for k, v in samples.items()}


def print_table(results: dict[str, dict], bench: Bench, floor: str) -> None:
    """One line per command: wall median [min-max], × floor, CPU median, × floor, exit code.
    A × floor figure the noise rule withholds is printed as "noisy"."""
    base = results[floor]
    width = max(len(label) for label in results)
    print(
        f"  {'command':<{width}} {'wall median [min-max]':>26} {'x floor':>8} {'cpu':>9} {'x floor':>8}  exit"
    )
    for label, r in results.items():
        span = f"{r['wall'] * 1000:7.1f}ms [{r['wall_min'] * 1000:.0f}-{r['wall_max'] * 1000:.0f}]"
        wall_x = bench.ratio(r["wall"] / base["wall"], label, floor) if label != floor else "  1.00x"
        cpu_x = bench.ratio(r["cpu"] / base["cpu"], label, floor) if label != floor else "  1.00x"
        print(
            f"  {label:<{width}} {span:>26} {wall_x or '  noisy':>8} "
            f"{r['cpu'] * 1000:7.1f}ms {cpu_x or '  noisy':>8}  {r['exit']}"
        )


def distribution_count(python: str) -> int:
    out = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(len(list(m.distributions())))"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(out.stdout.strip())


if __name__ == "__main__":
    py = ensure_reference_venv(sys.argv[1] if len(sys.argv) > 1 else None, quiet=False)
    print(f"{py}: {distribution_count(py)} distributions")
