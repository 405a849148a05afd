"""Exact outcomes of PKG003 (every forbidden entry) and GPU004 (only visible GPUs decide).

These pin behaviour a mutation spot-check showed the broader tests let through: a PKG003 that
judged only the first forbidden entry, a GPU004 that looked at every GPU instead of the ones
CUDA_VISIBLE_DEVICES leaves visible.
"""

from __future__ import annotations

import pytest

from stackcheck.checks.context import Context
from stackcheck.checks.registry import all_checks
from stackcheck.judge import judge
from tests.factories import dist, make_profile, make_snapshot

LOC = "/env/lib/python3.12/site-packages"


def outcomes(check_id: str, snap, profile=None):
    return list(all_checks()[check_id].run(Context(snapshot=snap, profile=profile)))


# ---------------------------------------------------------------- PKG003
FORBIDDEN = [
    {"requirement": "vllm", "reason": "a serving engine pins torch", "use_instead": "SERVE-VLLM"},
    {"requirement": "sglang"},
    {"requirement": "bitsandbytes<0.40"},
    {"requirement": "tensorrt-llm"},
]


def test_pkg003_judges_every_forbidden_entry_in_order():
    """The first entry is absent; the second and third are installed (one outside its
    forbidden range), the last absent: four outcomes, the installed one blocked."""
    snap = make_snapshot(dist("sglang", "0.5.2"), dist("bitsandbytes", "0.45.0"), dist("numpy", "2.1.0"))
    got = [
        (o.verdict, o.subject, o.observed, o.expected)
        for o in outcomes("PKG003", snap, make_profile(forbidden=FORBIDDEN))
    ]
    assert got == [
        ("ok", "vllm", "not installed", "no vllm"),
        ("blocked", "sglang", f"sglang 0.5.2 is installed (in {LOC})", "no sglang"),
        ("ok", "bitsandbytes", "bitsandbytes 0.45.0 (outside the forbidden range)", "no bitsandbytes<0.40"),
        ("ok", "tensorrt-llm", "not installed", "no tensorrt-llm"),
    ]


def test_pkg003_blocks_each_installed_forbidden_package_with_its_own_fix():
    snap = make_snapshot(dist("vllm", "0.11.0"), dist("tensorrt-llm", "1.0.0"))
    blocked = [
        o for o in outcomes("PKG003", snap, make_profile(forbidden=FORBIDDEN)) if o.verdict == "blocked"
    ]
    assert [o.subject for o in blocked] == ["vllm", "tensorrt-llm"]
    vllm, trt = blocked
    assert vllm.expected == "no vllm (a serving engine pins torch)"
    assert vllm.fix.startswith("/env/bin/python -m pip uninstall -y vllm")
    assert vllm.fix.endswith("  # or run this experiment under profile SERVE-VLLM")
    assert trt.expected == "no tensorrt-llm"
    assert trt.fix.startswith("/env/bin/python -m pip uninstall -y tensorrt-llm")
    assert "SERVE-VLLM" not in trt.fix
    # the report as a whole is blocked, with one PKG003 result per entry
    report = judge(snap, command="preflight", profile=make_profile(forbidden=FORBIDDEN))
    assert [(c.subject, c.verdict) for c in report.checks if c.id == "PKG003"] == [
        ("vllm", "blocked"),
        ("sglang", "ok"),
        ("bitsandbytes", "ok"),
        ("tensorrt-llm", "blocked"),
    ]
    assert report.verdict == "blocked"


def test_pkg003_only_the_last_entry_installed_still_blocks():
    snap = make_snapshot(dist("tensorrt-llm", "1.0.0"))
    assert [o.verdict for o in outcomes("PKG003", snap, make_profile(forbidden=FORBIDDEN))] == [
        "ok",
        "ok",
        "ok",
        "blocked",
    ]


@pytest.mark.parametrize("status", ["failed", "timeout", "absent"])
def test_pkg001_to_003_skip_without_a_package_list(status):
    snap = make_snapshot(dist("vllm", "0.11.0"))
    snap.packages.status, snap.packages.source = status, "metadata"
    prof = make_profile(requirements=["vllm"], constraints=["numpy<2"], forbidden=[{"requirement": "vllm"}])
    why = f"the snapshot has no package list ({status}, source metadata)"
    assert [(o.verdict, o.reason) for o in outcomes("PKG001", snap, prof)] == [("skipped", why)]
    assert [(o.verdict, o.reason) for o in outcomes("PKG002", snap, prof)] == [("skipped", why)]
    assert [(o.verdict, o.reason) for o in outcomes("PKG003", snap, prof)] == [
        ("skipped", "the snapshot has no package list")
    ]


