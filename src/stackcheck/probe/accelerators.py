"""GPUs and the driver, without creating a CUDA context.

Order of sources, cheapest first: the kernel module's version file (sysfs, then procfs) for
the driver; NVML through nvidia-ml-py (imported lazily, called in a worker thread with a
timeout) for the GPUs and the highest CUDA the driver supports; ``nvidia-smi`` (bounded)
only when NVML is unavailable but a driver is there. Without an NVIDIA device node
(``/dev/nvidia*``, ``/proc/driver/nvidia``, WSL2's ``/dev/dxg``) NVML is not asked at all:
importing nvidia-ml-py alone costs more than the rest of this section. NVML's error codes become sentences a
user can act on. ``CUDA_VISIBLE_DEVICES`` is applied the way the CUDA runtime reads it.
"""

from __future__ import annotations

import os
import threading

from stackcheck.models.snapshot import AcceleratorSection, Gpu
from stackcheck.probe.files import read_small

SYSFS_VERSION = "/sys/module/nvidia/version"
PROCFS_VERSION = "/proc/driver/nvidia/version"
DEV_DIR = "/dev"  # NVIDIA device nodes: /dev/nvidia0 …, /dev/nvidiactl, /dev/nvidia-uvm
PROCFS_DRIVER_DIR = "/proc/driver/nvidia"  # present while the kernel module is loaded
WSL_GPU_NODE = "/dev/dxg"  # WSL2 exposes GPUs through /dev/dxg, with no /dev/nvidia* at all
AMD_KFD = "/dev/kfd"
AMD_SYSFS_VERSION = "/sys/module/amdgpu/version"
NVML_TIMEOUT_S = 5.0
SMI_TIMEOUT_S = 5.0

# NVML return codes (nvml.h) → what they mean for the user.
NVML_EXPLAIN = {
    3: "NVML: not supported on this GPU or driver",
    4: "NVML: no permission to query the GPUs (check /dev/nvidia* permissions or the container's "
    "device access)",
    6: "NVML: GPU not found",
    9: "NVML: the NVIDIA kernel driver is not loaded (is an NVIDIA GPU present? try `sudo modprobe nvidia`)",
    10: "NVML: the driver did not answer in time",
    12: "NVML: libnvidia-ml.so.1 not found (no NVIDIA driver installed, or the container was "
    "started without GPU access)",
    13: "NVML: the driver is too old for this nvidia-ml-py (function not found)",
    15: "NVML: a GPU has fallen off the bus (GPU is lost; a reboot is usually needed)",
    17: "NVML: the operating system refused the request",
    18: "NVML: driver/library version mismatch: the loaded kernel module and libnvidia-ml differ "
    "(the driver was upgraded without a reboot; reboot or reload the nvidia module)",
}
_NO_DRIVER_CODES = (9, 12)  # "there is simply no NVIDIA driver here"


class NvmlFacts:
    """What NVML answered. (A plain class, not a dataclass: importing dataclasses is ≈ 1 ms of
    a warm preflight.)"""

    def __init__(
        self,
        driver_version: str = "",
        cuda_driver_version: str = "",
        gpus: list[Gpu] | None = None,
        error: str | None = None,
        code: int | None = None,
        unavailable: bool = False,
    ):
        self.driver_version = driver_version
        self.cuda_driver_version = cuda_driver_version
        self.gpus: list[Gpu] = [] if gpus is None else gpus
        self.error = error
        self.code = code  # NVML return code of the failure, None for success / non-NVML failures
        # NVML cannot be used at all here (module or library missing, no driver)
        self.unavailable = unavailable


