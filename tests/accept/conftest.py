"""Real throwaway interpreters for the acceptance tests.

``ml_python``: a venv with torch (the CPU build pip finds locally), numpy and safetensors,
built once per test session (under xdist once for all workers, behind a file lock).
``bare_python``: a venv with nothing installed.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ML_PACKAGES = ["torch==2.13.0", "numpy", "safetensors"]  # torch: the CPU wheel pip finds locally


def _venv(path: Path, packages: list[str]) -> str:
    python = path / "bin" / "python"
    if (path / ".complete").exists():
        return str(python)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
    if packages:
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile", *packages],
            check=True, timeout=900,
        )
        # --no-compile skips byte-compiling all of torch; compile what an import needs, once
        subprocess.run([str(python), "-c", "import torch, numpy, safetensors.torch"], check=True, timeout=900)
    (path / ".complete").write_text("ok\n")
    return str(python)


def _shared(tmp_path_factory, worker_id: str, name: str, packages: list[str]) -> str:
    base = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        base = base.parent  # shared by every xdist worker of this session
    target = base / name
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _venv(target, packages)


@pytest.fixture(scope="session")
def worker_id(request) -> str:
    return getattr(request.config, "workerinput", {}).get("workerid", "master")


@pytest.fixture(scope="session")
def ml_python(tmp_path_factory, worker_id) -> str:
    return _shared(tmp_path_factory, worker_id, "venv-ml", ML_PACKAGES)


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory, worker_id) -> str:
    return _shared(tmp_path_factory, worker_id, "venv-bare", [])


@pytest.fixture
def cli():
    def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        return subprocess.run([sys.executable, "-m", "stackcheck", *args], capture_output=True, text=True, cwd=cwd, timeout=900, env=env)

    return run


class GitRepo:
    """An empty git repository to plant files in."""

    def __init__(self, path: Path):
        self.path = path
        subprocess.run(["git", "init", "-q", str(path)], check=True)

    def add(self, rel: str, content: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
        subprocess.run(["git", "-C", str(self.path), "add", "-f", rel], check=True)
        return target


@pytest.fixture
def git_repo(tmp_path) -> GitRepo:
    return GitRepo(tmp_path / "repo")
