"""One torch-install builder (issue 10): every fix that reinstalls torch for a build names the
download.pytorch.org index the same way."""

from __future__ import annotations

import pytest

from stackcheck.checks.context import Context
from stackcheck.checks.torch_install import torch_index_url, torch_install, torch_release_install, torch_tag
from stackcheck.models.finding import PipInstall
from stackcheck.models.snapshot import Snapshot


@pytest.mark.parametrize(
    ("build", "tag"),
    [
        ("12.8", "cu128"),
        ("13.0.1", "cu130"),
        ("11", "11"),
        ("cu121", "cu121"),
        ("cpu", "cpu"),
        ("rocm6.2", "rocm6.2"),
    ],
)
def test_the_index_tag_of_a_build(build, tag):
    assert torch_tag(build) == tag
    assert torch_index_url(build) == f"https://download.pytorch.org/whl/{tag}"


def test_the_install_is_data_for_the_checked_interpreter():
    snap = Snapshot()
    snap.python.executable = "/venv/bin/python"
    ctx = Context(snapshot=snap)
    assert torch_release_install(ctx, "2.8.0+cu126", "12.8") == PipInstall(
        python="/venv/bin/python",
        requirements=["torch==2.8.0"],
        index_url="https://download.pytorch.org/whl/cu128",
        options=[],
        externally_managed=False,
    )
    assert torch_install(ctx, "torch==2.9.*", "torchvision==0.24.*", build="cpu").index_url == (
        "https://download.pytorch.org/whl/cpu"
    )
