"""accelerators probe: driver files, a fake NVML (pynvml in sys.modules), nvidia-smi parsing,
CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

import sys
import threading
import types

import pytest

from stackcheck.models.snapshot import Gpu
from stackcheck.probe import accelerators as acc

H100_UUID = "GPU-5b2e1f7c-93d4-8a0e-6c1b-2f4d7e9a0c31"
A100_UUID = "GPU-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5"


class FakeNVMLError(Exception):
    def __init__(self, value):
        super().__init__(f"nvml code {value}")
        self.value = value


def fake_pynvml(*, init_error=None, count_error=None, gpus=None, mig_supported=True, hang=None):
    """A module shaped like nvidia-ml-py's pynvml."""
    gpus = gpus if gpus is not None else [("NVIDIA H100 80GB HBM3", H100_UUID, 81559 * 2**20, (9, 0))]
    mod = types.ModuleType("pynvml")
    mod.NVMLError = FakeNVMLError
    state = {"shutdown": 0}
    mod.state = state

    def init():
        if hang is not None:
            hang.wait(5)
        if init_error is not None:
            raise FakeNVMLError(init_error)

    def count():
        if count_error is not None:
            raise FakeNVMLError(count_error)
        return len(gpus)

    def mig(handle):
        if not mig_supported:
            raise FakeNVMLError(3)
        return (1 if handle == 1 else 0, 0)

    mod.nvmlInit = init
    mod.nvmlShutdown = lambda: state.__setitem__("shutdown", state["shutdown"] + 1)
    mod.nvmlSystemGetDriverVersion = lambda: b"580.82.07"  # older bindings return bytes
    mod.nvmlSystemGetCudaDriverVersion_v2 = lambda: 13000
    mod.nvmlDeviceGetCount = count
    mod.nvmlDeviceGetHandleByIndex = lambda i: i
    mod.nvmlDeviceGetName = lambda h: gpus[h][0]
    mod.nvmlDeviceGetUUID = lambda h: gpus[h][1]
    mod.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=gpus[h][2], used=0, free=gpus[h][2])
    mod.nvmlDeviceGetCudaComputeCapability = lambda h: gpus[h][3]
    mod.nvmlDeviceGetMigMode = mig
    return mod


@pytest.fixture
def fake_fs(tmp_path, monkeypatch):
    """No driver files, no AMD device, no CUDA_VISIBLE_DEVICES unless a test adds them; one
    NVIDIA device node, so that NVML is asked (tests/probe/test_fast_path_probe.py removes it)."""
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvidia0").write_text("")
    monkeypatch.setattr(acc, "DEV_DIR", str(tmp_path / "dev"))
    monkeypatch.setattr(acc, "PROCFS_DRIVER_DIR", str(tmp_path / "proc_driver_nvidia"))
    monkeypatch.setattr(acc, "WSL_GPU_NODE", str(tmp_path / "dev" / "dxg"))
    monkeypatch.setattr(acc, "SYSFS_VERSION", str(tmp_path / "sys_version"))
    monkeypatch.setattr(acc, "PROCFS_VERSION", str(tmp_path / "proc_version"))
    monkeypatch.setattr(acc, "AMD_KFD", str(tmp_path / "kfd"))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return tmp_path


def install(monkeypatch, module):
    monkeypatch.setitem(sys.modules, "pynvml", module)


def test_driver_from_sysfs_then_procfs(fake_fs):
    (fake_fs / "proc_version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024\n"
        "GCC version:  gcc version 9.4.0\n"
    )
    looked = []
    assert acc.driver_from_files(looked) == ("470.256.02", "procfs")
    assert looked == [acc.SYSFS_VERSION, acc.PROCFS_VERSION]
    (fake_fs / "sys_version").write_text("580.82.07\n")
    assert acc.driver_from_files() == ("580.82.07", "sysfs")


