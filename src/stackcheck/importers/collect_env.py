"""A pasted ``python -m torch.utils.collect_env`` output → Snapshot.

Bug reports carry collect_env, not stackcheck snapshots; importing it lets every check run
on a colleague's or an issue author's machine. Every section built here says
``source: "collect_env"``; what the text does not say (kernels, git, hosted platform, env
vars, most packages — collect_env lists only torch-related ones) is ``absent``. Handles the
torch 1.x and 2.x layouts, ``Key: value`` and vLLM's padded ``Key   : value`` forms,
indented or ``>``-quoted pastes, and "Could not collect" / "N/A" / "No CUDA" placeholders.
"""

from __future__ import annotations

import re

from stackcheck.errors import InputError
from stackcheck.models import snapshot as S

SOURCE = "collect_env"
_HEADER = re.compile(r"^(?P<prefix>[\s>]*)PyTorch version\s*:")
_KEY_VALUE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9_ ()./-]*?)\s*:\s?(?P<value>.*)$")
_LIB = re.compile(r"^\[(?P<tool>pip3?|conda)\]\s+(?P<rest>.*)$")
_GPU = re.compile(r"^GPU (?P<index>[0-9]{1,6}):\s*(?P<name>.*?)(?:\s*\(UUID:.*\))?\s*$")
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)+")
_PLACEHOLDERS = {"", "n/a", "none", "could not collect", "no cuda", "unknown"}
_END_MARKERS = ("```", "Traceback", "## ", "### ", "</details>", "<details>")


def parse_collect_env(text: str, source: str = "<text>") -> S.Snapshot:
    """Parse one collect_env output (embedded in a longer paste is fine)."""
    if not isinstance(text, str):
        raise InputError(f"{source}: not a collect_env output: expected text")
    block = find_collect_env_block(text)
    if block is None:
        raise InputError(f"{source}: not a collect_env output: no 'PyTorch version:' line")
    fields, gpu_lines, libs, cpu = _split(block)
    snap = S.Snapshot(tool=S.ToolInfo(command="collect_env"))
    for name in ("hosted", "kernels", "env", "git"):
        section = getattr(snap, name)
        section.status, section.source, section.error = "absent", SOURCE, "not part of a collect_env output"
    snap.python = _python(fields)
    snap.torch = _torch(fields, gpu_lines)
    snap.packages = _packages(libs, snap.torch)
    snap.platform = _platform(fields, cpu)
    snap.accelerators = _accelerators(fields, gpu_lines)
    _driver_cuda_from_warning(text, snap.accelerators)
    if snap.accelerators.status == "ok" and not snap.accelerators.gpus:
        # a driver without GPU lines: torch could not enumerate them (too old a driver, CUDA
        # failed to initialise), which says nothing about whether GPUs are there
        said = fields.get("GPU models and configuration")
        if said is None:
            said = "no 'GPU models and configuration' line"
        else:
            said = f"GPU models and configuration: {said.strip() or '(empty)'}"
        snap.accelerators.error = f"the collect_env output lists no GPU ({said})"
    snap.toolchain = _toolchain(fields)
    return snap


_DRIVER_TOO_OLD = re.compile(r"driver on your system is too old \(found version (\d{4,6})\)")


def _driver_cuda_from_warning(text: str, acc: S.AcceleratorSection) -> None:
    """torch's "driver … too old (found version 11040)" warning states the CUDA version the
    driver supports (major*1000 + minor*10): a fact the collect_env fields may lack."""
    m = _DRIVER_TOO_OLD.search(text)
    if m is None or acc.cuda_driver_version:
        return
    n = int(m.group(1))
    acc.cuda_driver_version = f"{n // 1000}.{(n % 1000) // 10}"
    if acc.status == "absent":
        acc.status, acc.vendor, acc.looked_for = "ok", "nvidia", []


def find_collect_env_block(text: str) -> str | None:
    """The collect_env block inside ``text``, de-indented, or None. It starts at the
    "PyTorch version:" line and ends after the package lines, or at a markdown fence,
    heading or traceback that follows it."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = prefix = None
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m:
            start, prefix = i, m.group("prefix")
            break
    if start is None:
        return None
    out: list[str] = []
    in_libs = False
    for raw in lines[start:]:
        if prefix and raw.strip() and not raw.startswith(prefix) and raw.lstrip(" \t>") == raw.lstrip(" \t"):
            break  # the indented or quoted paste is over
        line = _strip_prefix(raw, prefix)
        stripped = line.strip()
        if out and stripped.startswith(_END_MARKERS):
            break
        if in_libs:
            if not _LIB.match(stripped):
                break
        elif stripped.startswith("Versions of relevant libraries"):
            in_libs = True
        elif not _belongs(stripped, out[-1].strip() if out else ""):
            break
        out.append(line.rstrip())
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def _belongs(stripped: str, previous: str) -> bool:
    """Could this line be part of a collect_env output? (prose after the block is not)"""
    if not stripped or _KEY_VALUE.match(stripped) or _is_banner(stripped) or _is_banner(previous):
        return True
    return stripped.startswith(("GPU ", "MIG ", "/", "C:\\", "[pip", "[conda]", "Collecting environment"))


def _is_banner(stripped: str) -> bool:
    return bool(stripped) and set(stripped) <= set("=-")


def _strip_prefix(line: str, prefix: str | None) -> str:
    """Remove the paste's indentation / quote marker (a shorter-indented line loses what it has)."""
    if not prefix or line.startswith(prefix):
        return line[len(prefix or "") :]
    return line.lstrip(" \t>")


