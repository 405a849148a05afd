"""The step verdicts, decided from the facts a child prints: every path, GPU ones included,
without running anything."""

from __future__ import annotations

from stackcheck.accept.steps import (
    ChildRun,
    Needs,
    judge_gpu,
    judge_numpy,
    judge_roundtrip,
    judge_train,
    run_child,
)
from stackcheck.models.profile import GpuRequirement, Profile


def pip(*reqs):
    return "py -m pip install " + " ".join(reqs)


def facts(**kw) -> ChildRun:
    return ChildRun(kw, None, "", 0.1)


NO_PROFILE = Needs(None, pip)
GPU_PROFILE = Needs(
    Profile(id="G", requirements=["torch>=2.6"], required_modules=["torch"], gpu=GpuRequirement(min_count=1)),
    pip,
)
CPU_PROFILE = Needs(Profile(id="C", requirements=["fastapi"]), pip)

NUMPY_OK = {
    "numpy": "2.1.0",
    "blas": "openblas",
    "errors": {"solve_3x3": 0.0, "matmul_2x3x2": 0.0, "matmul_256": 0.0},
}
TRAIN_OK = {
    "torch": "2.8.0",
    "cuda_build": "12.8",
    "parameters": 100,
    "losses": [1.0, 0.9, 0.8],
    "grads_finite": True,
    "last_grad_norm": 0.5,
    "threads": 2,
}
GPU_OK = {
    "torch": "2.8.0+cu128",
    "cuda_build": "12.8",
    "device": "cuda",
    "device_name": "NVIDIA H200",
    "capability": "9.0",
    "max_abs_diff": 2e-5,
    "max_abs": 150.0,
    "finite": True,
    "n": 1024,
}


def test_numpy():
    assert judge_numpy(facts(**NUMPY_OK), NO_PROFILE).verdict == "ok"
    wrong = dict(NUMPY_OK, errors={"solve_3x3": 0.25, "matmul_2x3x2": 0.0, "matmul_256": float("nan")})
    r = judge_numpy(facts(**wrong), NO_PROFILE)
    assert r.verdict == "blocked" and "--force-reinstall numpy" in r.fix


def test_training_must_lower_the_loss_with_finite_gradients():
    assert judge_train(facts(**TRAIN_OK), NO_PROFILE).verdict == "ok"
    flat = judge_train(facts(**dict(TRAIN_OK, losses=[1.0, 1.0, 1.1])), NO_PROFILE)
    assert flat.verdict == "blocked" and "did not decrease" in flat.observed
    nan = judge_train(facts(**dict(TRAIN_OK, grads_finite=False)), NO_PROFILE)
    assert nan.verdict == "blocked" and "non-finite" in nan.observed


def test_gpu_paths():
    assert judge_gpu(facts(**GPU_OK), GPU_PROFILE).verdict == "ok"
    off = judge_gpu(facts(**dict(GPU_OK, max_abs_diff=3.0)), GPU_PROFILE)
    assert off.verdict == "blocked" and "differs from the CPU" in off.observed
    broken = judge_gpu(
        facts(**dict(GPU_OK, error="CUDA error: no kernel image is available for execution on the device")),
        GPU_PROFILE,
    )
    assert broken.verdict == "blocked" and "no kernel image" in broken.observed
    cpu_build = {"torch": "2.8.0+cpu", "cuda_build": None, "device": None, "device_count": 0}
    assert judge_gpu(facts(**cpu_build), NO_PROFILE).verdict == "skipped"
    needed = judge_gpu(facts(**cpu_build), GPU_PROFILE)
    assert (
        needed.verdict == "blocked"
        and "CPU-only build" in needed.observed
        and "preflight --profile G" in needed.fix
    )
    no_driver = judge_gpu(facts(**dict(cpu_build, cuda_build="12.8")), GPU_PROFILE)
    assert no_driver.verdict == "blocked" and "nvidia-smi" in no_driver.fix


def test_missing_packages_follow_the_profile():
    missing = facts(missing="torch")
    assert judge_train(missing, NO_PROFILE).fix == "py -m pip install torch"
    assert judge_train(missing, GPU_PROFILE).fix == "py -m pip install torch>=2.6"
    assert judge_train(missing, CPU_PROFILE).verdict == "skipped"
    assert (
        judge_roundtrip(facts(missing="safetensors.torch"), None, NO_PROFILE).observed
        == "safetensors is not installed"
    )


