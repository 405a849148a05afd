"""Naming the culprit from the text: interpreters for the named groups of the family rules
(``knowledge/data/rules/families.json``) and of the long-tail rules.

A family rule matches a whole kind of failure (any undefined symbol, any GLIBCXX not found,
any resolver conflict); what makes its answer useful is what the text itself says is at
fault: the shared library and the package that owns it, the runtime library and the version
it lacks, the conflicting pair, the full path, the segment size. Each interpreter turns its
groups into evidence, a culprit and, where the text says enough, a specific fix.
"""

from __future__ import annotations

import posixpath
import re

from stackcheck.models.snapshot import Snapshot
from stackcheck.shellcmd import code, command
from stackcheck.triage.evidence import Reading, distribution_for, human, interprets

__all__ = ["package_of_path", "symbol_owner"]

_SITE = re.compile(r"[/\\](?:site|dist)-packages[/\\]")
_EXTENSION = re.compile(r"(?:\.(?:cpython-[\w-]+|abi3|cp\d+-[\w-]+))?\.(?:so|pyd|dylib)(?:\.[\d.]+)?$")
_NVIDIA_LIB = re.compile(r"lib\w+\.so\.(?P<major>\d+)")


def package_of_path(path: str) -> str | None:
    """The distribution a file under site-packages belongs to, from its path alone:
    ``…/site-packages/torch/lib/libtorch_cpu.so`` → torch, ``…/nvidia/cusparse/lib/libcusparse.so.12``
    → nvidia-cusparse-cu12, ``…/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so`` → flash-attn;
    None for a file outside site-packages (a source tree, a system library)."""
    norm = posixpath.normpath(path.replace("\\", "/"))
    found = list(_SITE.finditer(norm))
    if not found:
        return None
    parts = [p for p in norm[found[-1].end() :].split("/") if p]
    if not parts:
        return None
    if parts[0] == "nvidia" and len(parts) > 1:
        m = _NVIDIA_LIB.search(parts[-1])
        return f"nvidia-{parts[1]}-cu{m.group('major')}" if m else f"nvidia-{parts[1]}"
    top = _EXTENSION.sub("", parts[0]) if len(parts) == 1 else parts[0]
    return distribution_for(top, None)[0]


# the first name of a mangled C++ symbol (_ZN3c10…, _ZNK5torch…, _ZTIN2at…) and C prefixes, → owner
_MANGLED = re.compile(r"^_Z(?:T[ISV])?N?[KVr]*(?P<length>\d{1,3})")
_TORCH_NAMESPACES = {
    "c10": "torch (its c10 core library)",
    "at": "torch (ATen)",
    "torch": "torch",
    "caffe2": "torch",
    "thpp": "torch (its old TH libraries)",
}
_C_PREFIXES = (
    (re.compile(r"^_{0,2}nvJitLink\w*?_(?P<major>\d+)_(?P<minor>\d+)$"), "nvJitLink"),
    (re.compile(r"^_?(?:THNN|THCUNN|THC|TH)[A-Z_]"), "torch (its old TH libraries)"),
    (re.compile(r"^_?torch_"), "torch"),
    (re.compile(r"^_?Py[A-Z_]"), "the Python C API"),
    (re.compile(r"^_?(?:cudnn)"), "cuDNN"),
    (re.compile(r"^_?(?:cublas)"), "cuBLAS"),
    (re.compile(r"^_?(?:nccl)"), "NCCL"),
)


def symbol_owner(symbol: str) -> tuple[str, str]:
    """(the library a missing symbol belongs to, a pip package that provides it or "")."""
    m = _MANGLED.match(symbol)
    if m:
        length = int(m.group("length"))
        name = symbol[m.end() : m.end() + length]
        if name in _TORCH_NAMESPACES:
            return _TORCH_NAMESPACES[name], "torch"
        if name.startswith("TH"):
            return "torch (its old TH libraries)", "torch"
        return name, ""
    for pattern, owner in _C_PREFIXES:
        found = pattern.match(symbol)
        if found and owner == "nvJitLink":
            major, minor = found.group("major"), found.group("minor")
            return f"nvJitLink {major}.{minor}", f"nvidia-nvjitlink-cu{major}>={major}.{minor}"
        if found:
            return owner, "torch" if owner.startswith("torch") else ""
    return "", ""


