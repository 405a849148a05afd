"""`stackcheck snapshot --deep` against the real torch CI installs ($STACKCHECK_TORCH_PYTHON:
an interpreter with torch 2.13.0, the CPU build), not only a stand-in package: the snapshot's
torch section says exactly what that torch says about itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories import missing_prerequisite

EXE = Path(sys.executable).parent / "stackcheck"

# What the interpreter's own torch reports, asked directly.
TRUTH = r"""
import json, os, torch
ok = torch.cuda.is_available()
print(json.dumps({
    "version": torch.__version__, "cuda": torch.version.cuda, "hip": torch.version.hip,
    "git_version": torch.version.git_version, "location": os.path.dirname(torch.__file__),
    "cuda_available": ok, "device_count": torch.cuda.device_count() if ok else 0,
    "arch_list": torch.cuda.get_arch_list() if ok else [],
    "cudnn_version": str(torch.backends.cudnn.version()) if torch.backends.cudnn.is_available() else None,
}))
"""


@pytest.fixture(scope="module")
def torch_python() -> str:
    python = os.environ.get("STACKCHECK_TORCH_PYTHON")
    if not python or not Path(python).exists():
        missing_prerequisite("STACKCHECK_TORCH_PYTHON does not name an interpreter with torch")
    return python


@pytest.fixture(scope="module")
def truth(torch_python) -> dict:
    done = subprocess.run([torch_python, "-c", TRUTH], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def snapshot_torch(python: str, *args: str) -> dict:
    done = subprocess.run(
        [str(EXE), "snapshot", "--python", python, "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["torch"]


def test_deep_snapshot_states_what_the_real_torch_says(torch_python, truth):
    sec = snapshot_torch(torch_python, "--deep")
    assert sec == {
        "status": "ok",
        "source": "torch/version.py",
        "error": None,
        "deep": True,
        "deep_error": None,
        **truth,
    }


def test_default_tier_reads_the_same_build_facts_without_device_facts(torch_python, truth):
    sec = snapshot_torch(torch_python)
    build = {k: truth[k] for k in ("version", "cuda", "hip", "git_version", "location")}
    assert sec == {
        "status": "ok",
        "source": "torch/version.py",
        "error": None,
        "deep": False,
        "deep_error": None,
        "cuda_available": None,
        "device_count": None,
        "arch_list": [],
        "cudnn_version": None,
        **build,
    }


def test_ci_torch_is_the_cpu_build_of_2_13_0(truth):
    """The version CI pins (.ci/run): a CPU build has no CUDA and no device."""
    assert truth["version"].split("+")[0] == "2.13.0"
    assert (truth["cuda"], truth["hip"], truth["cuda_available"], truth["device_count"]) == (
        None,
        None,
        False,
        0,
    )
