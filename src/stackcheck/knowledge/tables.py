"""The shapes of the knowledge data files (``knowledge/data/*.json``), as msgspec models.

Every file carries a ``schema_version`` and a ``sources`` map (tag → citation); every fact row
carries ``sources`` (tags of that map, or a direct citation such as ``pytorch/pytorch#150733``).
The loader refuses a row without a source, so no fact enters the tool unsourced. A row no
primary source confirms says so (``"verified": false`` and ``unverified_reason``); checks judge
such a row with a warning, never a block.
"""

from __future__ import annotations

import msgspec

KNOWLEDGE_SCHEMA_VERSION = "1.0"


class _Table(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    schema_version: str
    sources: dict[str, str] = {}  # tag → citation
    unverified: list[str] = []  # what the sources could not confirm


class _Fact(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A sourced fact row; ``verified`` is False when no primary source confirmed it (the
    reason says what it rests on instead)."""

    verified: bool = True
    unverified_reason: str = ""


class ToolkitDriver(_Fact, kw_only=True, forbid_unknown_fields=True):
    """One CUDA toolkit release and the driver it shipped with (NVIDIA release notes, Table 3)."""

    cuda: str  # "12.4"
    release: str = "GA"  # GA | U1 | U2 | GA2 | RC
    linux: str
    windows: str | None = None  # None: no Windows driver is bundled with this toolkit
    sources: list[str]


class MvcFloor(_Fact, kw_only=True, forbid_unknown_fields=True):
    """The lowest driver that runs any toolkit of one CUDA major (minor-version compatibility)."""

    cuda_major: int
    linux: str
    windows: str | None = None
    note: str = ""
    sources: list[str]


class CudaDriverTable(_Table, kw_only=True, forbid_unknown_fields=True):
    toolkits: list[ToolkitDriver]
    mvc_floors: list[MvcFloor]
    mvc_from_major: int = 11  # before CUDA 11 there is no minor-version compatibility


class TorchRelease(_Fact, kw_only=True, forbid_unknown_fields=True):
    """One torch minor release: its companions, Python window and CUDA builds."""

    torch: str  # "2.6"
    torchvision: str | None = None  # paired torchvision minor, "0.21"
    torchaudio: str | None = None  # paired torchaudio minor ("2.11" for torch ≥ 2.12: maintenance mode)
    python: str | None = None  # supported window as a specifier, ">=3.9,<3.14"
    python_experimental: list[str] = []  # minors offered as experimental, "3.13"
    requires_python: str | None = None  # the wheel's Requires-Python
    cuda_builds: list[str] | None = None  # stable CUDA builds ("12.4"); None = unverified
    cuda_experimental: list[str] = []
    # published on download.pytorch.org (local version +cuXYZ) but not in RELEASE.md's matrix
    cuda_index_only: list[str] = []
    cuda_since: dict[str, str] = {}  # CUDA → first patch release with that build ("12.9": "2.12.1")
    pypi_default_cuda: str | None = None  # CUDA of plain `pip install torch` on Linux x86_64
    cudnn: str | None = None  # cuDNN of the PyPI default wheel
    min_glibc: str | None = None  # from the wheel's manylinux tag (None: manylinux1)
    cxx_standard: str | None = None
    sources: list[str]

    @property
    def all_cuda_builds(self) -> list[str]:
        return [*(self.cuda_builds or []), *self.cuda_experimental, *self.cuda_index_only]


class TorchReleaseTable(_Table, kw_only=True, forbid_unknown_fields=True):
    releases: list[TorchRelease]


class ArchListRow(_Fact, kw_only=True, forbid_unknown_fields=True):
    """Compute capabilities compiled into the torch builds of a range of releases."""

    torch: str  # specifier over the torch release, ">=2.1,<2.4"
    cuda: str  # "12.1"
    machine: str = "x86_64"  # x86_64 (Linux and Windows) | aarch64
    sass: list[str]  # "8.6" → sm_86
    ptx: list[str] = []  # "12.0" → compute_120
    ptx_linux_only: bool = False
    sources: list[str]


class ArchListTable(_Table, kw_only=True, forbid_unknown_fields=True):
    coverage_rule: str = ""
    builds: list[ArchListRow]


class PinRow(_Fact, kw_only=True, forbid_unknown_fields=True):
    """What one release of a package requires (its wheel's Requires-Dist, verbatim).

    A row covers its own version up to the next row of the same package (or ``before``);
    the last row of a package covers only its own minor series unless ``before`` says more.
    """

    package: str  # "vllm"
    version: str  # "0.11.0"
    before: str | None = None  # first version no longer covered by this row
    requires_python: str | None = None
    requires: list[str] = []  # PEP 508, markers kept
    extras: list[str] = []  # extras of the usual install ("srt" for sglang ≤ 0.5.2)
    min_glibc: str | None = None  # from the manylinux tag of the wheel
    wheel_cuda: str | None = None  # CUDA of the release's default (unsuffixed) wheel, when it has one
    # other CUDA builds of the release: CUDA → the index that serves them ({version} is filled in)
    cuda_variants: dict[str, str] = {}
    sources: list[str]


class PinTable(_Table, kw_only=True, forbid_unknown_fields=True):
    pins: list[PinRow]
