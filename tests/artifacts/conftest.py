"""Tiny real models built once per session in a child process (tests/artifacts/_build.py), so
the test process never imports torch; faults are injected into copies of them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BUILD = Path(__file__).with_name("_build.py")


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("artifacts")
    subprocess.run([sys.executable, str(BUILD), str(out)], check=True, capture_output=True, timeout=300)
    return out


@pytest.fixture
def copy(built, tmp_path):
    """``copy("llama")``: a fresh copy of a built artifact to inject a fault into."""

    made: list[Path] = []

    def make(name: str) -> Path:
        made.append(tmp_path / f"{len(made)}" / name)
        shutil.copytree(built / name, made[-1])
        return made[-1]

    return make


def header_of(path: Path) -> dict:
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    return json.loads(raw[8 : 8 + n])


SIZES = {"BF16": 2, "F16": 2, "F32": 4, "I64": 8, "U8": 1}


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]], metadata=None) -> None:
    """A safetensors file with these (dtype, shape) tensors: a real header, zero bytes as data
    (a sparse file: nothing is written for them)."""
    header: dict = {"__metadata__": metadata or {"format": "pt"}}
    at = 0
    for name, (dtype, shape) in tensors.items():
        n = SIZES[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + n]}
        at += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as fh:
        fh.write(len(raw).to_bytes(8, "little") + raw)
        fh.truncate(8 + len(raw) + at)


def rewrite(path: Path, change) -> None:
    """Rewrite the safetensors file ``path`` with ``change(dict name -> (dtype, shape))`` applied."""
    doc = header_of(path)
    doc.pop("__metadata__", None)
    tensors = {k: (v["dtype"], v["shape"]) for k, v in doc.items()}
    write_safetensors(path, change(tensors))


def edit_json(path: Path, **changes) -> None:
    doc = json.loads(path.read_text())
    doc.update(changes)
    path.write_text(json.dumps(doc))