def test_invalid_profile_requirements_are_skipped_by_name():
    snap = make_snapshot(dist("vllm", "0.11.0"))
    prof = make_profile(
        requirements=["vllm>>1"], constraints=["numpy<<2"], forbidden=[{"requirement": "vllm=!1"}]
    )
    hint = "in the profile (run `stackcheck profiles validate`)"
    assert [(o.verdict, o.subject, o.reason) for o in outcomes("PKG001", snap, prof)] == [
        ("skipped", "vllm>>1", f"invalid requirement 'vllm>>1' {hint}")
    ]
    assert [(o.verdict, o.subject, o.reason) for o in outcomes("PKG002", snap, prof)] == [
        ("skipped", "numpy<<2", f"invalid requirement 'numpy<<2' {hint}")
    ]
    assert [(o.verdict, o.subject, o.reason) for o in outcomes("PKG003", snap, prof)] == [
        ("skipped", "vllm=!1", "invalid forbidden requirement 'vllm=!1' in the profile")
    ]


# ---------------------------------------------------------------- GPU004
H100 = ("NVIDIA H100 80GB HBM3", "9.0", 79.6)
V100 = ("Tesla V100-SXM2-32GB", "7.0", 31.7)
CU130_ARCHS = "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120"


def h100_v100(visible: list[int]):
    """One node with an H100 (GPU 0) and a V100 (GPU 1) and torch 2.13.0 built for CUDA 13.0
    (which carries no sm_70): CUDA_VISIBLE_DEVICES decides which of them the run uses."""
    snap = make_snapshot(
        gpus=[H100, V100], driver="580.95.05", driver_cuda="13.0", torch="2.13.0", torch_cuda="13.0"
    )
    for g in snap.accelerators.gpus:
        g.visible = g.index in visible
    snap.accelerators.cuda_visible_devices = ",".join(map(str, visible))
    return snap


def test_gpu004_hidden_v100_does_not_block_the_visible_h100():
    [o] = outcomes("GPU004", h100_v100([0]))
    assert (o.verdict, o.subject) == ("ok", "GPU0 NVIDIA H100 80GB HBM3")
    assert o.observed == f"NVIDIA H100 80GB HBM3 CC 9.0 covered by {CU130_ARCHS}"
    assert judge(h100_v100([0]), command="preflight").verdict == "ok"
    assert judge(h100_v100([1]), command="preflight").verdict == "blocked"


def test_gpu004_visible_v100_blocks_while_the_h100_is_hidden():
    [o] = outcomes("GPU004", h100_v100([1]))
    assert (o.verdict, o.subject, o.category) == (
        "blocked",
        "GPU1 Tesla V100-SXM2-32GB",
        "gpu-arch-unsupported",
    )
    assert o.observed == (
        f"Tesla V100-SXM2-32GB (CC 7.0); torch 2.13.0 (CUDA 13.0) carries {CU130_ARCHS} "
        "[knowledge table (PT-REL)]"
    )
    assert o.expected == "a build with sm_70 (or an older sm_7x / PTX <= 7.0)"
    assert o.fix.startswith("Install a torch build that covers CC 7.0: ")
    assert o.fix.endswith("torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126")


def test_gpu004_both_visible_judges_both():
    assert [(o.verdict, o.subject) for o in outcomes("GPU004", h100_v100([0, 1]))] == [
        ("ok", "GPU0 NVIDIA H100 80GB HBM3"),
        ("blocked", "GPU1 Tesla V100-SXM2-32GB"),
    ]


def test_gpu004_nothing_visible_is_skipped():
    [o] = outcomes("GPU004", h100_v100([]))
    assert (o.verdict, o.reason) == ("skipped", "no visible NVIDIA GPU")


# ---------------------------------------------------------------- GPU001 when the GPU facts failed
NVML_FIX = (
    "fix the driver problem shown (e.g. reboot after a driver upgrade for a driver/library "
    "mismatch), then re-run"
)


