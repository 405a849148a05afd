"""The recorded snapshots other engineers' checks are tested on: valid, round-tripping,
internally consistent and in step with their generator."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import msgspec
import pytest

from stackcheck.environment import load_snapshot
from stackcheck.models.snapshot import Snapshot

SNAP_DIR = Path(__file__).resolve().parents[1] / "data" / "snapshots"
RECORDED = sorted(p.stem for p in SNAP_DIR.glob("*.json"))  # every file, not only the named ones
EXPECTED = {
    "cpu-laptop",
    "colab-t4",
    "h100-single",
    "h200-drv580-cu130",
    "old-driver-470-cu121",
    "multi-gpu-8xa100",
    "v100-cu130",
    "ros-polluted",
    "vllm-011-h100",
}


def _generator():
    spec = importlib.util.spec_from_file_location("_make_snapshots", SNAP_DIR / "_make_snapshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_expected_snapshot_is_recorded():
    assert {p.stem for p in SNAP_DIR.glob("*.json")} >= EXPECTED


@pytest.mark.parametrize("name", RECORDED)
def test_snapshot_loads_and_round_trips(name):
    path = SNAP_DIR / f"{name}.json"
    snap = load_snapshot(str(path))
    again = msgspec.json.decode(msgspec.json.encode(snap), type=Snapshot)
    assert again == snap
    assert snap.packages.distributions, "a recorded machine has packages"
    assert snap.python.status == "ok" and snap.python.executable


def test_every_recorded_file_has_its_machine_in_the_generator():
    assert sorted(_generator().MACHINES) == RECORDED


@pytest.mark.parametrize("name", RECORDED)
def test_generator_reproduces_file(name):
    """Edit the generator, not the JSON: the files must be what it writes."""
    assert _generator().build(name) == (SNAP_DIR / f"{name}.json").read_bytes()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_requirements_met_by_importable_distributions(name):
    gen = _generator()
    assert gen.unmet_requirements(load_snapshot(str(SNAP_DIR / f"{name}.json"))) == []


def test_machine_facts_are_consistent():
    snaps = {name: load_snapshot(str(SNAP_DIR / f"{name}.json")) for name in EXPECTED}
    for name, snap in snaps.items():
        torch = snap.distribution("torch")
        assert torch is not None and torch.version == snap.torch.version, name
        assert snap.torch.location.startswith(torch.location), name
        if snap.accelerators.status == "ok":
            assert snap.accelerators.gpus and snap.accelerators.cuda_driver_version, name
        else:
            assert not snap.accelerators.gpus and snap.accelerators.looked_for, name
        for var in snap.env.redacted:
            assert snap.env.variables[var] == "<redacted>", (name, var)
    assert snaps["cpu-laptop"].torch.cuda is None
    assert [g.compute_capability for g in snaps["v100-cu130"].accelerators.gpus] == ["7.0"]
    assert len(snaps["multi-gpu-8xa100"].visible_gpus()) == 8
    assert {h.name for h in snaps["colab-t4"].hosted.platforms} >= {"colab"}
    ros = snaps["ros-polluted"]
    copies = [d for d in ros.packages.distributions if d.name == "packaging"]
    assert len(copies) == 2 and [d.shadowed for d in copies].count(True) == 1
    assert ros.distribution("packaging").location.startswith("/opt/ros/humble")
    owners = [d.name for d in ros.packages.distributions if "pynvml" in d.top_level]
    assert sorted(owners) == ["nvidia-ml-py", "pynvml"]
    vllm = snaps["vllm-011-h100"]
    assert (
        vllm.distribution("vllm").version == "0.11.0"
        and vllm.distribution("xformers").version == "0.0.32.post1"
    )