@interprets("so", "symbol", "symbol_version")
def _undefined_symbol(
    groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading
) -> None:
    so, symbol = groups.get("so", ""), groups.get("symbol", "")
    package = package_of_path(so) if so else None
    owner, provider = symbol_owner(symbol) if symbol else ("", "")
    name = posixpath.basename(so.replace("\\", "/")) if so else ""
    if so:
        where = f"{so} (from {package})" if package else f"{so} (outside site-packages: a local build)"
        reading.evidence.append(f"library that failed to load: {where}")
    if symbol:
        reading.evidence.append(f"missing symbol: {symbol}" + (f", defined by {owner}" if owner else ""))
    if "cxx11" in symbol:
        reading.evidence.append(
            "the symbol uses the C++11 string ABI: the binary and the library it expects "
            "were built with different _GLIBCXX_USE_CXX11_ABI settings or releases"
        )
    if groups.get("symbol_version"):
        reading.evidence.append(
            f"the symbol version {groups['symbol_version']} is not in the {so} that was "
            "loaded: two copies of that library on the loader path"
        )
    if package == "torch" and owner.startswith("torch"):
        reading.evidence.append(
            "torch's own libraries do not fit together: two torch installs mixed, or a stale "
            "build left in site-packages or on LD_LIBRARY_PATH"
        )
    elif owner.startswith("torch") and (package or name):
        reading.evidence.append(
            f"{package or name} was compiled against another torch than the one it is loaded with"
        )
        if package:
            reading.fixes.append(
                f"Install the {package} build made for the installed torch (or the torch it was "
                "built for), e.g. "
                + code(
                    command("python", "-m", "pip", "install", "--force-reinstall", "--no-cache-dir", package)
                )
                + "."
            )
        else:
            reading.fixes.append(
                f"Rebuild {name} against the installed torch (a clean build: remove its build "
                "directory first)."
            )
    elif provider.startswith("nvidia-"):
        reading.fixes.append(
            f"Install a new enough {provider.split('>=')[0]} "
            f"({code(command('python', '-m', 'pip', 'install', provider))}) "
            "and keep older CUDA libraries off LD_LIBRARY_PATH."
        )
    reading.culprit = package or name or (provider.split(">=")[0] if provider else "") or owner or symbol


_GCC_OF_GLIBCXX = {
    "3.4.26": "9",
    "3.4.28": "10",
    "3.4.29": "11",
    "3.4.30": "12",
    "3.4.31": "13",
    "3.4.32": "13.2",
    "3.4.33": "14",
}
_CONDA = re.compile(r"(?:conda|mamba|miniforge)\d*[/\\]|[/\\]envs[/\\]|[/\\]\.conda[/\\]", re.IGNORECASE)


@interprets("runtime", "needed", "needed_by")
def _runtime_too_old(
    groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading
) -> None:
    needed, runtime = groups.get("needed", ""), groups.get("runtime", "")
    kind, _, version = needed.partition("_")
    by = groups.get("needed_by")
    reading.evidence.append(
        f"{by or 'the binary'} needs {needed}" + (f", which {runtime} does not provide" if runtime else "")
    )
    if kind == "GLIBC":
        if snapshot is not None and snapshot.platform.libc_version:
            reading.evidence.append(f"the environment's glibc is {snapshot.platform.libc_version}")
        reading.culprit = f"glibc (older than {version})"
        reading.fixes.append(
            f"The system C library is older than glibc {version}: use a build of the package for an "
            f"older manylinux tag, or an OS/container with glibc >= {version}."
        )
        return
    gcc = _GCC_OF_GLIBCXX.get(version) if kind == "GLIBCXX" else None
    if gcc:
        reading.evidence.append(f"{needed} is the C++ runtime of GCC {gcc}")
    library = runtime or "libstdc++"
    if runtime and _CONDA.search(runtime):
        reading.evidence.append(
            f"{runtime} is a conda environment's own libstdc++, found before the system's"
        )
        reading.fixes.append(
            "Update the environment's C++ runtime (`conda install -c conda-forge libstdcxx-ng`) "
            "or preload the system's libstdc++.so.6 (LD_PRELOAD)."
        )
    reading.culprit = f"libstdc++ ({library})" if "stdc++" in library or kind != "GCC" else library


