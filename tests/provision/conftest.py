"""A local wheelhouse for the provision tests: tiny wheels written by the test (a zip with a
module and its dist-info), installed with ``--no-index --find-links`` (nothing downloaded)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest

from stackcheck.provision.installer import find_uv
from tests.factories import missing_prerequisite

# The torch 2.13.0 CPU wheel this machine's pip installs from a local file (CI has it too);
# STACKCHECK_TEST_TORCH_WHEEL names another copy.
TORCH_WHEEL = Path(
    os.environ.get("STACKCHECK_TEST_TORCH_WHEEL")
    or "/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
)
UV = find_uv() or "uv"  # the installer the `env` extra brings (CI), else one on PATH
# torch 2.13.0's Requires-Dist (from the wheel's METADATA), as tiny stand-ins
TORCH_DEPS = {
    "filelock": ("3.20.0", []),
    "typing-extensions": ("4.15.0", []),
    "setuptools": ("80.9.0", []),
    "sympy": ("1.14.0", ["mpmath>=1.1.0,<1.4"]),
    "mpmath": ("1.3.0", []),
    "networkx": ("3.5", []),
    "jinja2": ("3.1.6", ["markupsafe>=2.0"]),
    "markupsafe": ("3.0.3", []),
    "fsspec": ("2025.10.0", []),
}


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(directory: Path, name: str, version: str, requires: list[str] = ()) -> Path:
    """A pure-Python wheel ``name-version-py3-none-any.whl`` in ``directory`` whose METADATA
    lists ``requires`` (PEP 508 lines) and whose module ``name`` defines ``VERSION``."""
    stem = name.replace("-", "_")
    info = f"{stem}-{version}.dist-info"
    files = {
        f"{stem}/__init__.py": f"VERSION = {version!r}\n".encode(),
        f"{info}/METADATA": (
            "Metadata-Version: 2.1\n"
            f"Name: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires) + "\n"
        ).encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: stackcheck-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
        f"{info}/top_level.txt": f"{stem}\n".encode(),
    }
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    path = directory / f"{stem}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for arcname, data in files.items():
            zi = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))  # reproducible bytes
            zf.writestr(zi, data)
    return path


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """Tiny wheels: torch's dependencies, an app chain ``app -> helper -> vllm`` (a forbidden
    engine pulled in two levels down) and a few independents."""
    d = tmp_path_factory.mktemp("wheelhouse")
    for name, (version, reqs) in TORCH_DEPS.items():
        make_wheel(d, name, version, reqs)
    make_wheel(d, "app", "1.0", ["helper>=1"])
    make_wheel(d, "helper", "1.2", ["vllm"])
    make_wheel(d, "vllm", "0.11.0")
    make_wheel(d, "tinyutil", "1.0")
    make_wheel(d, "tinyutil", "2.0")
    make_wheel(d, "ipykernel", "7.0.0")
    return d


@pytest.fixture(scope="session")
def torch_wheelhouse(wheelhouse, tmp_path_factory) -> Path:
    """The tiny wheels plus the torch 2.13.0 CPU wheel this machine has (linked, not copied)."""
    if not TORCH_WHEEL.is_file():
        missing_prerequisite(f"the torch 2.13.0 CPU wheel {TORCH_WHEEL} is missing")
    d = tmp_path_factory.mktemp("torchhouse")
    for w in wheelhouse.iterdir():
        os.link(w, d / w.name)
    try:
        os.link(TORCH_WHEEL, d / TORCH_WHEEL.name)
    except OSError:
        os.symlink(TORCH_WHEEL, d / TORCH_WHEEL.name)
    return d


PROFILES = [
    {"id": "TINY-CPU", "extends": ["GUARD-NO-ENGINES"], "python": ">=3.10",
     "requirements": ["jinja2", "tinyutil<2"]},
    {"id": "TINY-BAD", "extends": ["GUARD-NO-ENGINES"], "python": ">=3.10",
     "requirements": ["app", "jinja2"]},
    {"id": "TINY-TORCH", "extends": ["BASE-CPU"], "requirements": ["torch==2.13.0", "tinyutil<2"]},
]  # fmt: skip


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """A registry of tiny profiles; uv on PATH; no pip configuration of this machine leaks in."""
    path = tmp_path / "reg.json"
    path.write_text(json.dumps({"schema_version": "1.0", "include_builtin": True, "profiles": PROFILES}))
    monkeypatch.setenv("PATH", os.path.dirname(UV) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "xdg"))  # not this machine's /etc/xdg/pip
    for var in [v for v in os.environ if v.startswith("PIP_") and v != "PIP_CONFIG_FILE"]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    return str(path)


def offline(house) -> list[str]:
    return ["--no-index", "--find-links", str(house)]


@pytest.fixture
def tiny_lock(cli_main, registry, wheelhouse, tmp_path):
    lock = tmp_path / "tiny.lock.json"
    code, _, err = cli_main(
        "env", "lock", "--registry", registry, "-p", "TINY-CPU", *offline(wheelhouse), "-o", str(lock)
    )
    assert code == 0, err
    return lock