@pytest.mark.parametrize(
    "status, error, shown",
    [
        ("failed", "NVML error 999: Unknown Error", "NVML error 999: Unknown Error"),
        ("timeout", "NVML: no answer within 5 s (driver hung?)", "NVML: no answer within 5 s (driver hung?)"),
        ("failed", None, "no detail"),
    ],
)
def test_gpu001_when_nvml_failed_or_timed_out(status, error, shown):
    from stackcheck.models import snapshot as S

    snap = make_snapshot()
    snap.accelerators = S.AcceleratorSection(status=status, source="nvml", error=error)
    [o] = outcomes("GPU001", snap, make_profile(gpu={"min_count": 2}))
    assert (o.verdict, o.observed, o.expected, o.fix) == (
        "blocked",
        f"GPU facts could not be gathered ({status}): {shown}",
        ">= 2 GPU(s)",
        NVML_FIX,
    )
    # the judged report is blocked on GPU001 (a profile that needs GPUs), GPU002/003 say why they skip
    report = judge(
        snap, command="preflight", profile=make_profile(gpu={"min_count": 2, "min_memory_gib": 40})
    )
    assert [
        (c.id, c.verdict, c.reason) for c in report.checks if c.id.startswith("GPU00") and c.id != "GPU004"
    ] == [("GPU001", "blocked", None), ("GPU002", "skipped", "no visible GPU (see GPU001)")]


def test_gpu001_names_cuda_visible_devices_when_it_hides_every_gpu():
    snap = make_snapshot(gpus=[("Tesla T4", "7.5", 15)])
    snap.accelerators.gpus[0].visible = False
    snap.accelerators.cuda_visible_devices = "1"
    [o] = outcomes("GPU001", snap, make_profile(gpu={}))
    assert (o.verdict, o.observed, o.expected, o.fix) == (
        "blocked",
        "no NVIDIA GPU found; CUDA_VISIBLE_DEVICES='1' hides 1 GPU(s)",
        ">= 1 GPU(s)",
        "correct CUDA_VISIBLE_DEVICES, or show every GPU: `unset CUDA_VISIBLE_DEVICES`",
    )
    plain = make_snapshot()
    plain.accelerators.cuda_visible_devices = ""  # set, but there is no GPU to hide
    [o] = outcomes("GPU001", plain, make_profile(gpu={}))
    assert o.observed == "no NVIDIA GPU found (looked at /sys/module/nvidia/version)"
    assert o.fix.startswith("run on a machine with a GPU, or choose a CPU profile")


def test_gpu001_a_zero_min_count_still_needs_one_gpu():
    [o] = outcomes(
        "GPU001", make_snapshot(gpus=[("Tesla T4", "7.5", 15)]), make_profile(gpu={"min_count": 0})
    )
    assert (o.verdict, o.observed, o.expected) == ("ok", "1 visible GPU(s): Tesla T4", ">= 1")


# ---------------------------------------------------------------- GPU002/GPU003/CUDA001/CUDA003/PLAT001 edges
def test_gpu_checks_skip_saying_why():
    prof = make_profile(gpu={"min_memory_gib": 40, "min_compute_capability": "8.0", "torch_cuda": ">=12.6"})
    unknown_memory = make_snapshot(gpus=[("Tesla T4", "7.5", 15)], torch="2.8.0+cu128", torch_cuda="12.8")
    unknown_memory.accelerators.gpus[0].memory_total_bytes = None
    assert [(o.verdict, o.subject, o.reason) for o in outcomes("GPU002", unknown_memory, prof)] == [
        ("skipped", "GPU 0", "memory of this GPU is unknown")
    ]
    no_gpu = make_snapshot(torch="2.8.0+cu128", torch_cuda="12.8")
    for check_id in ("GPU002", "GPU003"):
        assert [(o.verdict, o.reason) for o in outcomes(check_id, no_gpu, prof)] == [
            ("skipped", "no visible GPU (see GPU001)")
        ]
    assert [(o.verdict, o.reason) for o in outcomes("CUDA001", make_snapshot(), prof)] == [
        ("skipped", "torch is not installed or its version file was not read (see PKG001)")
    ]
    bad_spec = make_profile(gpu={"torch_cuda": "=>12"})
    assert [(o.verdict, o.reason) for o in outcomes("CUDA001", no_gpu, bad_spec)] == [
        ("skipped", "invalid gpu.torch_cuda '=>12' in the profile")
    ]
    # no thresholds in the profile: nothing to judge
    for check_id in ("GPU002", "GPU003", "CUDA001"):
        assert outcomes(check_id, unknown_memory, make_profile(gpu={})) == []


def test_cuda003_ok_outcomes_name_the_build():
    gpu = make_snapshot(gpus=[("Tesla T4", "7.5", 15)], torch="2.8.0+cu128", torch_cuda="12.8")
    assert [(o.verdict, o.observed) for o in outcomes("CUDA003", gpu)] == [
        ("ok", "torch 2.8.0+cu128 (CUDA 12.8)")
    ]
    cpu = make_snapshot(torch="2.8.0+cu128", torch_cuda="12.8")
    assert [(o.verdict, o.observed) for o in outcomes("CUDA003", cpu)] == [
        ("ok", "torch 2.8.0+cu128; no NVIDIA GPU")
    ]