def collect(ctx=None) -> AcceleratorSection:
    looked: list[str] = []
    driver, driver_source = driver_from_files(looked)
    asked = bool(nvidia_device_nodes())
    if asked:
        nvml = query_nvml_bounded(NVML_TIMEOUT_S)
        looked.append("NVML (libnvidia-ml.so.1)" + (f": {nvml.error}" if nvml.error else ""))
    else:
        nvml = NvmlFacts(error="no NVIDIA device node", unavailable=True)
        looked.append(
            f"{os.path.join(DEV_DIR, 'nvidia*')}, {PROCFS_DRIVER_DIR}, {WSL_GPU_NODE}: none, NVML not asked"
        )
    sec = AcceleratorSection(vendor="nvidia", driver_version=driver, driver_source=driver_source)
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    sec.cuda_visible_devices = cvd

    if nvml.error is None:
        sec.status, sec.source = "ok", "nvml"
        sec.gpus, sec.cuda_driver_version = nvml.gpus, nvml.cuda_driver_version
        if not sec.driver_version:
            sec.driver_version, sec.driver_source = nvml.driver_version, "nvml"
    elif driver and nvml.unavailable:
        smi = query_nvidia_smi()
        looked.append("nvidia-smi" + (f": {smi.error}" if smi.error else ""))
        sec.status, sec.source = "ok", "nvidia-smi" if smi.error is None else driver_source
        sec.gpus, sec.cuda_driver_version = smi.gpus, smi.cuda_driver_version
        sec.error = (
            None
            if smi.error is None
            else f"driver {driver} found but no GPU details: {nvml.error}; {smi.error}"
        )
    elif driver:
        sec.status, sec.source, sec.error = "ok", driver_source, nvml.error  # e.g. driver/library mismatch
    elif nvml.unavailable:
        amd = _amd(looked)
        if amd is not None:
            return amd
        source = "sysfs+nvml" if asked else "sysfs+devices"
        return AcceleratorSection(status="absent", source=source, looked_for=looked, cuda_visible_devices=cvd)
    else:
        sec.status, sec.source, sec.error = ("timeout" if nvml.code == 10 else "failed"), "nvml", nvml.error
    apply_visible_devices(sec.gpus, cvd)
    if sec.status != "ok" or not sec.gpus:
        sec.looked_for = looked
    return sec


def driver_from_files(looked: list[str] | None = None) -> tuple[str, str]:
    """The loaded kernel module's version: ("580.82.07", "sysfs") or ("", "")."""
    looked = [] if looked is None else looked
    text = read_small(SYSFS_VERSION)
    looked.append(SYSFS_VERSION)
    if text and text.strip():
        return text.strip(), "sysfs"
    text = read_small(PROCFS_VERSION)
    looked.append(PROCFS_VERSION)
    if text:
        # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024"
        for token in text.split():
            parts = token.split(".")
            if len(parts) >= 2 and all(p.isdigit() for p in parts) and "Kernel Module" in text:
                return token, "procfs"
    return "", ""


def nvidia_device_nodes() -> list[str]:
    """The NVIDIA device nodes here (a few stats and one listing of /dev): without one, NVML
    has nothing to talk to. On Windows, where there are no such nodes, NVML is always asked."""
    if os.name == "nt":
        return ["(windows)"]
    found = [p for p in (PROCFS_DRIVER_DIR, WSL_GPU_NODE) if os.path.exists(p)]
    try:
        names = os.listdir(DEV_DIR)
    except OSError:
        names = []
    return found + sorted(os.path.join(DEV_DIR, n) for n in names if n.startswith("nvidia"))


def query_nvml_bounded(timeout: float) -> NvmlFacts:
    """Run :func:`query_nvml` in a daemon thread; a hung driver cannot hang the snapshot."""
    box: list[NvmlFacts] = []

    def work() -> None:
        try:
            box.append(query_nvml())
        except Exception as exc:  # never let NVML sink the section
            box.append(NvmlFacts(error=f"NVML: {type(exc).__name__}: {exc}"))

    worker = threading.Thread(target=work, name="stackcheck-nvml", daemon=True)
    worker.start()
    worker.join(timeout)
    if not box:
        return NvmlFacts(error=f"NVML: no answer within {timeout:g} s (driver hung?)", code=10)
    return box[0]


def query_nvml() -> NvmlFacts:
    try:
        import pynvml  # nvidia-ml-py; optional
    except ImportError:
        return NvmlFacts(error="nvidia-ml-py not installed", unavailable=True)
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return _nvml_error(exc)
    try:
        facts = NvmlFacts(driver_version=_text(pynvml.nvmlSystemGetDriverVersion()))
        facts.cuda_driver_version = _cuda_version(pynvml)
        for index in range(pynvml.nvmlDeviceGetCount()):
            facts.gpus.append(_gpu(pynvml, index))
        return facts
    except pynvml.NVMLError as exc:
        return _nvml_error(exc)
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _nvml_error(exc) -> NvmlFacts:
    code = getattr(exc, "value", None)
    text = NVML_EXPLAIN.get(code) if isinstance(code, int) else None
    return NvmlFacts(
        error=text or f"NVML error {code}: {exc}", code=code, unavailable=code in _NO_DRIVER_CODES
    )


def _cuda_version(pynvml) -> str:
    getter = (
        getattr(pynvml, "nvmlSystemGetCudaDriverVersion_v2", None) or pynvml.nvmlSystemGetCudaDriverVersion
    )
    return format_cuda_version(int(getter()))


