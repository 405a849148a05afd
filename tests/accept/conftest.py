"""Real throwaway interpreters for the acceptance tests.

``ml_python``: a venv with torch, numpy and safetensors, built once per test session (under
xdist once for all workers, behind a file lock). Nothing is downloaded: the distributions,
and every distribution they require, are installed into the venv's site-packages by linking
their files (package folders and ``.dist-info``) from the environment that runs the tests —
where CI installed the real torch 2.13.0 CPU wheel. So the venv is a real venv that imports
the real torch, with the metadata a pip install leaves.
``bare_python``: a venv with nothing installed.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import missing_prerequisite

ML_PACKAGES = ["torch==2.13.0", "numpy", "safetensors"]  # torch: the CPU build CI installs


def _venv(path: Path, packages: list[str]) -> str:
    python = path / "bin" / "python"
    if (path / ".complete").exists():
        return str(python)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
    if packages:
        link_install(python, packages)
        subprocess.run([str(python), "-c", "import torch, numpy, safetensors.torch"], check=True, timeout=900)
    (path / ".complete").write_text("ok\n")
    return str(python)


def link_install(python: Path, requirements: list[str]) -> list[str]:
    """Install ``requirements`` and what they require (markers evaluated, no extras) into the
    venv of ``python`` from the distributions this test process sees, by linking their
    top-level files; distributions the venv already has stay. Returns the names linked.
    A requirement this process cannot satisfy skips the test (fails it in CI)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    present = {canonicalize_name(d.metadata["Name"]) for d in metadata.distributions(path=[str(site)])}
    todo, linked = [Requirement(r) for r in requirements], []
    while todo:
        req = todo.pop(0)
        name = canonicalize_name(req.name)
        if name in present:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing_prerequisite(f"{req} is not installed in the test environment ({sys.executable})")
        if not req.specifier.contains(dist.version, prereleases=True):
            missing_prerequisite(f"the test environment has {name} {dist.version}, not {req}")
        tops = {Path(str(f)).parts[0] for f in dist.files or ()} - {"..", "__pycache__"}
        for top in sorted(tops):
            source = Path(dist.locate_file(top))
            if source.exists() and not (site / top).exists():
                (site / top).symlink_to(source, target_is_directory=source.is_dir())
        present.add(name)
        linked.append(name)
        todo += [
            r
            for r in map(Requirement, dist.requires or ())
            if r.marker is None or r.marker.evaluate({"extra": ""})
        ]
    return linked


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
        return subprocess.run(
            [sys.executable, "-m", "stackcheck", *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=900,
            env=env,
        )

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
