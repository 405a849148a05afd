"""Helpers for the hostile-input tests: each test builds its input itself."""

from __future__ import annotations

import subprocess
import sys

BIG = "1" * 4400  # past Python's int-conversion limit (4,300 digits)


def cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "stackcheck", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)


def one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2, one line on stderr, no traceback, naming every needle; returns the line."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]
