"""CUDA002 (torch CUDA build vs driver) and GPU004 (GPU architectures vs build), on recorded
machines and at the boundaries of the driver table."""

from __future__ import annotations

import pytest

from stackcheck.checks.context import Context
from stackcheck.checks.registry import all_checks
from stackcheck.judge import judge
from tests.factories import dist, make_snapshot, recorded


def run(check_id: str, snap):
    spec = all_checks()[check_id]
    return list(spec.run(Context(snapshot=snap)))


def verdicts(check_id: str, snap) -> list[str]:
    return [o.verdict for o in run(check_id, snap)]


@pytest.mark.parametrize(
    "name, cuda002, gpu004",
    [
        ("old-driver-470-cu121", ["blocked"], ["ok"]),
        ("h200-drv580-cu130", ["ok"], ["ok"]),
        ("h100-single", ["ok"], ["ok"]),
        ("v100-cu130", ["ok"], ["blocked"]),
        ("multi-gpu-8xa100", ["ok"], ["ok"]),
        ("colab-t4", ["warning"], ["ok"]),
        ("cpu-laptop", ["skipped"], ["skipped"]),
    ],
)
def test_recorded_machines(name, cuda002, gpu004):
    snap = recorded(name)
    assert verdicts("CUDA002", snap) == cuda002
    assert verdicts("GPU004", snap) == gpu004


def cu121(driver: str, system: str = "Linux"):
    return make_snapshot(
        gpus=[("NVIDIA A100-SXM4-80GB", "8.0", 80)],
        driver=driver,
        torch="2.3.1+cu121",
        torch_cuda="12.1",
        system=system,
    )


@pytest.mark.parametrize(
    "driver, verdict",
    [
        ("525.60.12", "blocked"),  # just below the CUDA 12.x floor
        ("525.60.13", "warning"),  # at the floor: compatibility mode
        ("530.30.01", "warning"),  # just below the CUDA 12.1 toolkit driver
        ("530.30.02", "ok"),  # at the toolkit driver
        ("580.95.05", "ok"),  # above
    ],
)
def test_cuda002_boundaries(driver, verdict):
    assert verdicts("CUDA002", cu121(driver)) == [verdict]


def test_cuda002_windows_column():
    assert verdicts("CUDA002", cu121("531.13", system="Windows")) == ["warning"]
    assert verdicts("CUDA002", cu121("531.14", system="Windows")) == ["ok"]
    assert verdicts("CUDA002", cu121("527.40", system="Windows")) == ["blocked"]


def test_cuda002_cu130_needs_580():
    snap = make_snapshot(
        gpus=[("NVIDIA H100 80GB HBM3", "9.0", 80)], driver="570.172.08", torch="2.13.0", torch_cuda="13.0"
    )
    [o] = run("CUDA002", snap)
    assert o.verdict == "blocked"
    assert "driver >= 580" in o.expected
    # the fix offers the build that fits this driver and GPU, for the checked interpreter
    assert (
        "/env/bin/python -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126"
        in o.fix
    )


def test_cuda002_fix_on_the_old_driver_machine():
    [o] = run("CUDA002", recorded("old-driver-470-cu121"))
    assert "Upgrade the NVIDIA driver to >= 530.30.02" in o.fix
    assert "torch==2.3.1 'torchvision==0.18.*' --index-url https://download.pytorch.org/whl/cu118" in o.fix
    assert o.observed == "driver 470.256.02 (native CUDA 11.4) with torch 2.3.1+cu121 (CUDA 12.1)"


def test_cuda002_skips_with_reasons():
    assert run("CUDA002", make_snapshot())[0].reason == "torch is not installed"
    cpu = make_snapshot(torch="2.13.0+cpu", torch_cuda=None)
    assert "CPU build" in run("CUDA002", cpu)[0].reason
    no_driver = make_snapshot(torch="2.8.0+cu128", torch_cuda="12.8")
    assert run("CUDA002", no_driver)[0].reason == "no NVIDIA driver found"


def test_cuda002_uses_version_label_when_torch_section_is_missing():
    snap = make_snapshot(dist("torch", "2.3.1+cu121"), gpus=[("Tesla V100", "7.0", 32)], driver="470.256.02")
    assert verdicts("CUDA002", snap) == ["blocked"]


def test_gpu004_blackwell_on_old_build_and_fix():
    snap = make_snapshot(
        gpus=[("NVIDIA GeForce RTX 5090", "12.0", 32)],
        driver="575.57.08",
        torch="2.6.0+cu124",
        torch_cuda="12.4",
    )
    [o] = run("GPU004", snap)
    assert o.verdict == "blocked" and o.subject == "GPU0 NVIDIA GeForce RTX 5090"
    assert "sm_90" in o.observed and "--index-url https://download.pytorch.org/whl/cu128" in o.fix


def test_gpu004_groups_identical_gpus_and_judges_each_model():
    snap = make_snapshot(
        gpus=[("NVIDIA A100", "8.0", 80), ("NVIDIA A100", "8.0", 80), ("Tesla P100", "6.0", 16)],
        driver="580.82.07",
        torch="2.13.0",
        torch_cuda="13.0",
    )
    out = run("GPU004", snap)
    assert [(o.subject, o.verdict) for o in out] == [
        ("GPU0,1 NVIDIA A100", "ok"),
        ("GPU2 Tesla P100", "blocked"),
    ]
    assert "cu126" in out[1].fix


