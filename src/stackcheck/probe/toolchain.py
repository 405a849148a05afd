"""The system CUDA toolkit (nvcc) and the C compiler: what source builds of extensions use.

torch wheels bring their own CUDA runtime, so nvcc only matters when compiling (flash-attn,
DeepSpeed ops, vLLM from source) — the note says so. The toolkit's version is read from its
``version.json`` / ``version.txt`` when present; ``nvcc --version`` runs only otherwise.
What a compiler says about its version is kept in the probe's cache directory, keyed by the
compiler binary's resolved path, mtime and size, so ``gcc -dumpfullversion`` runs once per
installed compiler, not once per probe (wrapper scripts and ccache-style launchers, whose
file does not change when the compiler behind them does, are asked every time).
"""

from __future__ import annotations

import json
import os
import re
import sys

from stackcheck.models.snapshot import Tool, ToolchainSection
from stackcheck.probe.files import which

NVCC_NOTE = "system CUDA toolkit; torch uses its own bundled runtime"
TOOL_TIMEOUT_S = 5.0
_NVCC_RELEASE = re.compile(r"release\s+[\d.]+,\s+V([\d.]+)")
CACHE_FILE = "toolchain.json"
CACHE_ENTRIES = 64  # compilers remembered at most (oldest dropped)
CACHE_KEY = "compiler versions by binary stat"  # entries are keyed one by one
_COMPILER_NAME = re.compile(r"(^|[-_])(gcc|nvcc)([-_.]?[\d.]*)?(\.exe)?$")


def collect(ctx=None) -> ToolchainSection:
    nvcc = find_nvcc(os.environ)
    gcc = find_gcc()
    found = nvcc is not None or gcc is not None
    return ToolchainSection(status="ok" if found else "absent", source="files+subprocess", nvcc=nvcc, gcc=gcc)


def find_nvcc(env) -> Tool | None:
    exe = "nvcc.exe" if os.name == "nt" else "nvcc"
    path = which(exe, path=env.get("PATH", ""))
    if path is None:
        for var in ("CUDA_HOME", "CUDA_PATH"):
            root = env.get(var)
            cand = os.path.join(root, "bin", exe) if root else ""
            if cand and os.path.isfile(cand):
                path = cand
                break
    if path is None:
        return None
    real = _exec_target(os.path.realpath(path))
    root = os.path.dirname(os.path.dirname(real))
    version = toolkit_version(root) or _nvcc_version(path)
    return Tool(path=path, version=version, note=NVCC_NOTE)


def _exec_target(path: str) -> str:
    """The nvcc a small ``exec /opt/cuda/bin/nvcc "$@"`` wrapper script runs, else ``path``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return path
    if not head.startswith(b"#!"):
        return path
    match = re.search(rb"exec\s+['\"]?(/[^\s'\"]+/nvcc)\b", head)
    return os.path.realpath(match.group(1).decode("utf-8", "replace")) if match else path


def toolkit_version(root: str) -> str:
    """ "12.8.93" from <root>/version.json (CUDA ≥ 11.1), "11.0.228" from version.txt, or the
    nvidia-cuda-nvcc wheel's dist-info name when the toolkit was assembled from pip wheels."""
    try:
        with open(os.path.join(root, "version.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        for key in ("cuda_nvcc", "cuda"):
            version = (data.get(key) or {}).get("version") if isinstance(data, dict) else None
            if isinstance(version, str) and version:
                return version
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(root, "version.txt"), encoding="utf-8") as fh:
            words = fh.read(200).split()  # "CUDA Version 11.0.228"
        if words and words[-1][:1].isdigit():
            return words[-1]
    except OSError:
        pass
    return _nvcc_wheel_version(root)


def _nvcc_wheel_version(root: str) -> str:
    for where in (os.path.join(root, "dist-info"), os.path.dirname(os.path.dirname(root))):
        try:
            names = os.listdir(where)
        except OSError:
            continue
        for name in names:
            if name.lower().startswith("nvidia_cuda_nvcc") and name.endswith(".dist-info"):
                return name[: -len(".dist-info")].rpartition("-")[2]
    return ""


def _nvcc_version(path: str) -> str:
    def ask() -> tuple[str, str]:
        from stackcheck.probe.proc import run

        done = run([path, "--version"], timeout=TOOL_TIMEOUT_S)
        match = _NVCC_RELEASE.search(done.stdout)
        return (match.group(1), "") if match else ("", "nvcc --version: no release number")

    return cached_version(path, "--version", ask)[0]


def find_gcc() -> Tool | None:
    path = which("gcc")
    if path is None:
        return None

    def ask() -> tuple[str, str]:
        from stackcheck.probe.proc import run

        done = run([path, "-dumpfullversion", "-dumpversion"], timeout=TOOL_TIMEOUT_S)
        version = done.stdout.strip().splitlines()[0] if done.ok and done.stdout.strip() else ""
        return version, "" if version else (done.error or "gcc -dumpfullversion failed")

    version, note = cached_version(path, "-dumpfullversion", ask)
    return Tool(path=path, version=version, note=note)


def cached_version(path: str, question: str, ask) -> tuple[str, str]:
    """``ask()`` → (version, note), answered from the cache while the binary that ``path``
    resolves to keeps its mtime and size. Only answers with a version are kept (a timeout
    is asked again next time)."""
    from stackcheck import factcache
    from stackcheck.cachedir import cache_root

    key = _cache_key(path, question)
    root = cache_root() if key else None
    found = factcache.load(root, CACHE_FILE, CACHE_KEY)
    entries = dict(found) if isinstance(found, dict) else {}
    hit = entries.get(key) if key else None
    if isinstance(hit, list) and len(hit) == 2 and all(isinstance(x, str) for x in hit):
        return hit[0], hit[1]
    version, note = ask()
    if key and version:
        entries.pop(key, None)
        entries[key] = [version, note]
        factcache.store(root, CACHE_FILE, CACHE_KEY, dict(list(entries.items())[-CACHE_ENTRIES:]))
    return version, note


def _cache_key(path: str, question: str) -> str | None:
    """ "<resolved path>|<mtime ns>|<size>|<question>", or None where the file does not say
    which compiler runs: not found, a script (``#!``), a launcher not named like the compiler
    (ccache), macOS's /usr/bin shims (they run whatever Xcode is selected)."""
    real = os.path.realpath(path)
    if sys.platform == "darwin" and real.startswith("/usr/bin/"):
        return None
    try:
        st = os.stat(real)
        with open(real, "rb") as fh:
            script = fh.read(2) == b"#!"
    except OSError:
        return None
    if script or not _COMPILER_NAME.search(os.path.basename(real)):
        return None
    return f"{real}|{st.st_mtime_ns}|{st.st_size}|{question}"
