"""The acceptance venv is a real, separate venv with the real torch, built without an index."""

from __future__ import annotations

import json
import subprocess
from importlib import metadata

PROBE = """
import importlib.metadata as m, importlib.util as u, json, sys, sysconfig, torch
print(json.dumps({
    "prefix": sys.prefix, "site": sysconfig.get_paths()["purelib"], "torch": torch.__version__,
    "torch_file": torch.__file__, "cuda": torch.version.cuda, "dist": m.version("torch"),
    "tensor": torch.arange(4).sum().item(), "transformers": u.find_spec("transformers") is not None,
}))
"""


def test_ml_python_is_a_separate_venv_with_the_real_torch(ml_python):
    done = subprocess.run([ml_python, "-c", PROBE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert ml_python == f"{got['prefix']}/bin/python"
    assert got["torch_file"] == f"{got['site']}/torch/__init__.py"  # installed in the venv's site-packages
    assert (
        got["torch"] == got["dist"] == metadata.version("torch")
    )  # the wheel CI installed, metadata included
    assert got["torch"].split("+")[0] == "2.13.0" and got["cuda"] is None  # the CPU build
    assert got["tensor"] == 6
    assert got["transformers"] is False  # only torch, numpy, safetensors and what they require
