"""The built-in catalog: complete, valid, consistent with the compatibility facts, satisfiable
where it says so, and documented by a generated index that is in step with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from stackcheck import versions
from stackcheck.catalog import load_catalog, validate
from stackcheck.environment import load_snapshot
from stackcheck.render.profiles import index_markdown as render_index

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "tests" / "data" / "snapshots"

CPU = ["BASE-CPU", "TRAIN-CPU", "PT-CPU", "PERF-DELIVERY", "INF-SERVICE-DELIVERY"]
SINGLE = [
    "TRAIN-CUDA-MECHANISM",
    "ARCH-CUDA-MECHANISM",
    "PERF-CUDA-MECHANISM",
    "INF-CUDA-MECHANISM",
    "Q-CUDA-MECHANISM",
    "Q-QLORA",
    "PT-SFT-CUDA",
    "PT-RL-CUDA",
    "PT-VERL-CUDA",
    "PT-DISTILL-CUDA",
    "PT-DELIVERY-CUDA",
]
MULTI = ["PAR-CUDA-MECHANISM"]
SERVING = ["INF-VLLM-011-CU128", "INF-VLLM-SPEC025", "INF-VLLM-MTP"]
NAMED = CPU + SINGLE + MULTI + SERVING
TRAINING_MECHANISM = [
    "TRAIN-CUDA-MECHANISM",
    "ARCH-CUDA-MECHANISM",
    "PERF-CUDA-MECHANISM",
    "INF-CUDA-MECHANISM",
    "PAR-CUDA-MECHANISM",
    "TRAIN-CPU",
    "BASE-CPU",
]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(registry=None, cwd="/")


def reqs(profile) -> dict[str, Requirement]:
    return {canonicalize_name(r.name): r for r in map(Requirement, profile.requirements)}


def forbidden(profile) -> dict[str, str]:
    return {f.requirement: f.use_instead for f in profile.forbidden}


def test_the_catalog_validates_cleanly():
    assert [str(p) for p in validate(cwd="/")] == []


def test_exactly_the_twenty_named_profiles_are_listed(catalog):
    assert len(NAMED) == 20
    assert sorted(catalog.ids()) == sorted(NAMED)
    for pid in catalog.ids(include_bases=True):
        if pid not in NAMED:
            assert catalog.raw(pid).category == "base", pid


@pytest.mark.parametrize("pid", NAMED)
def test_every_profile_is_fully_described(catalog, pid):
    p = catalog.get(pid)
    assert p.title and p.purpose and p.category and p.python and p.docs.quickstart
    assert len(p.layers) >= 3 and p.layers[-1] == pid, "built on base layers"
    assert p.notes or pid in ("TRAIN-CPU", "PT-CPU")


def test_device_scope_matches_the_groups(catalog):
    for pid in CPU:
        p = catalog.get(pid)
        assert (
            p.gpu is None
            and p.evidence_scope == "cpu-smoke"
            and p.category == ("delivery" if pid.endswith("-DELIVERY") else "cpu")
        )
    for pid in SINGLE:
        p = catalog.get(pid)
        assert p.gpu.min_count == 1 and p.evidence_scope == "single-gpu" and p.category == "single-gpu"
    par = catalog.get("PAR-CUDA-MECHANISM")
    assert par.gpu.min_count >= 2 and par.evidence_scope == "multi-gpu"
    for pid in SERVING:
        assert catalog.get(pid).evidence_scope == "serving"


def test_bf16_and_qlora_profiles_need_ampere(catalog):
    for pid in (
        "Q-QLORA",
        "TRAIN-CUDA-MECHANISM",
        "ARCH-CUDA-MECHANISM",
        "PT-SFT-CUDA",
        "PAR-CUDA-MECHANISM",
    ):
        assert versions.contains(">=8.0", catalog.get(pid).gpu.min_compute_capability), pid


def test_qlora_stack_only_in_quantization_profiles(catalog):
    for pid in NAMED:
        p = catalog.get(pid)
        if pid.startswith("Q-"):
            assert "bitsandbytes" in reqs(p) and "bitsandbytes" not in forbidden(p)
        else:
            assert forbidden(p).get("bitsandbytes") == "Q-QLORA", pid


def test_no_serving_engine_in_training_mechanism_envs(catalog):
    for pid in TRAINING_MECHANISM:
        assert {"vllm", "sglang", "tensorrt-llm"} <= set(forbidden(catalog.get(pid))), pid


def test_vllm_envs_never_hold_a_second_engine(catalog):
    for pid in [*SERVING, "PT-VERL-CUDA"]:
        p = catalog.get(pid)
        assert "vllm" in reqs(p) and {"sglang", "tensorrt-llm"} <= set(forbidden(p)), pid


def test_vllm_011_baseline_uses_the_exact_pins_of_its_wheel(catalog):
    p = catalog.get("INF-VLLM-011-CU128")
    r = reqs(p)
    # vllm_pins.json, vLLM 0.11.0 Requires-Dist
    assert {n: str(r[n].specifier) for n in ("vllm", "torch", "torchvision", "torchaudio", "xformers")} == {
        "vllm": "==0.11.0",
        "torch": "==2.8.0",
        "torchvision": "==0.23.0",
        "torchaudio": "==2.8.0",
        "xformers": "==0.0.32.post1",
    }
    assert versions.is_subset(r["transformers"].specifier, ">=4.55.2")
    assert p.gpu.torch_cuda == "==12.8"  # torch 2.8 builds: 12.6, 12.8, 12.9
    assert versions.is_subset(p.python, ">=3.9,<3.14")


def test_spec025_models_cuda_129_honestly(catalog):
    p = catalog.get("INF-VLLM-SPEC025")
    r = reqs(p)
    assert str(r["vllm"].specifier) == "==0.25.1" and str(r["torch"].specifier) == "==2.11.0"
    # vLLM 0.25.1's default wheel is CUDA 13.0 (libcudart.so.13); its +cu129 variant runs with torch's
    # cu129 build of 2.11.0, which download.pytorch.org publishes: the profile pins exactly that build
    assert p.gpu.torch_cuda == "==12.9"
    assert p.docs.extra == {
        "vllm-cu129-index": "https://wheels.vllm.ai/0.25.1/cu129",
        "torch-cu129-index": "https://download.pytorch.org/whl/cu129",
    }
    index = "--extra-index-url https://wheels.vllm.ai/0.25.1/cu129"
    assert any("vllm==0.25.1+cu129" in n and index in n for n in p.notes)
    assert any("libcudart.so.13" in n for n in p.notes)


def test_mtp_is_kept_apart_from_both_other_serving_profiles(catalog):
    mtp = catalog.get("INF-VLLM-MTP")
    own = reqs(mtp)["vllm"].specifier
    for other in ("INF-VLLM-011-CU128", "INF-VLLM-SPEC025"):
        pin = reqs(catalog.get(other))["vllm"]
        assert versions.is_empty(versions.intersect(own, pin.specifier)), other
        assert forbidden(mtp)[f"vllm{pin.specifier}"] == other


def test_cpu_profiles_admit_a_plain_cpu_torch_2_13_venv(catalog):
    for pid in CPU:
        p = catalog.get(pid)
        assert versions.contains(p.python, "3.11.7") and versions.contains(p.python, "3.12.3"), pid
        if "torch" in reqs(p):
            assert versions.contains(reqs(p)["torch"].specifier, "2.13.0+cpu"), pid


def test_a_realistic_cpu_environment_satisfies_base_cpu(catalog):
    snapshot = load_snapshot(str(SNAPSHOTS / "cpu-laptop.json"))
    p = catalog.get("BASE-CPU")
    assert versions.contains(p.python, snapshot.python.version)
    for name, req in reqs(p).items():
        dist = snapshot.distribution(name)
        assert dist is not None and versions.contains(req.specifier, dist.version), name
    for f in p.forbidden:
        banned = Requirement(f.requirement)
        dist = snapshot.distribution(banned.name)
        assert dist is None or not versions.contains(banned.specifier, dist.version)


@pytest.mark.parametrize(
    ("snapshot", "pid", "verdict"),
    [
        ("cpu-laptop", "BASE-CPU", "ok"),
        ("cpu-laptop", "TRAIN-CPU", "ok"),
        ("cpu-laptop", "TRAIN-CUDA-MECHANISM", "blocked"),  # a CPU torch build on a machine without GPU
        ("h100-single", "TRAIN-CUDA-MECHANISM", "ok"),
        ("multi-gpu-8xa100", "PAR-CUDA-MECHANISM", "ok"),
        ("h100-single", "PAR-CUDA-MECHANISM", "blocked"),  # one GPU
        ("vllm-011-h100", "INF-VLLM-011-CU128", "ok"),
        ("vllm-011-h100", "INF-VLLM-SPEC025", "blocked"),  # vLLM 0.11 is not 0.25.1
        ("vllm-011-h100", "TRAIN-CPU", "blocked"),  # vLLM installed where engines are forbidden
    ],
)
def test_preflight_with_builtin_profiles_on_recorded_machines(catalog, snapshot, pid, verdict):
    from stackcheck.judge import judge

    report = judge(
        load_snapshot(str(SNAPSHOTS / f"{snapshot}.json")), command="preflight", profile=catalog.get(pid)
    )
    assert report.verdict == verdict, [
        (c.id, c.verdict, c.observed) for c in report.checks if c.verdict == "blocked"
    ]


def test_generated_index_is_in_step_with_the_catalog(catalog):
    committed = (ROOT / "docs" / "profiles-index.md").read_text(encoding="utf-8")
    assert committed == render_index(catalog, relative_to="docs"), (
        "run: stackcheck profiles docs --output docs/profiles-index.md"
    )


def test_index_links_resolve_to_existing_sections(catalog):
    index = render_index(catalog, relative_to="docs")
    guide = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    # GitHub's heading anchors: lower case, punctuation dropped, spaces → hyphens
    anchors = {
        re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in guide.splitlines()
        if line.startswith("#")
    }
    for pid in catalog.ids(include_bases=True):
        path, _, anchor = catalog.get(pid).docs.quickstart.partition("#")
        assert (ROOT / path).is_file() and anchor in anchors, pid
    assert "profiles.md#single-gpu" in index
