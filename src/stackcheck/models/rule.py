"""Knowledge rules: curated (knowledge/data) and mined (from CI logs) share this schema.

A rule's ``scope`` says which environments it applies to, so preflight can warn before the
error; its ``signatures`` say which error texts it explains, so triage can diagnose after.
"""

from __future__ import annotations

from typing import Literal

import msgspec

RULE_SCHEMA_VERSION = "1.0"

Category = Literal[
    "driver-too-old",
    "gpu-arch-unsupported",
    "abi-mismatch",
    "cuda-oom",
    "module-not-found",
    "dependency-conflict",
    "nccl-failure",
    "tokenizer-model-mismatch",
    "cuda-not-available",
    "unsafe-deserialization",
    "triton-or-compile-failure",
    "dtype-unsupported",
    # the long tail of real reports (tests/data/triage/corpus/README.md, docs/triage.md)
    "resolver-conflict",
    "protobuf",
    "glibc",
    "extension-build",
    "illegal-memory-access",
    "shared-memory",
    "disk-full",
    "timeout-or-hang",
    "test-assertion",
    "infrastructure",
    "other",
]

CATEGORIES: tuple[str, ...] = Category.__args__  # type: ignore[attr-defined]

Confidence = Literal["high", "medium", "low"]
# specific: one known failure with its known cause; family: a whole kind of failure whose
# culprit the signature's named groups take from the text (ranked below every specific match)
Layer = Literal["specific", "family"]
Provenance = Literal["curated", "mined"]
Reproducibility = Literal["reproducible", "flaky", "unconfirmed"]


class Scope(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Conditions over snapshot facts; all given conditions must hold (an empty scope never
    matches an environment: such a rule is triage-only)."""

    packages: list[str] = []  # PEP 508 requirements that must all be installed and satisfied
    packages_absent: list[str] = []  # names that must not be installed
    torch_cuda: str | None = None  # specifier over torch.version.cuda ("<12.8"); "none" = CPU build
    driver: str | None = None  # specifier over the driver version (">=525,<580")
    compute_capability: str | None = None  # specifier over any visible GPU's CC (">=12.0")
    python: str | None = None  # specifier over the Python version
    platform: list[str] = []  # linux | darwin | windows (any of)
    glibc: str | None = None  # specifier over the glibc version
    gpu_name: str | None = None  # substring of a visible GPU name ("H100")
    requires_gpu: bool = False  # only where a GPU is present
    # a named predicate implemented in code for facts a specifier cannot express
    # (e.g. "gpu-arch-not-in-torch-build"); see stackcheck.knowledge.predicates
    predicate: str | None = None


class MinedCell(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One environment cell a mined signature was seen in: its failures over its attempts."""

    cell: str  # the cell's facts, "numpy=2.0.2 os=ubuntu-22.04 python=3.11"
    attempts: int  # jobs (runs and reruns) of the signature's job family in this cell
    failures: int  # of those, the failed ones that carried the signature
    failure_rate: float
    wilson_lower: float  # lower bound of the failure rate's Wilson interval
    in_scope: bool = False  # inside the rule's environment scope


class MinedStats(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What a rule mined from CI logs rests on (``stackcheck mine rules``)."""

    signature: str  # the signature's key (hex): exception + message template + frames + test
    exception: str = ""  # the exception type ("AttributeError"), empty for a non-Python error line
    template: str = ""  # the masked message template; <*> stands for a variable part
    frames: list[str] = []  # top in-app frames, innermost first ("src/pkg/stats.py:mean")
    tests: list[str] = []  # the failing tests that carried it
    support: int  # failed jobs that carried the signature
    coverage: float  # share of all failed jobs in the store that it explains
    attempts: int  # attempts in the cells of its scope (all its cells when no scope separates)
    failures: int
    failure_rate: float
    wilson_lower: float  # at ``confidence``
    confidence: float = 0.95
    min_attempts: int = 0  # the fewest attempts with which the lower bound can reach the target
    reproducibility: Reproducibility
    false_positives: int  # passing jobs of its job family whose logs carry the signature
    passing_jobs: int  # passing jobs of its job family
    false_positive_rate: float
    env_scope: str  # the smallest scope that separates failing from passing cells, in words
    separated: bool  # does an environment fact separate them? (False: a code bug or flakiness)
    cells: list[MinedCell] = []
    merge_candidates: list[str] = []  # IDs of rules whose signatures look alike (suggested merges)
    store: str = ""  # the store it was mined from (a path, or a DSN without its password)


class Rule(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    id: str  # "KB001"
    title: str
    category: Category
    scope: Scope = msgspec.field(default_factory=Scope)
    signatures: list[str] = []  # RE2-compatible regular expressions over error text
    explanation: str = ""
    fix: str = ""
    expected: str = ""  # what a good environment has instead (shown as a finding's "expected")
    sources: list[str] = []
    confidence: Confidence = "medium"
    severity: Literal["warning", "blocked"] = "warning"  # verdict when its scope matches
    examples: list[str] = []  # real error texts that must match (tests use them)
    counter_examples: list[str] = []  # texts that must not match
    origin: str = "curated"  # curated | mined:<dataset>
    provenance: Provenance = "curated"  # mined: written by `stackcheck mine rules`, with ``mined``
    mined: MinedStats | None = None
    # a dedicated check that judges this scope (e.g. "CUDA002"): the rule then registers for
    # `explain` and triage only, so preflight does not report one fact twice
    checked_by: str = ""
    layer: Layer = "specific"


class RuleSet(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    schema_version: str = RULE_SCHEMA_VERSION
    rules: list[Rule] = []
