"""Bounded, sanitized child processes for probes.

Every subprocess a probe starts goes through :func:`run`: a hard timeout, no stdin, and an
environment without secrets or interpreter hooks (PYTHONSTARTUP, PYTHONINSPECT …) that could
change what the child does. PYTHONPATH is kept on purpose: it is part of what we observe.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from stackcheck.redaction import looks_secret

_DROP_EXACT = {"PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONBREAKPOINT", "PYTHONWARNINGS", "PYTHONDEVMODE"}


def sanitized_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """os.environ without secret-named variables (``looks_secret(name, strict=True)``) or
    interpreter hooks; ``extra`` is added as given."""
    env = {k: v for k, v in os.environ.items() if k not in _DROP_EXACT and not looks_secret(k, strict=True)}
    env["PYTHONIOENCODING"] = "utf-8"
    env["LC_ALL"] = env.get("LC_ALL", "C.UTF-8") or "C.UTF-8"
    if extra:
        env.update(extra)
    return env


@dataclass
class Completed:
    returncode: int | None  # None on timeout or when the program could not start
    stdout: str
    stderr: str
    error: str | None = None  # "timeout after 5 s", "not found: nvcc" …

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run(argv: list[str], timeout: float = 5.0, env: dict[str, str] | None = None, cwd: str | None = None) -> Completed:
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=sanitized_env() if env is None else env,
            cwd=cwd,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return Completed(None, out, "", f"timeout after {timeout:g} s")
    except FileNotFoundError:
        return Completed(None, "", "", f"not found: {argv[0]}")
    except OSError as exc:
        return Completed(None, "", "", f"cannot run {argv[0]}: {exc.strerror or exc}")
    return Completed(proc.returncode, proc.stdout, proc.stderr)
