"""Index selection over the recorded snapshots, and the plan's other pure parts."""

from __future__ import annotations

import msgspec
import pytest

from stackcheck.catalog import load_catalog
from stackcheck.environment import load_snapshot
from stackcheck.errors import InputError, Refused
from stackcheck.knowledge import load_knowledge
from stackcheck.knowledge.archs import covers
from stackcheck.knowledge.base import version
from stackcheck.provision.plan import Sources, TorchChoice, choose_torch, env_paths, make_plan
from tests.factories import SNAPSHOTS

KB = load_knowledge()
CATALOG = load_catalog(None)


def snap(name: str):
    return load_snapshot(str(SNAPSHOTS / f"{name}.json"))


# (snapshot, profile) -> (build, release): the newest build of an allowed torch the driver runs
# (minor-version compatibility) whose architectures cover every visible GPU
CHOSEN = {
    ("v100-cu130", "PT-SFT-CUDA"): ("cu126", "2.14"),  # cu130 and cu132 dropped Volta (sm_70)
    ("h200-drv580-cu130", "PT-SFT-CUDA"): ("cu132", "2.14"),  # 13.x floor 580 met
    ("rtx5090-drv570", "PT-SFT-CUDA"): ("cu128", "2.11"),  # sm_120 needs a 12.8 build; 13.x needs 580
    ("colab-t4", "PT-SFT-CUDA"): ("cu126", "2.14"),
    ("h200-drv580-cu130", "INF-VLLM-MTP"): ("cu130", "2.13"),  # the profile pins torch 2.13 and CUDA 13.0
    ("rtx5090-drv570", "INF-VLLM-011-CU128"): ("cu128", "2.8"),
    ("cpu-laptop", "TRAIN-CPU"): ("cpu", "2.14"),
    ("h200-drv580-cu130", "TRAIN-CPU"): ("cpu", "2.14"),  # a CPU profile never gets a CUDA wheel
}


@pytest.mark.parametrize(("machine", "pid"), sorted(CHOSEN))
def test_auto_picks_a_build_the_driver_runs_and_that_covers_the_gpus(machine, pid):
    s = snap(machine)
    choice = choose_torch(CATALOG.get(pid), s, KB, "auto", "3.12")
    assert (choice.tag, choice.release) == CHOSEN[(machine, pid)]
    assert choice.constraint == f"torch=={choice.release}.*"
    assert choice.index_url == f"https://download.pytorch.org/whl/{choice.tag}"
    if choice.tag == "cpu":
        return
    cuda = f"{choice.tag[2:-1]}.{choice.tag[-1]}"
    floor = KB.driver_requirement(cuda).mvc_floor
    assert version(s.accelerators.driver_version) >= version(floor)  # it runs on this driver
    archs = KB.arch_list(choice.release, cuda)
    assert all(covers(archs, g.compute_capability) for g in s.visible_gpus())  # and covers the GPU


def test_h200_choice_says_it_relies_on_minor_version_compatibility():
    choice = choose_torch(CATALOG.get("PT-SFT-CUDA"), snap("h200-drv580-cu130"), KB, "auto", "3.12")
    assert choice.why == (
        "torch 2.14 cu132: the newest allowed build that driver 580.82.07 runs and that covers sm_90 "
        "(by minor-version compatibility: CUDA 13.2's own driver is 595.45.04)"
    )


REFUSED = {
    ("old-driver-470-cu121", "PT-SFT-CUDA"): (
        "--cuda auto: no torch build fits this machine: driver 470.256.02 runs CUDA builds up to 11.8, and "
        "profile PT-SFT-CUDA needs torch CUDA >=12.6; upgrade the driver or give --cuda"
    ),
    ("v100-cu130", "INF-VLLM-MTP"): (
        "--cuda auto: no torch build fits this machine: no CUDA build that driver 580.95.05 runs carries "
        "kernels for the GPUs (sm_70); upgrade the driver or give --cuda"
    ),
    ("old-driver-470-cu121", "INF-VLLM-MTP"): (
        "--cuda auto: no torch build fits this machine: driver 470.256.02 runs no CUDA build of the allowed "
        "torch releases (2.13); upgrade the driver or give --cuda"
    ),
    ("cpu-laptop", "PT-SFT-CUDA"): (
        "--cuda auto: profile PT-SFT-CUDA needs a GPU and this machine shows no NVIDIA driver, so no CUDA "
        "build can be chosen from its facts; give --cuda cuNNN (e.g. cu126) for the target machine, or "
        "--snapshot FILE recorded there"
    ),
}


@pytest.mark.parametrize(("machine", "pid"), sorted(REFUSED))
def test_auto_says_why_no_build_fits(machine, pid):
    with pytest.raises(Refused) as exc:
        choose_torch(CATALOG.get(pid), snap(machine), KB, "auto", "3.12")
    assert str(exc.value) == REFUSED[(machine, pid)]


