"""A clean, consistent throwaway venv per test, with a shell around it that agrees with it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fakeenv import FakeEnv, make_venv, write_dist  # noqa: E402


def write_script(path: Path, interpreter: str) -> Path:
    """A console script like pip's: a ``#!`` line naming its interpreter."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{interpreter}\nimport sys\nsys.exit(0)\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def shell(monkeypatch, tmp_path):
    """Environment variables of a shell with nothing activated and no PYTHONPATH."""
    for var in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "JUPYTER_PATH", "PYTHONNOUSERSITE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    return monkeypatch


@pytest.fixture
def env(shell, tmp_path) -> FakeEnv:
    """A venv with a small consistent set of distributions; PATH finds its python and pip."""
    fake = make_venv(tmp_path / "venv")
    write_dist(fake.site, "app", "1.0", ["lib>=1.0", "util[fast]>=2; python_version >= '3'"], requested=True)
    write_dist(fake.site, "lib", "1.2", ["util>=2"])
    write_dist(fake.site, "util", "2.1", ["speedup; extra == 'fast'"], provides_extras=("fast",))
    write_dist(fake.site, "speedup", "0.3")
    bindir = fake.root / "bin"
    for name in ("pip", "pip3"):
        write_script(bindir / name, fake.python)
    shell.setenv("PATH", os.pathsep.join([str(bindir), "/usr/bin", "/bin"]))
    return fake