def test_gpu004_unverified_table_row_warns_and_deep_list_decides():
    # the cu129 arch list of 2.11-2.13 is inferred (only its Turing lower bound is stated): warning
    p100 = [("Tesla P100", "6.0", 16)]
    snap = make_snapshot(gpus=p100, driver="580.82.07", torch="2.12.1+cu129", torch_cuda="12.9")
    [o] = run("GPU004", snap)
    assert o.verdict == "warning" and "unverified:" in o.observed
    snap.torch.arch_list = ["sm_60", "sm_70", "sm_80"]
    assert verdicts("GPU004", snap) == ["ok"]
    # 2.10 cu128 is read from RELEASE.md ("For Release 2.9 and 2.10"): it carries no Pascal -> blocked
    older = make_snapshot(gpus=p100, driver="580.82.07", torch="2.10.0+cu128", torch_cuda="12.8")
    assert verdicts("GPU004", older) == ["blocked"]


def test_gpu004_unknown_build_is_skipped_with_hint():
    snap = make_snapshot(
        gpus=[("NVIDIA H100", "9.0", 80)], driver="580.82.07", torch="2.3.1+cu130", torch_cuda="13.0"
    )
    assert "--deep" in run("GPU004", snap)[0].reason


def test_preflight_reports_them_in_the_report():
    report = judge(recorded("old-driver-470-cu121"), command="preflight")
    by_id = {c.id: c for c in report.checks}
    assert by_id["CUDA002"].verdict == "blocked" and report.verdict == "blocked"
    # the knowledge rule for the same fact is explain-only: reported once, by CUDA002
    assert "KB003" not in by_id


def test_cuda002_windows_cu130_is_not_guessed():
    snap = make_snapshot(
        gpus=[("NVIDIA RTX 4090", "8.9", 24)],
        driver="581.15",
        torch="2.13.0+cu130",
        torch_cuda="13.0",
        system="Windows",
    )
    [o] = run("CUDA002", snap)
    assert (
        o.verdict == "skipped"
        and "not in the knowledge tables" in o.reason
        and o.reason.startswith("cannot judge without")
    )


def test_cuda002_judges_by_the_drivers_cuda_level_when_only_that_is_known():
    # a pasted report: nvidia-smi's "CUDA Version: 11.4" (or torch's "found version 11040"), no driver line
    snap = make_snapshot(
        gpus=[("Tesla T4", "7.5", 16)], driver="", driver_cuda="11.4", torch="2.1.0+cu121", torch_cuda="12.1"
    )
    [o] = run("CUDA002", snap)
    assert o.verdict == "blocked" and o.observed.startswith("a driver for CUDA <= 11.4")
    assert "--index-url https://download.pytorch.org/whl/cu118" in o.fix  # a build the driver's CUDA 11 runs
    snap.accelerators.cuda_driver_version = "12.0"
    assert verdicts("CUDA002", snap) == ["warning"]
    snap.accelerators.cuda_driver_version = "12.4"
    assert verdicts("CUDA002", snap) == ["ok"]


def test_collect_env_silence_about_the_driver_is_not_a_fact():
    from stackcheck.environment import load_collect_env
    from tests.factories import DATA

    path = DATA / "collect_env" / "torch21-cu121-driver470.txt"
    if not path.exists():
        pytest.skip("collect_env sample not present")
    snap = load_collect_env(str(path))
    [o] = run("CUDA002", snap)
    if snap.accelerators.cuda_driver_version:  # the importer read torch's "found version 11040"
        assert o.verdict == "blocked"
    else:
        assert o.verdict == "skipped" and o.reason.startswith("cannot judge without")


def test_torch_cuda_none_is_not_a_rocm_build():
    from stackcheck.knowledge import load_knowledge
    from stackcheck.knowledge.scope import evaluate
    from stackcheck.models.rule import Scope

    snap = make_snapshot(torch="2.5.1+rocm6.2", torch_cuda=None)
    snap.torch.hip = "6.2.41133"
    assert not evaluate(Scope(torch_cuda="none"), snap, load_knowledge()).matches


def test_gpu004_does_not_judge_custom_builds_from_the_release_tables():
    ngc = make_snapshot(
        gpus=[("Tesla V100", "7.0", 32)],
        driver="580.82.07",
        torch="2.13.0a0+872d972e41.nv26.08",
        torch_cuda="13.0",
    )
    [o] = run("GPU004", ngc)
    assert o.verdict == "skipped" and "custom build" in o.reason
    ngc.torch.arch_list = ["sm_70", "sm_80", "sm_90"]  # --deep knows
    assert verdicts("GPU004", ngc) == ["ok"]


def test_cuda002_compat_mode_offers_only_the_same_release():
    [o] = run("CUDA002", recorded("colab-t4"))  # torch 2.8 has no build older than CUDA 12.6
    assert "torch.compile" in o.fix and "pip install" not in o.fix
    a100 = make_snapshot(
        gpus=[("NVIDIA A100", "8.0", 80)], driver="555.42.02", torch="2.6.0+cu126", torch_cuda="12.6"
    )
    [o] = run("CUDA002", a100)
    assert (
        o.verdict == "warning" and "torch==2.6.0 --index-url https://download.pytorch.org/whl/cu124" in o.fix
    )