def format_cuda_version(value: int) -> str:
    """NVML/CUDA encode versions as major*1000 + minor*10: 12080 → "12.8"."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def _gpu(pynvml, index: int) -> Gpu:
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    gpu = Gpu(
        index=index,
        name=_text(pynvml.nvmlDeviceGetName(handle)),
        uuid=_text(pynvml.nvmlDeviceGetUUID(handle)),
    )
    gpu.memory_total_bytes = int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
    major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
    gpu.compute_capability = f"{major}.{minor}"
    try:
        current, _pending = pynvml.nvmlDeviceGetMigMode(handle)
        gpu.mig_mode = "enabled" if current else "disabled"
    except pynvml.NVMLError:
        gpu.mig_mode = None  # not a MIG-capable GPU
    return gpu


SMI_FIELDS = ("index", "uuid", "name", "memory.total", "compute_cap", "mig.mode.current")
SMI_FIELDS_OLD = SMI_FIELDS[:4]  # drivers before ~510 reject compute_cap as "not a valid field"


def query_nvidia_smi() -> NvmlFacts:
    """GPU list from ``nvidia-smi`` CSV, and the CUDA version from its banner (bounded calls)."""
    from stackcheck.probe.proc import run

    for fields in (SMI_FIELDS, SMI_FIELDS_OLD):
        done = run(
            ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
            timeout=SMI_TIMEOUT_S,
        )
        if done.ok or "not a valid field" not in (done.stdout + done.stderr):
            break
    if not done.ok:
        return NvmlFacts(
            error="nvidia-smi: "
            + (done.error or (done.stdout.strip() or done.stderr.strip() or "failed").splitlines()[0])
        )
    facts = NvmlFacts(gpus=parse_smi_csv(done.stdout, fields))
    banner = run(["nvidia-smi"], timeout=SMI_TIMEOUT_S)
    facts.cuda_driver_version = parse_smi_cuda_version(banner.stdout)
    return facts


def parse_smi_csv(text: str, fields: tuple[str, ...] = SMI_FIELDS) -> list[Gpu]:
    gpus = []
    for line in text.splitlines():
        cells = dict(zip(fields, (c.strip() for c in line.split(","))))
        if len(cells) < len(fields) or not cells["index"].isdigit():
            continue
        mem, cc, mig = (
            cells["memory.total"],
            cells.get("compute_cap", ""),
            cells.get("mig.mode.current", "").lower(),
        )
        gpus.append(
            Gpu(
                index=int(cells["index"]),
                uuid=cells["uuid"],
                name=cells["name"],
                memory_total_bytes=int(mem) * 1024 * 1024 if mem.isdigit() else None,
                compute_capability=cc if cc[:1].isdigit() else "",
                mig_mode=mig if mig in ("enabled", "disabled") else None,
            )
        )
    return gpus


def parse_smi_cuda_version(text: str) -> str:
    marker = "CUDA Version:"
    pos = text.find(marker)
    if pos < 0:
        return ""
    words = text[pos + len(marker) :].split()
    return words[0] if words and words[0][:1].isdigit() else ""


def apply_visible_devices(gpus: list[Gpu], value: str | None) -> None:
    """Mark ``visible`` as the CUDA runtime would: entries are indices or (prefixes of) GPU
    UUIDs, read in order until the first one that matches no GPU; an empty value hides all.
    MIG-… entries select a MIG instance of a GPU we cannot map, so reading stops there too."""
    if value is None:
        return
    chosen: set[int] = set()
    for token in (t.strip() for t in value.split(",")):
        match = _match_device(gpus, token)
        if match is None or match in chosen:
            break
        chosen.add(match)
    for gpu in gpus:
        gpu.visible = gpu.index in chosen


def _match_device(gpus: list[Gpu], token: str) -> int | None:
    if token.lstrip("+").isdigit():
        index = int(token)
        return index if any(g.index == index for g in gpus) else None
    if token.startswith("GPU-") and len(token) > 4:
        hits = [g.index for g in gpus if g.uuid.lower().startswith(token.lower())]
        return hits[0] if len(hits) == 1 else None
    return None


def _amd(looked: list[str]) -> AcceleratorSection | None:
    looked.append(AMD_KFD + " (ROCm)")
    if not os.path.exists(AMD_KFD):
        return None
    version = read_small(AMD_SYSFS_VERSION).strip()
    return AcceleratorSection(
        status="ok",
        source="sysfs",
        vendor="amd",
        driver_version=version,
        driver_source="sysfs" if version else "",
        error="AMD GPU present (/dev/kfd); per-GPU details are not probed",
        looked_for=looked,
    )


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
