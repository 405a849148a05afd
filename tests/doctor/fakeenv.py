"""Real throwaway venvs with fake distributions written as dist-info directories (no network).

A fake distribution is what pip would leave behind: METADATA (Name, Version, Requires-Dist,
Requires-Python), WHEEL with its tag, INSTALLER, RECORD listing its files, and the module
itself (``import NAME`` works and reports ``__version__``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

PY_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"


@dataclass
class FakeEnv:
    root: Path

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    @property
    def site(self) -> Path:
        return (
            self.root / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
        )


def make_venv(path: Path) -> FakeEnv:
    """A venv without pip (fast); the interpreter is the one running the tests."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(path)
    return FakeEnv(path)


def write_dist(
    site: Path | str,
    name: str,
    version: str,
    requires: tuple[str, ...] | list[str] = (),
    *,
    requires_python: str | None = None,
    modules: tuple[str, ...] | None = None,
    module_file: bool = False,
    tag: str | None = "py3-none-any",
    metadata: bool = True,
    requested: bool = False,
    provides_extras: tuple[str, ...] = (),
) -> Path:
    """Write one installed distribution into ``site``; returns its .dist-info directory."""
    site = Path(site)
    site.mkdir(parents=True, exist_ok=True)
    stem = name.replace("-", "_")
    dist_info = site / f"{stem}-{version}.dist-info"
    dist_info.mkdir()
    mods = (stem.lower(),) if modules is None else modules
    record = []
    for mod in mods:
        if module_file:
            (site / f"{mod}.py").write_text(f"__version__ = {version!r}\n")
            record.append(f"{mod}.py,,")
        else:
            (site / mod).mkdir(parents=True, exist_ok=True)
            (site / mod / "__init__.py").write_text(f"__version__ = {version!r}\n")
            record.append(f"{mod}/__init__.py,,")
    if metadata:
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
        if requires_python:
            lines.append(f"Requires-Python: {requires_python}")
        lines += [f"Provides-Extra: {e}" for e in provides_extras]
        lines += [f"Requires-Dist: {r}" for r in requires]
        (dist_info / "METADATA").write_text("\n".join(lines) + "\n\nA fake distribution.\n")
    if tag:
        (dist_info / "WHEEL").write_text(
            f"Wheel-Version: 1.0\nGenerator: fakeenv\nRoot-Is-Purelib: false\nTag: {tag}\n"
        )
    (dist_info / "INSTALLER").write_text("pip\n")
    if requested:
        (dist_info / "REQUESTED").write_text("")
    record += [f"{dist_info.name}/{f},," for f in ("METADATA", "WHEEL", "INSTALLER", "RECORD")]
    (dist_info / "RECORD").write_text("\n".join(record) + "\n")
    return dist_info


def pip_check(python: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """The real ``pip check`` of an interpreter without pip (pip >= 22.3 ``--python``)."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "check"],
        capture_output=True,
        text=True,
        env=env if env is not None else {k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        timeout=120,
    )
    return done.returncode, [ln for ln in done.stdout.splitlines() if ln.strip()]
