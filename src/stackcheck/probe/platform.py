"""Operating system, libc, CPU and memory: the platform section.

File reads only (os-release, /proc, statvfs, resource); the one exception is ``sysctl`` on
macOS, which has no /proc. Every fact is optional: what a system does not expose stays empty.
"""

from __future__ import annotations

import os
import platform as _platform
import sys

from stackcheck.models.snapshot import PlatformSection

# Paths are module attributes so tests can point them at a fake filesystem.
OS_RELEASE = ("/etc/os-release", "/usr/lib/os-release")
CPUINFO = "/proc/cpuinfo"
MEMINFO = "/proc/meminfo"
SHM_DIR = "/dev/shm"
MUSL_LOADER_DIRS = ("/lib", "/usr/lib")


def collect(ctx=None) -> PlatformSection:
    system = _platform.system()
    sec = PlatformSection(
        status="ok", source="os", system=system, kernel=_platform.release(), machine=_platform.machine()
    )
    sec.cpu_count = os.cpu_count()
    if system == "Linux":
        sec.source = "os-release+procfs"
        release = read_os_release()
        sec.distro_id = release.get("ID", "")
        sec.distro_version = release.get("VERSION_ID", "")
        sec.distro_name = release.get("PRETTY_NAME", "")
        sec.libc_family, sec.libc_version = libc()
        sec.cpu_model = _cpuinfo_model()
        sec.memory_total_bytes = _meminfo_total()
        sec.shm_total_bytes = _statvfs_total(SHM_DIR)
    elif system == "Darwin":
        sec.source = "platform+sysctl"
        sec.distro_id, sec.distro_version, sec.distro_name = (
            "macos",
            _platform.mac_ver()[0],
            f"macOS {_platform.mac_ver()[0]}".strip(),
        )
        sec.cpu_model = _sysctl("machdep.cpu.brand_string")
        mem = _sysctl("hw.memsize")
        sec.memory_total_bytes = int(mem) if mem.isdigit() else None
    elif system == "Windows":
        sec.source = "platform"
        sec.distro_id, sec.distro_version, sec.distro_name = (
            "windows",
            _platform.version(),
            f"Windows {_platform.release()}",
        )
        sec.cpu_model = _platform.processor()
        sec.memory_total_bytes = _windows_memory()
    sec.open_files_limit = _open_files_limit()
    return sec


def read_os_release(paths=None) -> dict[str, str]:
    """KEY=value pairs of the first readable os-release file (quotes removed)."""
    for path in paths or OS_RELEASE:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        out = {}
        for line in text.splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and key and not key.startswith("#"):
                out[key] = value.strip().strip("\"'")
        return out
    return {}


def libc() -> tuple[str, str]:
    """("glibc", "2.39") / ("musl", "1.2.4") / ("", "") — without running ldd."""
    try:
        gnu = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.39"
    except (AttributeError, ValueError, OSError):
        gnu = None
    if gnu and gnu.startswith("glibc "):
        return "glibc", gnu.split()[1]
    name, version = _platform.libc_ver()
    if name == "glibc":
        return "glibc", version
    musl = _musl_version()
    if musl is not None:
        return "musl", musl
    return "", ""


def _musl_version() -> str | None:
    """musl's loader is /lib/ld-musl-<arch>.so.1; its version is only printed by running it,
    so the family is certain and the version stays empty."""
    for directory in MUSL_LOADER_DIRS:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        if any(n.startswith("ld-musl-") for n in names):
            return ""
    return None


def _cpuinfo_model() -> str:
    try:
        with open(CPUINFO, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, sep, value = line.partition(":")
                if sep and key.strip() in ("model name", "Model", "Hardware", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return _platform.processor()


def _meminfo_total() -> int | None:
    try:
        with open(MEMINFO, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    parts = line.split()
                    return int(parts[1]) * 1024 if len(parts) >= 2 and parts[1].isdigit() else None
    except OSError:
        pass
    return None


def _statvfs_total(path: str) -> int | None:
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return st.f_frsize * st.f_blocks


def _open_files_limit() -> int | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def _sysctl(name: str) -> str:
    from stackcheck.probe.proc import run

    done = run(["sysctl", "-n", name], timeout=2.0)
    return done.stdout.strip() if done.ok else ""


def _windows_memory() -> int | None:
    if sys.platform != "win32":
        return None
    import ctypes

    class MemoryStatus(ctypes.Structure):
        _fields_ = [
            ("dwLength", ctypes.c_ulong),
            ("dwMemoryLoad", ctypes.c_ulong),
            ("ullTotalPhys", ctypes.c_ulonglong),
        ] + [(f"_f{i}", ctypes.c_ulonglong) for i in range(6)]

    status = MemoryStatus()
    status.dwLength = ctypes.sizeof(MemoryStatus)
    if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
        return int(status.ullTotalPhys)
    return None
