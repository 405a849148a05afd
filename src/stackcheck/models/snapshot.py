"""The runtime snapshot: everything the checks may know about one environment.

Every section carries ``status`` / ``source`` / ``error`` so a reader can tell a fact that
was looked for and not found (``absent``) from one that could not be gathered (``failed``,
``timeout``). New fields are only ever added with defaults; nothing is renamed without a
``SNAPSHOT_SCHEMA_VERSION`` bump.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Literal

import msgspec

SNAPSHOT_SCHEMA_VERSION = "1.0"

Status = Literal["ok", "absent", "failed", "timeout"]


class Section(msgspec.Struct, kw_only=True):
    """Common provenance of a snapshot section."""

    status: Status = "absent"
    source: str = ""
    error: str | None = None


class ToolInfo(msgspec.Struct, kw_only=True):
    name: str = "stackcheck"
    version: str = ""
    schema_version: str = SNAPSHOT_SCHEMA_VERSION
    captured_at: str = ""  # ISO 8601, UTC
    command: str = ""  # how the snapshot was made: "live", "collect_env", "--python PATH" …


class PthFile(msgspec.Struct, kw_only=True):
    path: str
    entries: list[str] = []  # path lines it adds (import lines are shown verbatim)
    executes_code: bool = False  # has an ``import`` line


class PathTool(msgspec.Struct, kw_only=True):
    name: str  # "python" | "python3" | "pip" | "pip3"
    path: str  # first match on PATH
    interpreter: str = ""  # what it runs: itself for python, the ``#!`` interpreter for pip


class IsolationFacts(msgspec.Struct, kw_only=True):
    """What the shell around the interpreter says about the active environment."""

    virtual_env: str | None = None  # $VIRTUAL_ENV
    conda_prefix: str | None = None  # $CONDA_PREFIX
    path_tools: list[PathTool] = []


class PythonSection(Section, kw_only=True):
    version: str = ""  # "3.11.7"
    implementation: str = ""  # "CPython"
    executable: str = ""
    prefix: str = ""
    base_prefix: str = ""
    env_kind: str = ""  # venv | virtualenv | conda | uv | pixi | system | unknown
    env_marker: str = ""  # the evidence: "pyvenv.cfg", "CONDA_PREFIX=/opt/conda" …
    externally_managed: str = ""  # its PEP 668 EXTERNALLY-MANAGED file ("" = none, or a venv)
    sys_path: list[str] = []
    pythonpath: list[str] = []  # PYTHONPATH entries as set for this interpreter
    user_site: str | None = None
    user_site_enabled: bool = False
    platform_tag: str = ""  # sysconfig.get_platform(), e.g. "linux-x86_64"
    soabi: str = ""  # e.g. "cpython-311-x86_64-linux-gnu"
    pth_files: list[PthFile] = []
    site_dirs: list[str] = []  # site-packages directories of this interpreter (venv, user, system)
    modules: dict[str, str] = {}  # located import names → file ("" = not found), never imported
    isolation: IsolationFacts = msgspec.field(default_factory=IsolationFacts)


class Distribution(msgspec.Struct, kw_only=True):
    name: str  # as written in METADATA
    version: str  # exactly as installed, local labels kept ("2.5.1+cu121")
    location: str  # the sys.path entry it was found in
    metadata_dir: str = ""  # the .dist-info / .egg-info directory
    installer: str = ""  # INSTALLER file: pip, uv, conda …
    requires: list[str] = []  # Requires-Dist, verbatim
    requires_python: str | None = None
    provides_extras: list[str] = []
    editable: bool = False
    direct_url: str | None = None
    top_level: list[str] = []  # import names it installs (top_level.txt or RECORD)
    wheel_tags: list[str] = []  # "Tag:" lines of WHEEL, e.g. "cp311-cp311-manylinux_2_28_x86_64"
    shadowed: bool = False  # another copy of the same project comes earlier on sys.path
    problems: list[str] = []  # "missing METADATA", "RECORD lists missing file torch/__init__.py" …
    requested: bool = False  # REQUESTED marker: the user asked for it (not pulled in as a dependency)


class PackagesSection(Section, kw_only=True):
    distributions: list[Distribution] = []
    stray_entries: list[str] = []  # "~"-prefixed leftovers of interrupted installs in site dirs
    # import name several distributions install → file ``import`` loads (a directory: namespace package)
    import_origins: dict[str, str] = {}


class PlatformSection(Section, kw_only=True):
    system: str = ""  # Linux | Darwin | Windows
    distro_id: str = ""  # os-release ID, e.g. "ubuntu"
    distro_version: str = ""  # os-release VERSION_ID
    distro_name: str = ""  # PRETTY_NAME
    kernel: str = ""
    machine: str = ""  # x86_64 | aarch64 | arm64 | AMD64
    libc_family: str = ""  # glibc | musl | "" (not Linux)
    libc_version: str = ""
    cpu_model: str = ""
    cpu_count: int | None = None
    memory_total_bytes: int | None = None
    shm_total_bytes: int | None = None  # /dev/shm size
    open_files_limit: int | None = None


class HostedPlatform(msgspec.Struct, kw_only=True):
    # colab | kaggle | sagemaker | modelscope | cnb | github-actions | ci | docker | podman | kubernetes
    # | wsl | slurm
    name: str
    signal: str  # what identified it, e.g. "COLAB_RELEASE_TAG is set"
    gpu_expected: bool | None = None  # False where the platform is known to offer no GPU here


class HostedSection(Section, kw_only=True):
    platforms: list[HostedPlatform] = []


class Gpu(msgspec.Struct, kw_only=True):
    index: int
    name: str = ""
    uuid: str = ""
    memory_total_bytes: int | None = None
    compute_capability: str = ""  # "9.0"
    mig_mode: str | None = None  # "enabled" | "disabled" | None (unsupported / unknown)
    visible: bool = True  # after CUDA_VISIBLE_DEVICES


class AcceleratorSection(Section, kw_only=True):
    vendor: str = ""  # "nvidia"
    driver_version: str = ""  # "580.82.07"
    driver_source: str = ""  # sysfs | procfs | nvml | nvidia-smi | collect_env
    cuda_driver_version: str = ""  # highest CUDA the driver supports, "13.0"
    gpus: list[Gpu] = []
    cuda_visible_devices: str | None = None
    looked_for: list[str] = []  # where we looked when nothing was found


class TorchSection(Section, kw_only=True):
    version: str = ""  # "2.13.0+cu130"
    cuda: str | None = None  # torch.version.cuda, None for CPU/ROCm builds
    hip: str | None = None
    git_version: str = ""
    location: str = ""
    # --deep only (child process that imports torch)
    deep: bool = False
    cuda_available: bool | None = None
    device_count: int | None = None
    arch_list: list[str] = []  # torch.cuda.get_arch_list()
    cudnn_version: str | None = None
    deep_error: str | None = None


class Tool(msgspec.Struct, kw_only=True):
    path: str = ""
    version: str = ""
    note: str = ""


class ToolchainSection(Section, kw_only=True):
    nvcc: Tool | None = None  # the system CUDA toolkit, not the runtime torch uses
    gcc: Tool | None = None


class Kernelspec(msgspec.Struct, kw_only=True):
    name: str
    path: str  # the kernel.json
    display_name: str = ""
    language: str = ""
    argv: list[str] = []
    interpreter: str = ""  # what argv[0] really resolves to ("" when not a Python kernel)
    interpreter_exists: bool = True
    bare_python: bool = False  # argv[0] is "python"/"python3" without a path


class UnreadableKernelspec(msgspec.Struct, kw_only=True):
    """A kernel directory whose kernel.json cannot be used."""

    name: str
    path: str  # the kernel.json
    reason: str  # "empty file", "malformed JSON: …", "kernel.json is a directory" …
    listed: bool = True  # Jupyter lists the kernel (and fails on it); False: it skips the directory


class KernelsSection(Section, kw_only=True):
    kernels: list[Kernelspec] = []
    unreadable: list[UnreadableKernelspec] = []  # first of a name only, like ``kernels``
    data_dirs: list[str] = []


class EnvSection(Section, kw_only=True):
    variables: dict[str, str] = {}  # allow-listed; secret-looking values replaced by "<redacted>"
    redacted: list[str] = []


class Engine(msgspec.Struct, kw_only=True):
    """An inference or serving engine as installed: the identity a result records."""

    name: str  # vllm | sglang | llama.cpp | tensorrt-llm | tensorrt | onnxruntime
    version: str = ""  # "0.11.0", llama.cpp's release "b4567"
    build: str = ""  # the wheel's CUDA variant ("cu128"), llama.cpp's build number, onnxruntime's flavor
    commit: str = ""  # source commit, where the engine says it
    torch: str = ""  # the torch the wheel was built for (its Requires-Dist pin)
    backends: list[str] = []  # llama.cpp: CUDA / Metal / CPU …; onnxruntime: its execution providers
    compiler: str = ""  # llama.cpp: "cc (Ubuntu 13.2.0) 13.2.0 for x86_64-linux-gnu"
    container: str = ""  # the NGC container release when inside one ("24.05")
    source: str = ""  # metadata | llama-server --version | env | files
    path: str = ""  # the distribution's location or the binary asked


class EnginesSection(Section, kw_only=True):
    engines: list[Engine] = []

    def get(self, name: str) -> Engine | None:
        return next((e for e in self.engines if e.name == name), None)


class GitSection(Section, kw_only=True):
    root: str = ""
    commit: str = ""
    branch: str = ""
    dirty: bool | None = None


class NetInterface(msgspec.Struct, kw_only=True):
    name: str  # "eth0", "ib0", "lo"
    up: bool | None = None  # operstate "up" (None: unknown, e.g. "unknown" for lo and tunnels)
    loopback: bool = False


class NetworkSection(Section, kw_only=True):
    """What NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME must name (interface names only, no address)."""

    hostname: str = ""
    interfaces: list[NetInterface] = []


class LaunchSection(Section, kw_only=True):
    """Who started this process, as a rank of which job (torchrun / srun / mpirun variables)."""

    launcher: str = ""  # torchrun | slurm | mpi | "" (not launched as a rank)
    rank: int | None = None
    local_rank: int | None = None
    world_size: int | None = None
    local_world_size: int | None = None
    node_rank: int | None = None
    job_id: str = ""  # TORCHELASTIC_RUN_ID / SLURM_JOB_ID
    wall_clock_ns: int | None = None  # time.time_ns() when taken
    # "probe": when this process took its snapshot; "barrier": right after a barrier of all ranks
    # (the fleet gather), so the clocks of the ranks can be compared
    clock_source: str = ""


class Snapshot(msgspec.Struct, kw_only=True, dict=True):
    schema_version: str = SNAPSHOT_SCHEMA_VERSION
    tool: ToolInfo = msgspec.field(default_factory=ToolInfo)
    python: PythonSection = msgspec.field(default_factory=PythonSection)
    packages: PackagesSection = msgspec.field(default_factory=PackagesSection)
    platform: PlatformSection = msgspec.field(default_factory=PlatformSection)
    hosted: HostedSection = msgspec.field(default_factory=HostedSection)
    accelerators: AcceleratorSection = msgspec.field(default_factory=AcceleratorSection)
    torch: TorchSection = msgspec.field(default_factory=TorchSection)
    toolchain: ToolchainSection = msgspec.field(default_factory=ToolchainSection)
    kernels: KernelsSection = msgspec.field(default_factory=KernelsSection)
    env: EnvSection = msgspec.field(default_factory=EnvSection)
    git: GitSection = msgspec.field(default_factory=GitSection)
    network: NetworkSection = msgspec.field(default_factory=NetworkSection)
    launch: LaunchSection = msgspec.field(default_factory=LaunchSection)
    engines: EnginesSection = msgspec.field(default_factory=EnginesSection)

    # ----- conveniences used by many checks (pure, derived, never stored) -----
    def distribution(self, name: str) -> Distribution | None:
        """The first (importable) distribution of a project, by normalized name."""
        return self._importable.get(normalize_name(name))

    @cached_property
    def _importable(self) -> dict[str, Distribution]:
        # Built on first lookup: checks treat a snapshot as read-only once judging starts.
        found: dict[str, Distribution] = {}
        for dist in self.packages.distributions:
            if not dist.shadowed:
                found.setdefault(normalize_name(dist.name), dist)
        return found

    def visible_gpus(self) -> list[Gpu]:
        return [g for g in self.accelerators.gpus if g.visible]


def normalize_name(name: str) -> str:
    """PEP 503 normalization (``Foo_Bar.baz`` → ``foo-bar-baz``): what packaging's
    ``canonicalize_name`` returns (a property test holds them equal), without importing
    packaging, whose import is most of a ``snapshot`` run's own work. Remembered: the checks
    ask for each installed name several times (at most :data:`_NAMES_KEPT` names are kept)."""
    found = _NORMALIZED.get(name)
    if found is None:
        found = _NAME_SEPARATORS.sub("-", name.lower())  # lower first: "Z.Σ" ends in ς, "Z-Σ" in σ
        if len(_NORMALIZED) < _NAMES_KEPT:
            _NORMALIZED[name] = found
    return found


_NAME_SEPARATORS = re.compile(r"[-_.]+")  # PEP 503: runs of these are one "-"
_NORMALIZED: dict[str, str] = {}
_NAMES_KEPT = 1 << 16


def snapshot_digest(snapshot: Snapshot) -> str:
    """sha256 of the canonical JSON (sorted keys) of a snapshot."""
    return "sha256:" + _sha256(msgspec.json.encode(snapshot, order="sorted")).hexdigest()


def _sha256(data: bytes):
    """hashlib.sha256(data) from CPython's own implementation where it has one (``_sha2`` from
    3.12, ``_sha256`` before): importing hashlib loads OpenSSL's libcrypto, ≈ 2 ms of a warm
    preflight, which prints this digest."""
    import sys

    try:
        if sys.version_info >= (3, 12):
            from _sha2 import sha256
        else:
            from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # a build without them
        from hashlib import sha256
    return sha256(data)
