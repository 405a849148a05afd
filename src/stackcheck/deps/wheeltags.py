"""Does an installed wheel's tag fit the checked interpreter and platform?

Judged from snapshot facts (version, implementation, SOABI, platform tag, libc), not from the
interpreter running stackcheck, so a recorded snapshot gives its own answer. The answer is
``False`` only when a tag is certainly foreign (another CPython ABI, another OS or CPU, a
newer glibc than the machine has); anything unknown counts as fitting.
"""

from __future__ import annotations

import re

from packaging.tags import Tag, parse_tag

from stackcheck.models.snapshot import Snapshot
from stackcheck.versions import major_minor

_ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "i386": "i686", "x86": "i686"}
_MANYLINUX_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
_PLATFORM = re.compile(r"^(?P<os>manylinux|musllinux|linux|macosx|win)(?:_(?P<ver>\d+_\d+))?_?(?P<arch>.*)$")


def _arch(name: str) -> str:
    name = name.lower()
    return _ARCH_ALIASES.get(name, name)


class Target:
    """The interpreter/platform facts a wheel tag is judged against."""

    def __init__(self, snapshot: Snapshot):
        py = snapshot.python
        plat = snapshot.platform
        self.major_minor = major_minor(py.version)
        self.impl = (py.implementation or "").lower()
        m = re.match(r"cpython-(\d+)(t?)", py.soabi or "")
        self.cp_abi = f"cp{m.group(1)}{m.group(2)}" if m else None
        tag = (py.platform_tag or "").lower()
        self.os = (
            plat.system or {"linux": "Linux", "macosx": "Darwin", "win": "Windows"}.get(tag.split("-")[0], "")
        ).lower()
        self.arch = _arch(plat.machine or (tag.rsplit("-", 1)[-1] if "-" in tag else ""))
        self.libc = plat.libc_family
        lv = re.match(r"(\d{1,6})\.(\d{1,6})", plat.libc_version or "")
        self.libc_version = (int(lv.group(1)), int(lv.group(2))) if lv else None

    def interpreter_fits(self, tag: Tag) -> bool:
        m = re.match(r"^(py|cp|pp)(\d)(\d*)$", tag.interpreter)
        if not m or self.major_minor is None:
            return True
        kind, major, minor = m.group(1), int(m.group(2)), m.group(3)
        if major != self.major_minor[0]:
            return False
        if kind == "cp" and self.impl not in ("", "cpython"):
            return tag.abi == "none"
        if kind == "pp" and self.impl not in ("", "pypy"):
            return False
        if not minor:
            return True
        if kind == "cp" and tag.abi not in ("none", "abi3"):
            return int(minor) == self.major_minor[1]
        return int(minor) <= self.major_minor[1]

    def abi_fits(self, tag: Tag) -> bool:
        if tag.abi in ("none", "abi3") or not tag.abi.startswith("cp") or self.cp_abi is None:
            return True
        return tag.abi.rstrip("dmu") == self.cp_abi or tag.abi == self.cp_abi

    def platform_fits(self, tag: Tag) -> bool:
        if tag.platform == "any" or not self.os:
            return True
        m = _PLATFORM.match(tag.platform)
        if not m:
            return True
        os_name, ver, arch = m.group("os"), m.group("ver"), m.group("arch")
        if os_name in ("manylinux", "musllinux", "linux"):
            if self.os != "linux":
                return False
            legacy = _MANYLINUX_LEGACY.get(tag.platform.split("_")[0])
            if legacy:
                os_name, ver, arch = "manylinux", "%d_%d" % legacy, tag.platform.split("_", 1)[1]
            if (
                os_name == "manylinux"
                and self.libc == "musl"
                or os_name == "musllinux"
                and self.libc == "glibc"
            ):
                return False
            if os_name == "manylinux" and ver and self.libc_version and self.libc == "glibc":
                need = tuple(int(x) for x in ver.split("_"))
                if need > self.libc_version:
                    return False
        elif os_name == "macosx":
            if self.os != "darwin":
                return False
            if arch in ("universal2", "universal", "intel", "fat", "fat3", "fat64"):
                return True
        elif os_name == "win":
            if self.os != "windows":
                return False
            arch = "i686" if tag.platform == "win32" else arch
        if not self.arch or not arch:
            return True
        return _arch(arch) == self.arch

    def fits(self, tag: Tag) -> bool:
        return self.interpreter_fits(tag) and self.abi_fits(tag) and self.platform_fits(tag)


def wheel_fits(tags: list[str], target: Target) -> bool | None:
    """Whether any of a wheel's ``Tag:`` lines fits; ``None`` when it has no readable tag."""
    parsed: list[Tag] = []
    for text in tags:
        try:
            parsed.extend(parse_tag(text.strip()))
        except ValueError:
            continue
    if not parsed:
        return None
    return any(target.fits(t) for t in parsed)