def _split(block: str):
    """(key → value, GPU lines, package lines, CPU key → value)."""
    fields: dict[str, str] = {}
    gpu_lines: list[str] = []
    libs: list[tuple[str, str]] = []
    cpu: dict[str, str] = {}
    mode = ""
    for line in block.split("\n"):
        stripped = line.strip()
        lib = _LIB.match(stripped)
        if lib:
            libs.append((lib.group("tool"), lib.group("rest").strip()))
            continue
        if not stripped or _is_banner(stripped):
            mode = ""
            continue
        if mode == "gpu" and (stripped.startswith(("GPU ", "MIG ")) or line.startswith(" ")):
            gpu_lines.append(stripped)
            continue
        if mode == "cudnn" and stripped.startswith(("/", "C:\\")):
            continue
        m = _KEY_VALUE.match(stripped)
        if not m:
            continue
        key, value = m.group("key").strip(), m.group("value").strip()
        if key == "CPU" and not value:
            mode = "cpu"
            continue
        if mode == "cpu" and key not in _KNOWN_KEYS:
            cpu.setdefault(key, value)
            continue
        mode = ""
        fields.setdefault(key, value)
        if key == "GPU models and configuration":
            mode = "gpu"
            if value:
                gpu_lines.append(value)
        elif key == "cuDNN version" and value.startswith("Probably"):
            mode = "cudnn"
    return fields, gpu_lines, libs, cpu


_KNOWN_KEYS = {
    "PyTorch version",
    "Is debug build",
    "CUDA used to build PyTorch",
    "ROCM used to build PyTorch",
    "OS",
    "GCC version",
    "Clang version",
    "CMake version",
    "Libc version",
    "Python version",
    "Python platform",
    "Is CUDA available",
    "CUDA runtime version",
    "CUDA_MODULE_LOADING set to",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "HIP runtime version",
    "MIOpen runtime version",
    "Is XNNPACK available",
    "Is XPU available",
    "Versions of relevant libraries",
    "vLLM Version",
}


def _value(fields: dict[str, str], key: str) -> str | None:
    """A field's value, None when missing or a placeholder ("Could not collect", "N/A" …)."""
    value = fields.get(key)
    if value is None or value.strip().lower() in _PLACEHOLDERS:
        return None
    return value.strip()


def _python(fields) -> S.PythonSection:
    raw = _value(fields, "Python version")
    if raw is None:
        return S.PythonSection(status="absent", source=SOURCE, error="no 'Python version:' line")
    match = _VERSION.match(raw)
    implementation = "CPython" if "[GCC" in raw or "[MSC" in raw or "[Clang" in raw else ""
    return S.PythonSection(
        status="ok",
        source=SOURCE,
        version=match.group(0) if match else raw.split()[0],
        implementation=implementation,
    )


def _torch(fields, gpu_lines) -> S.TorchSection:
    version = _value(fields, "PyTorch version")
    if version is None:
        return S.TorchSection(
            status="absent",
            source=SOURCE,
            error=f"PyTorch version: {fields.get('PyTorch version', '').strip() or 'empty'}",
        )
    sec = S.TorchSection(status="ok", source=SOURCE, version=version.split()[0])
    sec.cuda = _value(fields, "CUDA used to build PyTorch")
    sec.hip = _value(fields, "ROCM used to build PyTorch")
    available = (fields.get("Is CUDA available") or "").strip().lower()
    if available in ("true", "yes", "false", "no"):
        sec.deep = True  # collect_env imported torch to say this
        sec.cuda_available = available in ("true", "yes")
        if sec.cuda_available:
            sec.device_count = sum(1 for g in gpu_lines if _GPU.match(g)) or None
    return sec


def _packages(libs, torch: S.TorchSection) -> S.PackagesSection:
    dists: dict[str, S.Distribution] = {}
    for tool, rest in libs:
        if rest.lower().startswith("could not collect"):
            continue
        if tool.startswith("pip"):
            name, sep, version = rest.partition("==")
            if not sep:
                continue
            key = S.normalize_name(name.strip())
            dists[key] = S.Distribution(
                name=name.strip(), version=version.strip(), location="", installer="pip"
            )
        else:
            parts = rest.split()
            if len(parts) < 2:
                continue
            name = "torch" if parts[0] == "pytorch" else parts[0]
            key = S.normalize_name(name)
            if key not in dists:  # pip's view wins: it is what Python imports
                dists[key] = S.Distribution(name=name, version=parts[1], location="", installer="conda")
    if torch.status == "ok" and "torch" not in dists:
        dists["torch"] = S.Distribution(name="torch", version=torch.version, location="")
    elif torch.status == "ok" and dists["torch"].version != torch.version:
        # conda/pip listings can disagree with the imported torch (see pytorch#28321): trust the import
        dists["torch"].problems = [
            f"listed as {dists['torch'].version}, but torch imports as {torch.version}"
        ]
        dists["torch"].version = torch.version
    if not dists:
        return S.PackagesSection(status="absent", source=SOURCE, error="no package lines")
    return S.PackagesSection(status="ok", source=SOURCE, distributions=list(dists.values()))