def test_plat001_ok_on_a_hosted_platform_with_a_gpu():
    from stackcheck.models.snapshot import HostedPlatform

    colab = make_snapshot(
        gpus=[("Tesla T4", "7.5", 15)],
        hosted=[HostedPlatform(name="colab", signal="COLAB_GPU=1", gpu_expected=True)],
    )
    assert [(o.verdict, o.observed) for o in outcomes("PLAT001", colab, make_profile(gpu={}))] == [
        ("ok", "hosted on colab")
    ]
    runner = make_snapshot(
        hosted=[HostedPlatform(name="GitHub Actions", signal="GITHUB_ACTIONS=true", gpu_expected=False)]
    )
    assert [(o.verdict, o.observed) for o in outcomes("PLAT001", runner, make_profile(gpu={}))] == [
        ("blocked", "GitHub Actions (GITHUB_ACTIONS=true) offers no GPU here")
    ]
    assert outcomes("PLAT001", runner, make_profile()) == []  # a CPU profile


# ---------------------------------------------------------------- CUDA001 fixes, GPU002 figures
H100_ONLY = [("NVIDIA H100 80GB HBM3", "9.0", 79.6)]


@pytest.mark.parametrize(
    "torch, cuda, driver_cuda, fix",
    [
        # this release has a build in the range the driver runs: the same release from that index
        (
            "2.8.0+cu121",
            "12.1",
            "12.6",
            "/env/bin/python -m pip install torch==2.8.0 --index-url https://download.pytorch.org/whl/cu126",
        ),
        # this release has no such build: the profile's own torch range, from the newest fitting index
        (
            "2.3.1+cu121",
            "12.1",
            "12.9",
            "torch 2.3.1 has no CUDA ==12.8 build: /env/bin/python -m pip install 'torch>=2.7' --index-url https://download.pytorch.org/whl/cu128",
        ),
        (
            "2.3.1+cu121",
            "12.1",
            "",  # driver's CUDA unknown: any build may run
            "torch 2.3.1 has no CUDA ==12.8 build: /env/bin/python -m pip install 'torch>=2.7' --index-url https://download.pytorch.org/whl/cu128",
        ),
        # no build in the range runs on this driver
        (
            "2.3.1+cu121",
            "12.1",
            "11.4",
            "install a torch build for CUDA ==12.8, after upgrading the driver (it supports CUDA 11.4)",
        ),
    ],
)
def test_cuda001_fix_names_a_build_the_driver_runs(torch, cuda, driver_cuda, fix):
    spec = ">=12.4" if torch.startswith("2.8") else "==12.8"
    prof = make_profile(gpu={"torch_cuda": spec}, requirements=["torch>=2.7"])
    snap = make_snapshot(gpus=H100_ONLY, torch=torch, torch_cuda=cuda, driver_cuda=driver_cuda)
    [o] = outcomes("CUDA001", snap, prof)
    assert (o.verdict, o.observed, o.expected, o.fix) == (
        "blocked",
        f"torch {torch} is a CUDA {cuda} build",
        f"CUDA {spec}",
        fix,
    )


def test_cuda003_fix_is_the_newest_build_the_driver_runs():
    snap = make_snapshot(gpus=H100_ONLY, torch="2.8.0+cpu", torch_cuda=None, driver_cuda="12.6")
    [o] = outcomes("CUDA003", snap)
    assert (o.verdict, o.fix) == (
        "warning",
        "/env/bin/python -m pip install torch==2.8.0 --index-url https://download.pytorch.org/whl/cu126",
    )


def test_gpu002_reports_gib_of_the_reported_total():
    snap = make_snapshot(gpus=[("NVIDIA A100-SXM4-80GB", "8.0", 79.3)])
    assert [
        (o.verdict, o.observed, o.expected)
        for o in outcomes("GPU002", snap, make_profile(gpu={"min_memory_gib": 80}))
    ] == [("ok", "GPU 0 NVIDIA A100-SXM4-80GB: 79.3 GiB", ">= 80 GiB")]


def test_plat001_a_cpu_only_platform_with_a_visible_gpu_is_fine():
    from stackcheck.models.snapshot import HostedPlatform

    snap = make_snapshot(
        gpus=[("Tesla T4", "7.5", 15)],
        hosted=[HostedPlatform(name="github-actions", signal="GITHUB_ACTIONS=true", gpu_expected=False)],
    )
    assert [(o.verdict, o.observed) for o in outcomes("PLAT001", snap, make_profile(gpu={}))] == [
        ("ok", "hosted on github-actions")
    ]
