"""The profile-driven checks at their ok / warning / blocked boundaries."""

from __future__ import annotations

import pytest

from stackcheck.judge import judge
from stackcheck.models.snapshot import HostedPlatform
from tests.factories import dist, make_profile, make_snapshot


def results(snapshot, profile, check_id):
    report = judge(snapshot, command="preflight", profile=profile)
    return [c for c in report.checks if c.id == check_id]


def verdicts(snapshot, profile, check_id):
    return [c.verdict for c in results(snapshot, profile, check_id)]


# ---------------------------------------------------------------- PY001
@pytest.mark.parametrize(
    "have, spec, verdict",
    [
        ("3.12.3", ">=3.10,<3.14", "ok"),
        ("3.14.0", ">=3.10,<3.14", "blocked"),
        ("3.9.18", ">=3.10", "blocked"),
        ("3.10.0", ">=3.10", "ok"),
    ],
)
def test_python_version_boundaries(have, spec, verdict):
    assert verdicts(make_snapshot(python=have), make_profile(python=spec), "PY001") == [verdict]


def test_python_fix_names_an_admitted_version():
    [c] = results(make_snapshot(python="3.13.1"), make_profile(python=">=3.10,<3.13"), "PY001")
    assert "3.12" in c.fix and c.observed.startswith("Python 3.13.1")


# ---------------------------------------------------------------- PKG001 / PKG002
def test_requirement_satisfied_missing_and_mismatch():
    snap = make_snapshot(dist("transformers", "4.57.1"), dist("torch", "2.8.0+cu128"))
    prof = make_profile(
        requirements=["transformers>=4.45,<5", "torch==2.8.0", "accelerate>=1.0", "peft>=0.13"]
    )
    by_subject = {c.subject: c for c in results(snap, prof, "PKG001")}
    assert by_subject["transformers"].verdict == "ok"
    assert by_subject["torch"].verdict == "ok", "local label +cu128 satisfies ==2.8.0"
    assert by_subject["accelerate"].verdict == "blocked"
    assert by_subject["accelerate"].fix == "/env/bin/python -m pip install 'accelerate>=1.0'"
    snap2 = make_snapshot(dist("transformers", "5.0.0"))
    [c] = results(snap2, make_profile(requirements=["transformers>=4.45,<5"]), "PKG001")
    assert c.verdict == "blocked" and "5.0.0" in c.observed and "<5,>=4.45" in c.fix


def test_requirement_marker_is_evaluated_for_the_checked_interpreter():
    snap = make_snapshot(python="3.10.14")
    prof = make_profile(
        requirements=['tomli>=2; python_version < "3.11"', 'exceptiongroup; python_version >= "3.11"']
    )
    by_subject = {c.subject: c.verdict for c in results(snap, prof, "PKG001")}
    assert by_subject == {"tomli": "blocked", "exceptiongroup": "ok"}


def test_constraint_only_judged_when_installed():
    prof = make_profile(constraints=["numpy<2"])
    assert verdicts(make_snapshot(), prof, "PKG002") == []
    assert verdicts(make_snapshot(dist("numpy", "1.26.4")), prof, "PKG002") == ["ok"]
    assert verdicts(make_snapshot(dist("numpy", "2.1.0")), prof, "PKG002") == ["blocked"]


# ---------------------------------------------------------------- PKG003
def test_forbidden_package_blocks_with_uninstall_and_alternative():
    prof = make_profile(
        forbidden=[
            {
                "requirement": "vllm",
                "reason": "serving engine pins torch",
                "use_instead": "INF-VLLM-011-CU128",
            }
        ]
    )
    assert verdicts(make_snapshot(), prof, "PKG003") == ["ok"]
    [c] = results(make_snapshot(dist("vllm", "0.11.0")), prof, "PKG003")
    assert c.verdict == "blocked"
    assert "pip uninstall -y vllm" in c.fix and "INF-VLLM-011-CU128" in c.fix