def test_nvml_full_facts(fake_fs, monkeypatch):
    (fake_fs / "sys_version").write_text("580.82.07\n")
    mod = fake_pynvml()
    install(monkeypatch, mod)
    sec = acc.collect()
    assert sec.status == "ok" and sec.source == "nvml" and sec.error is None
    assert (sec.driver_version, sec.driver_source, sec.cuda_driver_version) == ("580.82.07", "sysfs", "13.0")
    [gpu] = sec.gpus
    assert (gpu.name, gpu.uuid, gpu.compute_capability, gpu.mig_mode, gpu.visible) == (
        "NVIDIA H100 80GB HBM3",
        H100_UUID,
        "9.0",
        "disabled",
        True,
    )
    assert gpu.memory_total_bytes == 81559 * 2**20
    assert mod.state["shutdown"] == 1


def test_nvml_supplies_driver_when_no_file(fake_fs, monkeypatch):
    install(monkeypatch, fake_pynvml(mig_supported=False))
    sec = acc.collect()
    assert (sec.driver_version, sec.driver_source) == ("580.82.07", "nvml")
    assert sec.gpus[0].mig_mode is None


def test_no_gpu_anywhere_is_absent_with_looked_for(fake_fs, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml → ImportError
    sec = acc.collect()
    assert sec.status == "absent" and not sec.gpus
    assert acc.SYSFS_VERSION in sec.looked_for and any(
        "nvidia-ml-py not installed" in x for x in sec.looked_for
    )


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (9, "driver is not loaded"),
        (12, "libnvidia-ml.so.1 not found"),
        (18, "version mismatch"),
        (4, "no permission"),
    ],
)
def test_nvml_error_codes_become_sentences(fake_fs, monkeypatch, code, words):
    install(monkeypatch, fake_pynvml(init_error=code))
    facts = acc.query_nvml()
    assert words in facts.error and facts.code == code


def test_driver_library_mismatch_keeps_driver_and_explains(fake_fs, monkeypatch):
    (fake_fs / "sys_version").write_text("570.172.08\n")
    install(monkeypatch, fake_pynvml(init_error=18))
    sec = acc.collect()
    assert sec.status == "ok" and sec.driver_version == "570.172.08"
    assert "mismatch" in sec.error and "reboot" in sec.error


def test_no_permission_without_driver_file_is_failed(fake_fs, monkeypatch):
    install(monkeypatch, fake_pynvml(init_error=4))
    sec = acc.collect()
    assert sec.status == "failed" and "permission" in sec.error


def test_error_after_init_still_shuts_down(fake_fs, monkeypatch):
    mod = fake_pynvml(count_error=15)
    install(monkeypatch, mod)
    facts = acc.query_nvml()
    assert "fallen off the bus" in facts.error and mod.state["shutdown"] == 1


def test_hung_nvml_is_bounded(fake_fs, monkeypatch):
    release = threading.Event()
    install(monkeypatch, fake_pynvml(hang=release))
    try:
        facts = acc.query_nvml_bounded(0.2)
    finally:
        release.set()
    assert facts.code == 10 and "no answer" in facts.error


def test_nvidia_smi_fallback_when_nvml_missing_but_driver_present(fake_fs, monkeypatch):
    (fake_fs / "sys_version").write_text("470.256.02\n")
    monkeypatch.setitem(sys.modules, "pynvml", None)
    calls = []

    def fake_run(argv, timeout=5.0, **kw):
        from stackcheck.probe.proc import Completed

        calls.append(argv)
        if any(a.startswith("--query-gpu") for a in argv):
            return Completed(
                0,
                "0, GPU-6f1a, Tesla V100-SXM2-32GB, 32510, 7.0, [N/A]\n"
                "1, GPU-7a2b, Tesla V100-SXM2-32GB, 32510, 7.0, [N/A]\n",
                "",
            )
        return Completed(
            0, "| NVIDIA-SMI 470.256.02   Driver Version: 470.256.02   CUDA Version: 11.4     |\n", ""
        )

    monkeypatch.setattr("stackcheck.probe.proc.run", fake_run)
    sec = acc.collect()
    assert sec.status == "ok" and sec.source == "nvidia-smi"
    assert sec.cuda_driver_version == "11.4"
    assert [(g.index, g.compute_capability, g.mig_mode) for g in sec.gpus] == [
        (0, "7.0", None),
        (1, "7.0", None),
    ]
    assert all(call[0] == "nvidia-smi" for call in calls)