def test_roundtrip_must_be_bit_identical():
    saved = facts(torch="2.8.0", safetensors="0.5.0", file="m.safetensors", bytes=1000, tensors=14)
    same = facts(identical=True, max_abs_diff=0.0, tensors=14, tensors_replaced=8)
    assert judge_roundtrip(saved, same, NO_PROFILE).verdict == "ok"
    drift = facts(identical=False, max_abs_diff=1e-7, tensors=14, tensors_replaced=8)
    assert judge_roundtrip(saved, drift, NO_PROFILE).verdict == "blocked"
    crashed = ChildRun(None, "exit 1: SafetensorError: invalid header", "", 0.2)
    r = judge_roundtrip(saved, crashed, NO_PROFILE)
    assert r.verdict == "blocked" and "invalid header" in r.observed


def test_child_timeout_and_crash_are_verdicts_not_exceptions(tmp_path):
    import sys

    slow = run_child(sys.executable, "_child_numpy.py", [], timeout=0.001, workdir=str(tmp_path))
    assert slow.facts is None and "timeout" in slow.error
    assert judge_numpy(slow, NO_PROFILE).verdict == "blocked"
    gone = run_child(str(tmp_path / "no-python"), "_child_numpy.py", [], timeout=5, workdir=str(tmp_path))
    assert gone.facts is None and "not found" in gone.error


# ------------------------------------------------------------------ issue 11 (what a new user trips over)
TRAIN_PROFILE = Profile(id="T", requirements=["torch>=2.6", "safetensors>=0.4.3"])


def test_every_missing_package_of_a_step_is_in_one_fix():
    both = facts(missing=["torch", "safetensors"])
    r = judge_roundtrip(both, None, Needs(TRAIN_PROFILE, pip))
    assert (r.verdict, r.observed) == ("blocked", "torch and safetensors are not installed")
    assert r.fix == "py -m pip install torch>=2.6 safetensors>=0.4.3"
    assert judge_roundtrip(both, None, NO_PROFILE).fix == "py -m pip install torch safetensors"
    # a profile that needs only one of them: the step is not the profile's, it is skipped
    one = judge_roundtrip(both, None, GPU_PROFILE)
    assert (
        one.verdict == "skipped"
        and one.reason == "safetensors is not installed and profile G does not need it"
    )


def test_gpu_step_without_torch_is_skipped_unless_a_gpu_is_needed():
    missing = facts(missing=["torch"])
    for needs, who in (
        (NO_PROFILE, "no GPU was found on this machine"),
        (Needs(TRAIN_PROFILE, pip), "profile T needs no GPU"),
    ):
        r = judge_gpu(missing, needs)
        assert (r.verdict, r.reason) == ("skipped", f"torch is not installed (ACC002 reports it) and {who}")
    blocked = judge_gpu(missing, GPU_PROFILE)
    assert blocked.verdict == "blocked" and blocked.fix == "py -m pip install torch>=2.6"
    on_gpu_machine = judge_gpu(missing, Needs(None, pip, gpus=1))
    assert on_gpu_machine.verdict == "blocked" and on_gpu_machine.fix == "py -m pip install torch"


def test_a_timeout_says_so_and_suggests_a_longer_one():
    slow = ChildRun(None, "timeout after 1 s", "", 1.0, timed_out=True)
    needs = Needs(
        TRAIN_PROFILE,
        pip,
        python="/env/bin/python",
        rerun=("--python", "/env/bin/python", "--profile", "T"),
        timeout=1.0,
    )
    for r in (
        judge_numpy(slow, needs),
        judge_train(slow, needs),
        judge_gpu(slow, needs),
        judge_roundtrip(slow, None, needs),
        judge_roundtrip(facts(bytes=1, tensors=1, safetensors="0.5"), slow, needs),
    ):
        assert r.verdict == "blocked"
        assert r.observed == "the step timed out after 1 s (--timeout 1)"
        assert r.expected == "the step finishes within its time limit"
        assert (
            r.fix == "give each step more time: stackcheck accept --python /env/bin/python --profile T "
            "--timeout 300"
        )
    longer = Needs(None, pip, timeout=300.0)
    assert judge_train(slow, longer).fix == "give each step more time: stackcheck accept --timeout 1200"
