"""Generate the real CI matrix under tests/data/mining/matrix/ (run ONCE by a developer; tests never run it).

A small real project (``matrixpkg``) is tested across real environment cells — venvs with
NumPy 1.26 and NumPy 2.x on Python 3.11 and 3.12 — in two job families, with reruns. Its
planted causes, which the miner must recover:

- ``np.float_`` and ``np.product`` (removed in NumPy 2.0): fail exactly on the numpy>=2 cells;
- ``default_device`` returns ``next(iter(set(...)))``: its test depends on the string-hash
  seed of the process, so it fails about a third of the attempts in every cell (flaky);
- ``moving_sum`` misses its last window: fails in every cell (a code bug).

Every line of output is real: ``pip install`` and ``pip freeze`` of each venv, and the pytest
runs (``-rfE --junitxml``), each output line stamped with the wall-clock time it was read, in
the GitHub Actions log format (ISO timestamp, ``##[group]``, ``##[error]`` markers). Outputs:

  matrix/runs.jsonl     one line per job attempt: run, job, attempt, outcome, env, log, junit
  matrix/labels.jsonl   ground truth: one line per failed test (log, test, group) and per passing job
  matrix/logs/…         the job logs;  matrix/junit/…  the JUnit XML files

It downloads numpy and pytest wheels from PyPI. Usage:
  python tests/data/mining/make_matrix.py [--out DIR] [--attempts 8]
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTEST = "pytest==8.3.3"
CELLS = [
    ("3.11", "1.26.4"),
    ("3.11", "2.0.2"),
    ("3.11", "2.2.6"),
    ("3.12", "1.26.4"),
    ("3.12", "2.1.3"),
    ("3.12", "2.3.4"),
]
RUNS = ["8801", "8802", "8803", "8804"]  # four workflow runs …
ATTEMPTS_PER_RUN = 2  # … each re-run once
FAMILIES = {
    "unit": ["tests/test_stats.py", "tests/test_tags.py", "tests/test_basic.py"],
    "window": ["tests/test_window.py", "tests/test_basic.py"],
}
# the planted cause of each test that can fail (ground truth for `mine verify`)
CAUSES = {
    "tests/test_stats.py::test_mean_dtype": "numpy2-float_",
    "tests/test_stats.py::test_total": "numpy2-product",
    "tests/test_tags.py::test_default_device": "flaky-set-order",
    "tests/test_window.py::test_moving_sum": "code-bug-last-window",
}

PROJECT = {
    "matrixpkg/__init__.py": '"""A tiny package tested across a CI matrix."""\n',
    "matrixpkg/stats.py": '''import numpy as np


def mean_dtype(values):
    """The dtype name of the mean of ``values``, computed in double precision."""
    return np.asarray(values, dtype=np.float_).mean().dtype.name


def total(values):
    """The product of ``values`` as an int."""
    return int(np.product(values))


def normalize(values):
    arr = np.asarray(values, dtype=np.float64)
    return (arr / arr.sum()).tolist()
''',
    "matrixpkg/tags.py": '''def default_device(available):
    """The device to use when none is configured: the first available one."""
    return next(iter(set(available)))
''',
    "matrixpkg/window.py": '''def moving_sum(values, k):
    """Sums of every window of ``k`` consecutive values."""
    return [sum(values[i:i + k]) for i in range(len(values) - k)]
''',
    "tests/test_stats.py": """from matrixpkg import stats


def test_mean_dtype():
    assert stats.mean_dtype([1, 2, 3]) == "float64"


def test_total():
    assert stats.total([2, 3, 4]) == 24


def test_normalize():
    assert stats.normalize([1, 3]) == [0.25, 0.75]
""",
    "tests/test_tags.py": """from matrixpkg.tags import default_device


def test_default_device():
    assert default_device(["cpu", "gpu", "tpu"]) in ("cpu", "gpu"), "tpu is never the default device"
""",
    "tests/test_window.py": """from matrixpkg.window import moving_sum


def test_moving_sum():
    assert moving_sum([1, 2, 3, 4], 2) == [3, 5, 7]
""",
    "tests/test_basic.py": """from matrixpkg import stats


def test_import():
    assert stats.__name__ == "matrixpkg.stats"


def test_normalize_sums_to_one():
    assert abs(sum(stats.normalize([1, 2, 3, 4])) - 1.0) < 1e-12