def test_forbidden_version_range_only_blocks_inside_the_range():
    prof = make_profile(forbidden=[{"requirement": "vllm!=0.11.0"}])
    assert verdicts(make_snapshot(dist("vllm", "0.11.0")), prof, "PKG003") == ["ok"]
    assert verdicts(make_snapshot(dist("vllm", "0.12.0")), prof, "PKG003") == ["blocked"]


# ---------------------------------------------------------------- MOD001
def test_required_module_live_location():
    prof = make_profile(required_modules=["numpy", "flash_attn"], requirements=["flash-attn>=2.6"])
    snap = make_snapshot(modules={"numpy": "/env/lib/numpy/__init__.py", "flash_attn": ""})
    by = {c.subject: c for c in results(snap, prof, "MOD001")}
    assert by["numpy"].verdict == "ok"
    # PKG001 reports flash-attn>=2.6 missing with its install command: MOD001 says so, once
    assert by["flash_attn"].verdict == "blocked" and by["flash_attn"].consequence_of == "PKG001"
    assert by["flash_attn"].fix == "installing flash-attn (PKG001 above) provides it"


def test_required_module_claimed_but_missing_is_a_broken_install():
    prof = make_profile(required_modules=["yaml"])
    snap = make_snapshot(dist("PyYAML", "6.0.2", top_level=["yaml"]), modules={"yaml": ""})
    [c] = results(snap, prof, "MOD001")
    assert c.verdict == "blocked" and "claims it" in c.observed and "--force-reinstall" in c.fix


def test_required_module_from_recorded_metadata():
    prof = make_profile(required_modules=["yaml", "json", "cv2"])
    snap = make_snapshot(dist("PyYAML", "6.0.2", top_level=["yaml"]))
    by = {c.subject: c for c in results(snap, prof, "MOD001")}
    assert by["yaml"].verdict == "ok" and by["json"].verdict == "ok"
    assert by["cv2"].verdict == "blocked" and "opencv-python-headless" in by["cv2"].fix


# ---------------------------------------------------------------- GPU001..003
GPU_PROFILE = dict(gpu={"min_count": 2, "min_memory_gib": 40, "min_compute_capability": "8.0"})


def test_gpu_count_boundary_and_no_gpu():
    prof = make_profile(**GPU_PROFILE)
    one = make_snapshot(gpus=[("NVIDIA A100-SXM4-80GB", "8.0", 79.3)])
    two = make_snapshot(gpus=[("NVIDIA A100-SXM4-80GB", "8.0", 79.3)] * 2)
    assert verdicts(one, prof, "GPU001") == ["blocked"]
    assert verdicts(two, prof, "GPU001") == ["ok"]
    [c] = results(make_snapshot(), prof, "GPU001")
    assert c.verdict == "blocked" and "no NVIDIA GPU" in c.observed and "--skip GPU,CUDA" in c.fix


def test_gpu_hidden_by_cuda_visible_devices():
    snap = make_snapshot(gpus=[("Tesla T4", "7.5", 15)])
    snap.accelerators.gpus[0].visible = False
    snap.accelerators.cuda_visible_devices = ""
    [c] = results(snap, make_profile(gpu={"min_count": 1}), "GPU001")
    assert c.verdict == "blocked" and "CUDA_VISIBLE_DEVICES" in c.fix


def test_gpu_memory_and_capability_boundaries():
    prof = make_profile(**GPU_PROFILE)
    snap = make_snapshot(gpus=[("NVIDIA A100-SXM4-40GB", "8.0", 39.4), ("Tesla V100-SXM2-32GB", "7.0", 31.7)])
    assert verdicts(snap, prof, "GPU002") == ["ok", "blocked"]  # 39.4 rounds to the 40 GiB card
    assert verdicts(snap, prof, "GPU003") == ["ok", "blocked"]
    prof_max = make_profile(gpu={"max_compute_capability": "9.0"})
    assert verdicts(make_snapshot(gpus=[("NVIDIA B200", "10.0", 180)]), prof_max, "GPU003") == ["blocked"]


