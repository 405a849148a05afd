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
    """The environment of a shell that activated the venv: no PYTHONPATH, its bin first."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX")}
    env["PATH"] = f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def time_commands(commands: dict[str, list[str]], runs: int, env: dict[str, str]) -> dict[str, dict]:
    """Per command: median process wall time and median CPU time (user + sys of the child,
    in s) and the last exit code. Runs are interleaved (round-robin after one warm-up each) so
    the noise of a shared machine hits every command alike; CPU time is the steadier figure
    when other work competes for the cores."""
    import resource
    import statistics
    import time

    for argv in commands.values():
        subprocess.run(argv, capture_output=True, env=env)
    wall: dict[str, list[float]] = {k: [] for k in commands}
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    codes: dict[str, int] = {}
    for _ in range(runs):
        for label, argv in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            codes[label] = subprocess.run(argv, capture_output=True, env=env).returncode
            wall[label].append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[label].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {
        k: {"wall": statistics.median(wall[k]), "cpu": statistics.median(cpu[k]), "exit": codes[k]}
        for k in commands
    }


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