def test_explicit_cuda_on_a_machine_without_gpu():
    choice = choose_torch(CATALOG.get("PT-SFT-CUDA"), snap("cpu-laptop"), KB, "cu128", "3.12")
    assert (choice.tag, choice.release) == ("cu128", "2.11")
    with pytest.raises(Refused, match=r"^--cuda cu118: profile PT-SFT-CUDA needs torch's CUDA build >=12.6$"):
        choose_torch(CATALOG.get("PT-SFT-CUDA"), snap("cpu-laptop"), KB, "cu118", "3.12")
    with pytest.raises(Refused, match=r"^--cuda cpu: profile PT-SFT-CUDA needs a GPU"):
        choose_torch(CATALOG.get("PT-SFT-CUDA"), snap("cpu-laptop"), KB, "cpu", "3.12")
    with pytest.raises(InputError, match=r"^--cuda: 'cuda12' is not auto, cpu or cuNNN \(e.g. cu126\)$"):
        choose_torch(CATALOG.get("PT-SFT-CUDA"), snap("cpu-laptop"), KB, "cuda12", "3.12")


def _on(system: str, machine: str):
    s = snap("cpu-laptop")
    return msgspec.structs.replace(
        s, platform=msgspec.structs.replace(s.platform, system=system, machine=machine)
    )


def test_cpu_profile_needs_no_torch_index_on_macos_and_windows():
    for system, machine in (("Darwin", "arm64"), ("Windows", "AMD64")):
        choice = choose_torch(CATALOG.get("TRAIN-CPU"), _on(system, machine), KB, "auto", "3.12")
        assert (choice.tag, choice.index_url) == ("cpu", None)
    with pytest.raises(Refused, match="PyTorch publishes no CUDA build for macOS"):
        choose_torch(CATALOG.get("PT-SFT-CUDA"), _on("Darwin", "arm64"), KB, "cu126", "3.12")


def test_profile_without_torch_gets_no_torch_choice():
    choice = choose_torch(CATALOG.get("INF-SERVICE-DELIVERY"), snap("h100-single"), KB, "auto", "3.12")
    assert choice == TorchChoice()
    assert choice.constraint is None


def test_python_outside_every_release_window_is_refused():
    with pytest.raises(Refused, match=r"satisfies torch.* on Python 3.9$"):
        choose_torch(CATALOG.get("INF-VLLM-MTP"), snap("h100-single"), KB, "auto", "3.9")


def test_env_paths_per_platform():
    assert env_paths("/w/.venv", "Linux") == ("/w/.venv/bin/python", [["source", "/w/.venv/bin/activate"]])
    assert env_paths("/w/.venv", "Darwin")[0] == "/w/.venv/bin/python"
    assert env_paths("C:/w/.venv", "Windows") == (
        "C:\\w\\.venv\\Scripts\\python.exe",
        [["C:\\w\\.venv\\Scripts\\activate"], ["C:\\w\\.venv\\Scripts\\Activate.ps1"]],
    )


def test_sources_args_round_trip_and_torch_index():
    s = Sources(
        index_url="https://mirror/simple", extra_index_urls=("https://x/simple",), find_links=("/wh",)
    )
    assert Sources.from_args(s.args()) == s
    torch = TorchChoice("cu126", "2.14", "https://download.pytorch.org/whl/cu126", "")
    assert s.with_torch(torch).args() == [
        "--index-url", "https://mirror/simple",
        "--extra-index-url", "https://download.pytorch.org/whl/cu126",
        "--extra-index-url", "https://x/simple",
        "--find-links", "/wh",
    ]  # fmt: skip
    offline = Sources(no_index=True, find_links=("/wh",))
    assert offline.with_torch(torch) is offline  # --no-index: only the wheelhouse
    with pytest.raises(InputError, match=r"^header.sources: unexpected '--pre'"):
        Sources.from_args(["--pre"])


def test_make_plan_carries_requirements_constraints_and_digest():
    plan = make_plan(
        CATALOG.get("TRAIN-CPU"), snap("cpu-laptop"), KB, python="/usr/bin/python3.12", python_version="3.12"
    )
    assert plan.requirements == CATALOG.get("TRAIN-CPU").requirements
    assert plan.constraints == CATALOG.get("TRAIN-CPU").constraints
    assert plan.digest.startswith("sha256:") and len(plan.digest) == 71
    assert {f.requirement for f in plan.forbidden} >= {"vllm", "sglang", "bitsandbytes"}
    assert (plan.system, plan.machine, plan.torch.tag) == ("Linux", "x86_64", "cpu")