def test_old_nvidia_smi_without_compute_cap_field(fake_fs, monkeypatch):
    from stackcheck.probe.proc import Completed

    calls = []

    def fake_run(argv, timeout=5.0, **kw):
        calls.append(argv)
        query = next((a for a in argv if a.startswith("--query-gpu=")), None)
        if query and "compute_cap" in query:
            return Completed(2, 'Field "compute_cap" is not a valid field to query.\n', "")
        if query:
            return Completed(0, "0, GPU-6f1a, Tesla V100-SXM2-32GB, 32510\n", "")
        return Completed(0, "CUDA Version: 11.4", "")

    monkeypatch.setattr("stackcheck.probe.proc.run", fake_run)
    facts = acc.query_nvidia_smi()
    assert facts.error is None and facts.cuda_driver_version == "11.4"
    assert [(g.name, g.compute_capability, g.memory_total_bytes) for g in facts.gpus] == [
        ("Tesla V100-SXM2-32GB", "", 32510 * 2**20)
    ]
    assert len(calls) == 3


def test_nvidia_smi_failure_is_explained(fake_fs, monkeypatch):
    from stackcheck.probe.proc import Completed

    monkeypatch.setattr(
        "stackcheck.probe.proc.run", lambda *a, **k: Completed(None, "", "", "not found: nvidia-smi")
    )
    assert acc.query_nvidia_smi().error == "nvidia-smi: not found: nvidia-smi"


def test_parse_smi_csv_skips_junk():
    gpus = acc.parse_smi_csv("garbage\n3, GPU-x, NVIDIA A100-SXM4-80GB, 81920, 8.0, Enabled\n, , ,\n")
    assert [(g.index, g.memory_total_bytes, g.mig_mode) for g in gpus] == [(3, 81920 * 2**20, "enabled")]


def test_format_cuda_version():
    assert acc.format_cuda_version(12080) == "12.8"
    assert acc.format_cuda_version(11040) == "11.4"
    assert acc.format_cuda_version(13000) == "13.0"


def _gpus():
    return [
        Gpu(index=0, uuid=H100_UUID),
        Gpu(index=1, uuid=A100_UUID),
        Gpu(index=2, uuid="GPU-ffff0000-1111-2222-3333-444455556666"),
    ]


@pytest.mark.parametrize(
    ("value", "visible"),
    [
        (None, [0, 1, 2]),
        ("", []),
        ("1", [1]),
        ("2,0", [0, 2]),
        ("0,7,2", [0]),  # reading stops at the first invalid entry
        ("-1", []),
        (H100_UUID, [0]),
        ("GPU-0c1d", [1]),  # unique UUID prefix
        ("GPU-", []),
        ("GPU-5b2e,2", [0, 2]),
        ("1,1", [1]),
        ("MIG-abcd", []),
    ],
)
def test_cuda_visible_devices(value, visible):
    gpus = _gpus()
    acc.apply_visible_devices(gpus, value)
    assert [g.index for g in gpus if g.visible] == visible


def test_collect_applies_cuda_visible_devices(fake_fs, monkeypatch):
    install(monkeypatch, fake_pynvml(gpus=[("A", H100_UUID, 1, (9, 0)), ("B", A100_UUID, 1, (8, 0))]))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-0c1d2e3f")
    sec = acc.collect()
    assert sec.cuda_visible_devices == "GPU-0c1d2e3f"
    assert [g.visible for g in sec.gpus] == [False, True]
