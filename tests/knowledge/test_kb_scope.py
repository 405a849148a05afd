"""Scope evaluation over recorded snapshots and built ones: match, no match, cannot judge."""

from __future__ import annotations

import msgspec
import pytest

from stackcheck.knowledge import load_knowledge
from stackcheck.knowledge.scope import evaluate
from stackcheck.models.rule import Scope
from stackcheck.models.snapshot import AcceleratorSection, Gpu
from tests.factories import dist, make_snapshot, recorded

KB = load_knowledge()


def test_empty_scope_never_matches():
    for snap in (make_snapshot(), recorded("h100-single")):
        m = evaluate(Scope(), snap, KB)
        assert not m.matches and not m.applicable


def test_driver_scope_with_evidence():
    snap = recorded("old-driver-470-cu121")
    m = evaluate(Scope(driver="<525", torch_cuda=">=12"), snap, KB)
    assert m.matches and m.applicable
    assert "driver 470.256.02 (<525)" in m.evidence
    assert any("torch 2.3.1+cu121" in e for e in m.evidence)


def test_collect_env_without_driver_is_not_applicable():
    snap = recorded("old-driver-470-cu121")
    snap = msgspec.structs.replace(
        snap,
        accelerators=AcceleratorSection(
            status="ok", source="collect_env", gpus=[Gpu(index=0, name="Tesla V100")]
        ),
    )
    m = evaluate(Scope(driver="<525"), snap, KB)
    assert not m.matches and not m.applicable and m.missing == ["driver version"]
    # ...but a condition that definitely fails still decides
    m = evaluate(Scope(driver="<525", packages=["vllm"]), snap, KB)
    assert not m.matches and m.applicable


def test_machine_without_nvidia_driver_is_a_fact_not_a_gap():
    m = evaluate(Scope(driver="<525"), recorded("cpu-laptop"), KB)
    assert not m.matches and m.applicable


def test_packages_and_absent_packages():
    snap = make_snapshot(dist("torchaudio", "2.9.0"), torch="2.9.0", torch_cuda="12.8")
    m = evaluate(Scope(packages=["torchaudio>=2.9"], packages_absent=["torchcodec"]), snap, KB)
    assert m.matches and "torchcodec not installed" in m.evidence
    snap.packages.distributions.append(dist("torchcodec", "0.8.0"))
    assert not evaluate(Scope(packages=["torchaudio>=2.9"], packages_absent=["torchcodec"]), snap, KB).matches


def test_local_version_labels_satisfy_plain_specifiers():
    snap = recorded("old-driver-470-cu121")
    assert evaluate(Scope(packages=["torch==2.3.1", "transformers>=4.52"]), snap, KB).matches


def test_torch_cuda_none_means_cpu_build():
    assert evaluate(Scope(torch_cuda="none"), recorded("cpu-laptop"), KB).matches
    assert not evaluate(Scope(torch_cuda="none"), recorded("h100-single"), KB).matches


def test_compute_capability_gpu_name_python_platform_glibc():
    snap = recorded("colab-t4")
    assert evaluate(Scope(compute_capability="<8.0", gpu_name="T4", requires_gpu=True), snap, KB).matches
    assert not evaluate(Scope(compute_capability=">=8.0"), snap, KB).matches
    assert evaluate(Scope(python=">=3.12", platform=["linux"], glibc="<2.36"), snap, KB).matches
    assert not evaluate(Scope(platform=["windows"]), snap, KB).matches


@pytest.mark.parametrize(
    "name, predicate, expected",
    [
        ("v100-cu130", "gpu-arch-not-in-torch-build", True),
        ("v100-cu130", "gpu-arch-not-in-torch-build:older", True),
        ("v100-cu130", "gpu-arch-not-in-torch-build:newer", False),
        ("h100-single", "gpu-arch-not-in-torch-build", False),
        ("old-driver-470-cu121", "driver-below-cuda-floor", True),
        ("h200-drv580-cu130", "driver-below-cuda-floor", False),
        ("colab-t4", "driver-below-toolkit-driver", True),
        ("h100-single", "driver-below-toolkit-driver", False),
        ("vllm-011-h100", "pin-mismatch:vllm:torch", False),
        ("old-driver-470-cu121", "nvcc-major-differs-from-torch-cuda", True),
        ("h100-single", "nvcc-major-differs-from-torch-cuda", False),
        ("h100-single", "companion-mismatch:torchvision", False),
        ("h100-single", "python-outside-torch-window", False),
    ],
)
def test_predicates_on_recorded_machines(name, predicate, expected):
    m = evaluate(Scope(predicate=predicate), recorded(name), KB)
    assert m.applicable and m.matches is expected


