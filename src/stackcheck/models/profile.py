"""Environment profiles: what an experiment needs from its environment.

A profile is declarative data. ``extends`` layers profiles (base runtime → capability →
backend); :mod:`stackcheck.catalog` resolves the layers into one flat profile whose
``extends`` is empty and whose ``layers`` lists where each piece came from.
"""

from __future__ import annotations

from typing import Literal

import msgspec

PROFILE_SCHEMA_VERSION = "1.0"

EvidenceScope = Literal["cpu-smoke", "single-gpu", "multi-gpu", "serving"]


class Forbidden(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A package that must not be installed in this environment (PEP 508 requirement)."""

    requirement: str  # "vllm", "sglang", "vllm!=0.11.0", "bitsandbytes"
    reason: str = ""
    use_instead: str | None = None  # a profile ID where this package belongs


class GpuRequirement(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    min_count: int | None = None
    min_memory_gib: float | None = None  # per GPU
    min_compute_capability: str | None = None  # "8.0"
    max_compute_capability: str | None = None
    torch_cuda: str | None = None  # specifier over torch's CUDA build, e.g. "==12.8" or ">=12.6"


class PlatformConstraint(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    os: list[str] = []  # linux | darwin | windows; empty = any
    arch: list[str] = []  # x86_64 | aarch64 | arm64; empty = any
    min_glibc: str | None = None


class DocsLinks(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    quickstart: str | None = None
    experiment_assets: str | None = None
    extra: dict[str, str] = {}


class Profile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    id: str
    title: str = ""
    category: str = ""  # cpu | delivery | single-gpu | multi-gpu | serving …
    purpose: str = ""
    extends: list[str] = []
    python: str | None = None  # specifier, e.g. ">=3.10,<3.14"
    requirements: list[str] = []  # PEP 508; must be installed and satisfied
    constraints: list[str] = []  # PEP 508; only judged when the package is installed
    required_modules: list[str] = []  # import names that must be locatable
    forbidden: list[Forbidden] = []
    gpu: GpuRequirement | None = None  # None = the profile needs no GPU
    platform: PlatformConstraint | None = None
    evidence_scope: EvidenceScope = "cpu-smoke"
    docs: DocsLinks = msgspec.field(default_factory=DocsLinks)
    notes: list[str] = []
    # filled by the resolver, never written by hand
    layers: list[str] = []


class Registry(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The on-disk registry file (``requirements/environment-profiles.json``)."""

    schema_version: str = PROFILE_SCHEMA_VERSION
    profiles: list[Profile] = []
    # A user registry may extend built-in profiles; set False to stand alone.
    include_builtin: bool = True


BASE_CATEGORY = "base"  # hidden layers: resolvable, not listed by default


class ProfileSummary(msgspec.Struct, kw_only=True):
    """One row of a listing."""

    id: str
    title: str
    category: str
    evidence_scope: str
    purpose: str
    file: str  # where the profile is defined