_MACHINES = ("x86_64", "aarch64", "arm64", "AMD64", "ppc64le", "s390x", "armv7l", "i686")


def _platform(fields, cpu) -> S.PlatformSection:
    os_line = _value(fields, "OS")
    plat = _value(fields, "Python platform") or ""
    if os_line is None and not plat:
        return S.PlatformSection(status="absent", source=SOURCE, error="no 'OS:' line")
    sec = S.PlatformSection(status="ok", source=SOURCE)
    name = os_line or ""
    arch = re.search(r"\((%s)\)\s*$" % "|".join(_MACHINES), name)
    if arch:
        sec.machine = arch.group(1)
        name = name[: arch.start()].strip()
    sec.distro_name = name
    lower = name.lower()
    if lower.startswith(("mac", "macos")) or plat.startswith(("Darwin", "macOS")):
        sec.system, sec.distro_id = "Darwin", "macos"
    elif lower.startswith("microsoft windows") or plat.startswith("Windows"):
        sec.system, sec.distro_id = "Windows", "windows"
    elif name or plat.startswith("Linux"):
        sec.system = "Linux"
        sec.distro_id = (lower.split() or [""])[0]
    version = _VERSION.search(name) or re.search(r"\b[0-9]+\b", name)
    sec.distro_version = version.group(0) if version else ""
    libc = _value(fields, "Libc version")
    if libc and "-" in libc:
        sec.libc_family, _, sec.libc_version = libc.partition("-")
    if plat.startswith("Linux-"):
        rest = plat[len("Linux-") :]
        for machine in _MACHINES:
            cut = rest.find(f"-{machine}")
            if cut > 0:
                sec.kernel, sec.machine = rest[:cut], sec.machine or machine
                break
    sec.cpu_model = cpu.get("Model name") or cpu.get("Name") or ""
    count = cpu.get("CPU(s)") or ""
    sec.cpu_count = int(count) if count.isascii() and count.isdigit() and len(count) < 7 else None
    return sec


def _accelerators(fields, gpu_lines) -> S.AcceleratorSection:
    driver_raw = _value(fields, "Nvidia driver version")
    driver = driver_raw if driver_raw and _VERSION.fullmatch(driver_raw) else ""
    gpus: list[S.Gpu] = []
    for line in gpu_lines:
        m = _GPU.match(line)
        if m:
            gpus.append(S.Gpu(index=int(m.group("index")), name=m.group("name")))
        elif line.startswith("MIG ") and gpus:
            gpus[-1].mig_mode = "enabled"
        elif not gpus and line.strip().lower() not in _PLACEHOLDERS:
            gpus.append(S.Gpu(index=0, name=line.strip()))  # single-GPU form without "GPU 0:"
    if not driver and not gpus:
        said = fields.get("Nvidia driver version", "(no line)").strip() or "(empty)"
        return S.AcceleratorSection(
            status="absent",
            source=SOURCE,
            looked_for=[
                f"collect_env: Nvidia driver version: {said}",
                "collect_env: GPU models and configuration: "
                f"{fields.get('GPU models and configuration', '(no line)').strip() or '(list)'}",
            ],
        )
    hip = _value(fields, "ROCM used to build PyTorch")
    vendor = "nvidia" if driver or not hip else "amd"
    return S.AcceleratorSection(
        status="ok",
        source=SOURCE,
        vendor=vendor,
        driver_version=driver,
        driver_source=SOURCE if driver else "",
        gpus=gpus,
    )


def _toolchain(fields) -> S.ToolchainSection:
    nvcc_version = _value(fields, "CUDA runtime version")  # collect_env runs `nvcc --version` for this
    gcc_raw = _value(fields, "GCC version")
    nvcc = (
        S.Tool(version=nvcc_version, note="system CUDA toolkit; torch uses its own bundled runtime")
        if nvcc_version and _VERSION.fullmatch(nvcc_version)
        else None
    )
    gcc = None
    if gcc_raw:
        versions = _VERSION.findall(gcc_raw.split(")")[-1]) or _VERSION.findall(gcc_raw)
        gcc = S.Tool(version=versions[0] if versions else "", note=gcc_raw)
    if nvcc is None and gcc is None:
        return S.ToolchainSection(status="absent", source=SOURCE)
    return S.ToolchainSection(status="ok", source=SOURCE, nvcc=nvcc, gcc=gcc)