""",
}


def stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"


def run_logged(argv: list[str], cwd: Path, env: dict | None = None) -> tuple[int, list[str]]:
    """Run ``argv``; its output lines, each stamped when it was read."""
    proc = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    lines = [f"{stamp()} {line.rstrip()}" for line in proc.stdout]
    return proc.wait(), lines


def interpreter(version: str) -> str:
    found = shutil.which(f"python{version}")
    if found and subprocess.run([found, "--version"], capture_output=True).returncode == 0:
        return found
    for candidate in sorted(
        glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}"))
    ):
        return candidate
    sys.exit(f"no python{version} found")


def os_name() -> str:
    info = platform.freedesktop_os_release()
    return f"{info.get('ID', 'linux')}-{info.get('VERSION_ID', '')}".rstrip("-")


def group(title: str, *script: str, at: str = "") -> list[str]:
    """The runner's header of a ``run:`` step (stamped ``at``, or now)."""
    when = at or stamp()
    return [
        f"{when} ##[group]Run {title}",
        *(f"{when} {s}" for s in script),
        f"{when} shell: /usr/bin/bash -e {{0}}",
        f"{when} ##[endgroup]",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default=str(HERE / "matrix"))
    args = parser.parse_args()
    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    (out / "logs").mkdir(parents=True)
    (out / "junit").mkdir()
    osname = os_name()
    work = Path(tempfile.mkdtemp(prefix="matrix-"))
    project = work / "project"
    for rel, text in PROJECT.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    cells = []
    for py, numpy in CELLS:
        venv = work / f"venv-{py}-{numpy}"
        subprocess.run([interpreter(py), "-m", "venv", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        started = stamp()
        code, install = run_logged(
            [python, "-m", "pip", "install", "--disable-pip-version-check", f"numpy=={numpy}", PYTEST], work
        )
        if code:
            sys.exit("\n".join(install))
        full_py = subprocess.run(
            [python, "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        install = (
            group(
                f"python -m pip install numpy=={numpy} {PYTEST}",
                f"python -m pip install numpy=={numpy} {PYTEST}",
                at=started,
            )
            + install
        )
        cells.append((py, numpy, full_py, python, install))
    runs, labels = [], []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}  # the seed must be random
    env["PYTHONPATH"] = str(project)
    for run in RUNS:
        for attempt in range(1, ATTEMPTS_PER_RUN + 1):
            folder = f"{run}-{attempt}"
            (out / "logs" / folder).mkdir()
            (out / "junit" / folder).mkdir()
            k = 0
            for family, tests in FAMILIES.items():
                for py, numpy, full_py, python, install in cells:
                    k += 1
                    job = f"{family} ({osname}, {py}, numpy-{numpy})"
                    slug = f"{k}_{family}-{osname}-py{py}-numpy-{numpy}"
                    junit = out / "junit" / folder / f"{slug}.xml"
                    lines = list(install)  # the cell's setup step, as it ran when its venv was made
                    lines += group("python -m pip freeze", "python -m pip freeze")
                    code, freeze = run_logged([python, "-m", "pip", "freeze"], project, env)
                    lines += freeze
                    lines += group(
                        "python -m pytest", "python -m pytest -rfE --junitxml=junit.xml " + " ".join(tests)
                    )
                    argv = [
                        python,
                        "-m",
                        "pytest",
                        "-rfE",
                        "-p",
                        "no:cacheprovider",
                        "--junitxml=junit.xml",
                        *tests,
                    ]
                    code, output = run_logged(argv, project, env)
                    shutil.move(project / "junit.xml", junit)
                    lines += output
                    if code:
                        lines.append(f"{stamp()} ##[error]Process completed with exit code {code}.")
                    log = out / "logs" / folder / f"{slug}.txt"
                    log.write_text("\n".join(lines) + "\n")
                    rel_log, rel_junit = str(log.relative_to(out)), str(junit.relative_to(out))
                    runs.append(
                        {
                            "run": run,
                            "job": job,
                            "attempt": attempt,
                            "outcome": "failed" if code else "passed",
                            "env": {"os": osname, "python": full_py, "numpy": numpy},
                            "log": rel_log,
                            "junit": rel_junit,
                        }
                    )
                    failed = [line.split()[2] for line in output if line.split()[1:2] == ["FAILED"]]
                    for test in failed:
                        labels.append({"log": rel_log, "test": test, "group": CAUSES.get(test, "unknown")})
                    if not code:
                        labels.append({"log": rel_log, "outcome": "passed"})
    (out / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (out / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    shutil.rmtree(work)
    print(f"{len(runs)} jobs, {sum(r['outcome'] == 'failed' for r in runs)} failed → {out}")


if __name__ == "__main__":
    main()