@interprets(
    "requirer",
    "requirement",
    "installed",
    "installed_version",
    "wanted",
    "conflict_a",
    "conflict_b",
    "versions",
)
def _resolver(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    requirer, requirement, installed = (
        groups.get(k, "").strip().rstrip(".,;") for k in ("requirer", "requirement", "installed")
    )
    if requirer and requirement and installed:
        reading.evidence.append(f"{requirer} requires {requirement}; {installed} is installed")
        reading.culprit = f"{requirer} vs {installed}"
        reading.fixes.append(
            f"Install what {requirer} requires "
            f"({code(command('python', '-m', 'pip', 'install', requirement.replace(' ', '')))}), "
            f"or a release of {requirer.split()[0]} that accepts {installed}."
        )
    elif groups.get("conflict_a") and groups.get("conflict_b"):
        a, b = groups["conflict_a"].strip(), groups["conflict_b"].strip()
        reading.evidence.append(f"the conflict: {a}; {b}")
        reading.culprit = f"{a} vs {b}"
    elif groups.get("wanted"):
        reading.evidence.append(f"cannot be installed together: {groups['wanted'].strip()}")
        reading.culprit = groups["wanted"].strip()
    elif requirement and installed:  # a version check at import: "X>=1,<=2 is required … but found X==3"
        reading.evidence.append(f"{requirement} is required; {installed} is installed")
        reading.culprit = installed
    elif requirement:
        versions = groups.get("versions")
        reading.evidence.append(
            f"requirement: {requirement}"
            + (f" (available: {versions or 'none'})" if "versions" in groups else "")
        )
        reading.culprit = requirement
    elif installed:  # a version check: "deepspeed==0.17.2", "MMCV==1.3.1"
        reading.evidence.append(
            f"installed: {installed}"
            + (f"=={groups['installed_version']}" if groups.get("installed_version") else "")
        )
        reading.culprit = installed


@interprets("path")
def _full_filesystem(
    groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading
) -> None:
    path = groups.get("path", "")
    if not path:
        return
    reading.evidence.append(f"the write that failed: {path}")
    reading.culprit = f"the filesystem holding {path}"
    if path.startswith("/dev/shm"):
        reading.evidence.append("/dev/shm is shared memory: the container's shm size, not the disk")
    reading.fixes.append(
        f"See which filesystem is full with {code(command('df', '-h', posixpath.dirname(path) or path))} "
        "and free space there or write elsewhere."
    )


@interprets("segment", "size")
def _shm_segment(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    segment, size = groups.get("segment", ""), groups.get("size", "")
    what = f"a {human(int(size))} shared-memory segment" if size.isdigit() else "a shared-memory segment"
    reading.evidence.append(f"NCCL needed {what}" + (f" ({segment})" if segment else ""))
    reading.culprit = "/dev/shm size"
    shm = snapshot.platform.shm_total_bytes if snapshot is not None else None
    if shm is not None:
        reading.evidence.append(f"/dev/shm in the environment is {human(shm)}")


@interprets("free_gib", "total_gib", "utilization", "wanted_gib")
def _vllm_startup(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    try:
        free, total, util, wanted = (
            float(groups[k]) for k in ("free_gib", "total_gib", "utilization", "wanted_gib")
        )
    except (KeyError, ValueError):
        return
    reading.evidence.append(
        f"vLLM wants {util:g} of {total:g} GiB = {wanted:g} GiB; {free:g} GiB is free, "
        f"{total - free:.2f} GiB is held by other processes"
    )
    reading.culprit = "other processes on the GPU" if total - free > 0.1 * total else "gpu_memory_utilization"
    if total > 0 and free > 0:
        fits = max(int(free / total * 100) - 2, 1) / 100
        reading.fixes.append(
            f"With this much free, `--gpu-memory-utilization {fits:.2f}` fits; or free the GPU "
            "(`nvidia-smi` lists the processes holding it)."
        )


@interprets("kernel_op", "dtype")
def _dtype(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    op, dtype = groups.get("kernel_op", "an operation"), groups.get("dtype", "this dtype")
    on_cpu = "cpu" in op.lower()
    reading.evidence.append(f"{op} has no {dtype} kernel" + (" on the CPU" if on_cpu else ""))
    reading.culprit = f"{dtype} on the CPU" if on_cpu else f"dtype {dtype}"


@interprets("nccl_where", "nccl_reason")
def _nccl(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    reason = groups.get("nccl_reason", "").strip()
    if groups.get("nccl_where"):
        reading.evidence.append(f"NCCL call: {groups['nccl_where']}")
    if reason:
        reading.evidence.append(f"NCCL says: {reason}")
    reading.culprit = f"NCCL ({reason})" if reason else "NCCL"


@interprets("host", "url")
def _network(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    host = groups.get("host") or groups.get("url", "")
    if host:
        reading.evidence.append(f"unreachable: {host}")
        reading.culprit = f"network access to {host}"


@interprets("port", "address")
def _port(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    port = groups.get("port", "")
    if port:
        reading.evidence.append(f"port {port} on {groups.get('address') or 'this host'} is already taken")
        reading.culprit = f"port {port}"


@interprets("param", "checkpoint_rows", "dim", "checkpoint_shape", "model_shape")
def _size_mismatch(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    param = groups.get("param", "")
    reading.culprit = param
    if groups.get("checkpoint_rows"):
        reading.evidence.append(
            f"{param}: the checkpoint has {groups['checkpoint_rows']} embedding rows "
            f"(vocabulary entries) of width {groups.get('dim', '?')}"
        )
        m = re.search(r"shape in current model is torch\.Size\(\[(\d+),", region)
        if m and m.group(1) != groups["checkpoint_rows"]:
            diff = int(groups["checkpoint_rows"]) - int(m.group(1))
            reading.evidence.append(
                f"the model has {m.group(1)}: {abs(diff)} tokens {'more' if diff > 0 else 'fewer'} "
                "in the checkpoint's vocabulary"
            )
    elif groups.get("checkpoint_shape"):
        model = groups.get("model_shape")
        reading.evidence.append(
            f"{param}: checkpoint {groups['checkpoint_shape']}" + (f", model {model}" if model else "")
        )


@interprets(
    "dll",
    "header",
    "from_module",
    "of_module",
    "pickled_module",
    "test",
    "compiler",
    "backend",
    "name",
    "cpu_torch",
)
def _named_thing(groups: dict[str, str], region: str, snapshot: Snapshot | None, reading: Reading) -> None:
    """Groups that name the culprit directly; the module-like ones by the package to check."""
    if groups.get("cpu_torch"):
        reading.evidence.append(f"installed torch: {groups['cpu_torch']}, a CPU-only build")
        reading.culprit = f"torch {groups['cpu_torch']} (CPU-only build)"
    for key, label in (
        ("backend", "compiler backend"),
        ("dll", "DLL"),
        ("header", "missing header"),
        ("from_module", "module"),
        ("of_module", "module"),
        ("pickled_module", "module"),
        ("test", "test"),
        ("compiler", "compiler"),
    ):
        value = groups.get(key)
        if not value:
            continue
        if key.endswith("module"):
            dist = distribution_for(value, snapshot)
            installed = f" {dist[1]}" if dist[1] else ""
            reading.evidence.append(f"{label}: {value} (distribution {dist[0]}{installed})")
            reading.culprit = reading.culprit or dist[0]
        else:
            reading.evidence.append(f"{label}: {value}")
            reading.culprit = reading.culprit or value
    if groups.get("name"):
        reading.evidence.append(f"name: {groups['name']}")