def test_pin_mismatch_evidence_and_suggestion():
    snap = recorded("vllm-011-h100")
    for d in snap.packages.distributions:
        if d.name == "torch":
            d.version = "2.6.0+cu124"
    m = evaluate(Scope(predicate="pin-mismatch:vllm:torch"), snap, KB)
    assert m.matches
    assert m.evidence[0] == "vllm 0.11.0 requires torch==2.8.0"
    assert m.suggest == ["torch==2.8.0"]


def test_pin_mismatch_for_unknown_engine_version_cannot_be_judged():
    snap = make_snapshot(dist("vllm", "0.99.0"), torch="2.9.0", torch_cuda="12.8")
    m = evaluate(Scope(predicate="pin-mismatch:vllm:torch"), snap, KB)
    assert not m.applicable


def test_companion_and_python_window_mismatch():
    snap = make_snapshot(
        dist("torchvision", "0.20.1"), python="3.14.0", torch="2.6.0+cu124", torch_cuda="12.4"
    )
    m = evaluate(Scope(predicate="companion-mismatch:torchvision"), snap, KB)
    assert m.matches and m.suggest == ["torchvision==0.21.*"]
    m = evaluate(Scope(predicate="python-outside-torch-window"), snap, KB)
    assert m.matches and "Python >=3.9,<3.14" in m.expected[0]


def test_glibc_below_wheel_tag():
    snap = make_snapshot(torch="2.7.0+cu126", torch_cuda="12.6", glibc="2.17")
    assert evaluate(Scope(predicate="glibc-below-wheel:torch"), snap, KB).matches
    snap = make_snapshot(torch="2.6.0+cu124", torch_cuda="12.4", glibc="2.17")
    assert not evaluate(Scope(predicate="glibc-below-wheel:torch"), snap, KB).matches


def test_deep_arch_list_overrides_the_table():
    snap = recorded("v100-cu130")
    snap.torch.arch_list = ["sm_70", "sm_75", "sm_80", "sm_90"]  # e.g. a custom build
    assert not evaluate(Scope(predicate="gpu-arch-not-in-torch-build"), snap, KB).matches


def test_flash_attn_prebuilt_wheel_for_another_torch():
    snap = make_snapshot(
        dist("flash-attn", "2.5.8+cu122torch2.3cxx11abiFALSE"), torch="2.4.0+cu121", torch_cuda="12.1"
    )
    m = evaluate(Scope(predicate="flash-attn-wheel-mismatch"), snap, KB)
    assert m.matches and "built for torch 2.3, installed torch 2.4.0+cu121" in m.evidence[0]
    ok = make_snapshot(
        dist("flash-attn", "2.5.8+cu122torch2.3cxx11abiFALSE"), torch="2.3.1+cu121", torch_cuda="12.1"
    )
    assert not evaluate(Scope(predicate="flash-attn-wheel-mismatch"), ok, KB).matches
    from_source = make_snapshot(dist("flash-attn", "2.8.3"), torch="2.4.0+cu121", torch_cuda="12.1")
    assert not evaluate(Scope(predicate="flash-attn-wheel-mismatch"), from_source, KB).matches
    url = make_snapshot(
        dist(
            "flash_attn",
            "2.7.4.post1",
            direct_url="https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.4.post1/flash_attn-2.7.4.post1+cu12torch2.6cxx11abiTRUE-cp311-cp311-linux_x86_64.whl",
        ),
        torch="2.8.0+cu128",
        torch_cuda="12.8",
    )
    assert evaluate(Scope(predicate="flash-attn-wheel-mismatch"), url, KB).matches


def test_custom_engine_builds_are_not_judged_by_pypi_pins():
    snap = make_snapshot(dist("vllm", "0.6.3+nv24.10"), torch="2.5.0a0+872d972e41.nv24.08", torch_cuda="12.6")
    m = evaluate(Scope(predicate="pin-mismatch:vllm:torch"), snap, KB)
    assert not m.applicable and "custom build" in m.missing[0]
    editable = make_snapshot(dist("vllm", "0.11.0", editable=True), torch="2.9.0", torch_cuda="12.8")
    assert not evaluate(Scope(predicate="pin-mismatch:vllm:torch"), editable, KB).applicable
    wheel = make_snapshot(dist("vllm", "0.6.1.post1+cu118"), torch="2.3.0+cu118", torch_cuda="11.8")
    assert evaluate(
        Scope(predicate="pin-mismatch:vllm:torch"), wheel, KB
    ).matches  # vLLM's own +cu118 wheels pin too