# ---------------------------------------------------------------- CUDA001 / CUDA003
def test_torch_cuda_build_against_profile():
    prof = make_profile(gpu={"torch_cuda": "==12.8"})
    ok_snap = make_snapshot(torch="2.8.0+cu128", torch_cuda="12.8", gpus=[("H100", "9.0", 80)])
    assert verdicts(ok_snap, prof, "CUDA001") == ["ok"]
    [c] = results(
        make_snapshot(torch="2.8.0+cu126", torch_cuda="12.6", gpus=[("H100", "9.0", 80)]), prof, "CUDA001"
    )
    assert c.verdict == "blocked" and "whl/cu128" in c.fix and "torch==2.8.0" in c.fix
    [c] = results(make_snapshot(torch="2.8.0+cpu", torch_cuda=None), prof, "CUDA001")
    assert c.verdict == "blocked" and "CPU-only" in c.observed


def test_cpu_torch_on_gpu_machine_warns_without_gpu_profile_and_blocks_with_one():
    snap = make_snapshot(
        torch="2.8.0+cpu",
        torch_cuda=None,
        gpus=[("NVIDIA H100 80GB HBM3", "9.0", 79.6)],
        driver="570.172.08",
        driver_cuda="12.8",
    )
    assert verdicts(snap, make_profile(), "CUDA003") == ["warning"]
    [c] = results(snap, make_profile(gpu={"min_count": 1}), "CUDA003")
    assert c.verdict == "blocked" and "download.pytorch.org/whl/cu12" in c.fix
    assert verdicts(make_snapshot(torch="2.8.0+cpu"), make_profile(), "CUDA003") == ["ok"]
    doctor = judge(snap, command="doctor")
    assert [c.verdict for c in doctor.checks if c.id == "CUDA003"] == ["warning"]


# ---------------------------------------------------------------- PLAT001 / PLAT002
def test_gpu_profile_on_cpu_only_hosted_platform():
    gha = [HostedPlatform(name="github-actions", signal="GITHUB_ACTIONS=true", gpu_expected=False)]
    [c] = results(make_snapshot(hosted=gha), make_profile(gpu={"min_count": 1}), "PLAT001")
    assert c.verdict == "blocked" and "--skip GPU,CUDA" in c.fix
    assert verdicts(make_snapshot(hosted=gha), make_profile(), "PLAT001") == []


def test_platform_constraints():
    prof = make_profile(platform={"os": ["linux"], "arch": ["x86_64"], "min_glibc": "2.28"})
    assert set(verdicts(make_snapshot(glibc="2.35"), prof, "PLAT002")) == {"ok"}
    by = {c.subject: c.verdict for c in results(make_snapshot(glibc="2.17"), prof, "PLAT002")}
    assert by["glibc"] == "blocked"
    by = {
        c.subject: c.verdict
        for c in results(make_snapshot(system="Darwin", machine="arm64"), prof, "PLAT002")
    }
    assert by == {"os": "blocked", "arch": "blocked"}


# ---------------------------------------------------------------- report semantics
def test_report_verdict_is_the_worst_and_skip_is_recorded():
    prof = make_profile(python=">=3.13", requirements=["numpy"])
    report = judge(make_snapshot(python="3.12.1"), command="preflight", profile=prof, skip=["PY"])
    py = [c for c in report.checks if c.id == "PY001"]
    assert py and py[0].verdict == "skipped" and py[0].reason == "skipped by --skip"
    assert report.verdict == "blocked"  # numpy missing
    assert report.snapshot_digest.startswith("sha256:")


def test_torch_cuda_fix_moves_to_the_profiles_torch_when_this_release_lacks_the_build():
    prof = make_profile(requirements=["torch>=2.6,<3"], gpu={"torch_cuda": ">=12.6"})
    snap = make_snapshot(
        torch="2.3.1+cu121",
        torch_cuda="12.1",
        gpus=[("NVIDIA A100-SXM4-80GB", "8.0", 79.3)],
        driver="570.172.08",
        driver_cuda="12.8",
    )
    [c] = results(snap, prof, "CUDA001")
    assert c.verdict == "blocked"
    assert "'torch<3,>=2.6'" in c.fix and c.fix.endswith("whl/cu128"), c.fix
