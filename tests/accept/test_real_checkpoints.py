"""The hygiene pickle scan on real ``torch.save`` output, made in the torch venv."""

from __future__ import annotations

import subprocess

import pytest

from stackcheck.hygiene import pickles

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

MAKE = r"""
import os, sys, torch
out = sys.argv[1]
class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + os.path.join(out, "PWNED"),))
sd = torch.nn.Linear(4, 2).state_dict()
torch.save(sd, os.path.join(out, "zip.pt"))
torch.save(sd, os.path.join(out, "legacy.pth"), _use_new_zipfile_serialization=False)
torch.save({"w": torch.ones(2, dtype=torch.bfloat16), "step": 3, "ids": [1, 2]}, os.path.join(out, "mixed.ckpt"))
torch.save(torch.nn.Linear(4, 2), os.path.join(out, "module.bin"))
torch.save({"state": sd, "hook": Evil()}, os.path.join(out, "evil.pt"))
"""  # noqa: E501 (the child script, one statement a line)


@pytest.fixture(scope="module")
def checkpoints(ml_python, tmp_path_factory):
    out = tmp_path_factory.mktemp("ckpt")
    subprocess.run([ml_python, "-c", MAKE, str(out)], check=True, timeout=600)
    return out


def test_tensor_only_checkpoints_are_safe(checkpoints):
    for name in ("zip.pt", "legacy.pth", "mixed.ckpt"):
        scan = pickles.scan_file(str(checkpoints / name))
        assert scan.is_pickle and scan.unsafe() == [] and scan.unresolved == 0, name
    assert "torch._utils _rebuild_tensor_v2" in pickles.scan_file(str(checkpoints / "zip.pt")).imports
    assert pickles.scan_file(str(checkpoints / "legacy.pth")).streams == 5  # legacy format: 5 pickles


def test_whole_module_and_malicious_checkpoints_are_flagged(checkpoints):
    module = pickles.scan_file(str(checkpoints / "module.bin"))
    assert ("torch.nn.modules.linear", "Linear") in module.unsafe()
    assert not any(pickles.is_dangerous(m, n) for m, n in module.unsafe())
    evil = pickles.scan_file(str(checkpoints / "evil.pt"))
    assert any(n == "system" and pickles.is_dangerous(m, n) for m, n in evil.unsafe())
    assert not (checkpoints / "PWNED").exists()
