"""The result contract: what a number must carry to be comparable across machines and months.

A user writes a :class:`Draft` (identity, metrics, status); ``results record`` completes it
into a :class:`ResultRecord` (snapshot, preflight verdict, git state, digests). Both share the
claim fields through :class:`Claim`. Types are checked by msgspec on decode; the formats a
type cannot express (40-hex revisions, failure reasons …) are checked by :func:`problems`,
which returns every problem at once as ``field: what is wrong``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec

from stackcheck.identifiers import problem, shown
from stackcheck.redaction import redact_text
from stackcheck.models.snapshot import Snapshot

# 1.1: records and events name their predecessor in the ledger (``prev``); 1.0 files stay valid
RESULT_SCHEMA_VERSION = "1.1"

Level = Literal["smoke", "mechanism", "measured", "reproduced", "delivery"]
LEVELS: tuple[str, ...] = Level.__args__  # type: ignore[attr-defined]  # ladder order, lowest first

BackendName = Literal["transformers", "vllm", "sglang", "llama.cpp", "tensorrt-llm"]
SERVING_BACKENDS = frozenset({"vllm", "sglang", "llama.cpp", "tensorrt-llm"})

# What the evidence claims to cover (Profile.evidence_scope plus training).
Scope = Literal["cpu-smoke", "single-gpu", "multi-gpu", "serving", "training"]

_HEX40 = re.compile(r"[0-9a-f]{40}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


class ModelIdentity(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    id: str  # hub repo id or local name, "Qwen/Qwen2.5-0.5B-Instruct"
    revision: str = ""  # 40-hex commit of the weights
    tokenizer_revision: str = ""  # 40-hex commit of the tokenizer files
    chat_template_sha256: str = ""  # of the template text actually rendered
    thinking: Literal["on", "off", "n/a"] = "n/a"  # effective thinking mode
    thinking_source: str = ""  # where it came from: "chat_template_kwargs", "model default" …
    dtype: str = ""  # bfloat16 | float16 | float32 …
    quantization: str = "none"  # none | awq | gptq | fp8 | Q4_K_M …


class BackendIdentity(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: BackendName
    version: str = ""  # filled from the snapshot when the backend is an installed distribution
    args: dict[str, Any] = {}  # engine / generation arguments that change the number
    build: dict[str, Any] = {}  # build options (CUDA arch list, flash-attn, GGML_CUDA …)
    commit: str = ""  # source commit for builds from a checkout


class WorkloadIdentity(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    kind: Literal["inference", "serving", "training"]  # required: no silent default
    # sha256 of the input manifest: for training the tokenized-data manifest, for serving the
    # inputs as rendered by the chat template
    manifest_sha256: str = ""
    samples: int | None = None
    concurrency: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    seed: int | None = None


class Dispersion(msgspec.Struct, kw_only=True):
    """Computed from the repetitions when a record is completed; never written by hand."""

    n: int
    mean: float
    stdev: float
    min: float
    max: float
    cv: float  # stdev / |mean| (0 when the mean is 0)


class Metric(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    value: float
    unit: str = ""
    repetitions: list[float] = []
    dispersion: Dispersion | None = None


class Artifact(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    path: str
    sha256: str = ""  # computed from the file at record time when not given
    kind: str = "other"  # raw-log | config | output | other


class GitState(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    commit: str = ""
    dirty: bool | None = None  # None: not a git checkout / unknown
    # observed: read from the working tree by `record`; declared: written in the draft
    # (recorded outside the checkout); only observed state can carry delivery evidence
    source: Literal["observed", "declared", ""] = ""


class ProfileRef(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    id: str
    registry_digest: str = ""
    registry_source: str = ""
    verdict: Literal["ok", "warning", "blocked", "skipped", "error", "unknown"] = "unknown"  # preflight at record time
    failing_checks: list[str] = []  # IDs of warning / blocked checks


class Claim(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The fields a user declares; shared by the draft and the stored record."""

    topic: str
    run_label: str
    model: ModelIdentity
    backend: BackendIdentity
    workload: WorkloadIdentity
    metrics: dict[str, Metric] = {}
    status: Literal["ok", "failed"] = "ok"
    failure_reason: str = ""
    evidence: Level = "smoke"  # the level claimed at record time
    scope: Scope | None = None  # default: the profile's evidence_scope
    # relative tolerance per metric for reproduction ("*" = any metric), e.g. {"*": 0.05}
    tolerance: dict[str, float] = {}
    artifacts: list[Artifact] = []
    notes: str = ""


class Draft(Claim, kw_only=True, forbid_unknown_fields=True):
    """A partial record as a user writes it: ``results record FILE`` completes it."""

    profile: str  # profile ID in the catalog
    git: GitState | None = None  # only outside a git checkout; inside, the observed state is used


class ResultRecord(Claim, kw_only=True, forbid_unknown_fields=True):
    """A complete, write-once result. ``digest`` is the sha256 of the record with ``digest``
    empty; the file is named after it, so an edited file no longer matches its name."""

    schema_version: str = RESULT_SCHEMA_VERSION
    created_at: str  # ISO 8601 UTC with microseconds, "2026-11-30T09:41:02.123456Z"
    profile: ProfileRef
    snapshot: Snapshot
    snapshot_digest: str
    git: GitState = msgspec.field(default_factory=GitState)
    stackcheck_version: str = ""
    identity_key: str = ""  # "sha256:…" over the experiment's identity (see identity.py)
    # "sha256:…" of the file stored just before this one in its ledger (the chain; set by
    # Ledger.store, "" for the first file and in files written before schema 1.1)
    prev: str = ""
    digest: str = ""  # "sha256:…" of this record with digest = ""


def required_fields(model: type | None = None, prefix: str = "") -> list[str]:
    """The fields a document of ``model`` (default: :class:`Draft`) must state, in contract
    order; a required nested object is named by its own required fields (``model.id``)."""
    out: list[str] = []
    for f in msgspec.structs.fields(model or Draft):
        if f.required:
            nested = _struct(f.type)
            out += _required_inside(nested, f"{prefix}{f.encode_name}")
    return out


def missing_fields(raw: Any, model: type | None = None, prefix: str = "") -> list[str]:
    """Every required field ``raw`` (decoded JSON) lacks, all at once (the decoder stops at
    the first); wrong types are left to the decoder."""
    if not isinstance(raw, dict):
        return []
    out: list[str] = []
    for f in msgspec.structs.fields(model or Draft):
        nested = _struct(f.type)
        if f.encode_name not in raw:
            if f.required:
                out += _required_inside(nested, f"{prefix}{f.encode_name}")
        elif nested:
            out += missing_fields(raw[f.encode_name], nested, f"{prefix}{f.encode_name}.")
    return out


def missing_message(raw: Any) -> str | None:
    """``missing required fields a, b (a result draft needs …)``, or None when none is missing."""
    missing = missing_fields(raw, Draft)
    if not missing:
        return None
    return (f"missing required field{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(a result draft needs {', '.join(required_fields(Draft))})")


def _required_inside(nested: type | None, name: str) -> list[str]:
    """A required field by its own required fields (``model.id``), or by its name."""
    return (required_fields(nested, f"{name}.") if nested else []) or [name]


def _struct(t) -> type | None:
    return t if isinstance(t, type) and issubclass(t, msgspec.Struct) else None


def identifier_problems(claim: Claim) -> list[str]:
    """Problems of the names a claim is filed under (topic, run label, profile ID), checked
    by the one rule of :mod:`stackcheck.identifiers`; they appear in printed commands."""
    out: list[str] = []
    for name, kind in (("topic", "topic"), ("run_label", "name")):
        value = getattr(claim, name)
        if not value.strip():
            out.append(f"{name}: must not be empty")
        elif any(c in value for c in "\n\r\t"):
            out.append(f"{name}: must be one line, got {shown(value)}")
        elif (found := problem(value, kind)) is not None:
            out.append(f"{name}: {found}")
        elif redact_text(value) != value:  # stored redacted, it would no longer be the name given
            out.append(f"{name}: looks like it holds a credential; names are printed and stored, keep secrets out")
    ref = getattr(claim, "profile", None)
    field, value = ("profile", ref) if isinstance(ref, str) else ("profile.id", getattr(ref, "id", None))
    if value is not None and (found := problem(value)) is not None:
        out.append(f"{field}: {found}")
    return out


def problems(claim: Claim) -> list[str]:
    """Every format problem of a draft or record as ``field: what is wrong`` (empty: valid)."""
    out = identifier_problems(claim)
    m = claim.model
    if not m.id.strip():
        out.append("model.id: must not be empty")
    elif (found := problem(m.id, "text")) is not None:
        out.append(f"model.id: {found}")
    for field, pattern, what in (
        ("revision", _HEX40, "40 lowercase hex characters (a commit, not a branch name)"),
        ("tokenizer_revision", _HEX40, "40 lowercase hex characters (a commit, not a branch name)"),
        ("chat_template_sha256", _HEX64, "64 lowercase hex characters (sha256 of the template text)"),
    ):
        value = getattr(m, field)
        if value and not pattern.fullmatch(value):
            out.append(f"model.{field}: expected {what}, got {value!r}")
    w = claim.workload
    if w.manifest_sha256 and not _HEX64.fullmatch(w.manifest_sha256):
        out.append(f"workload.manifest_sha256: expected 64 lowercase hex characters, got {w.manifest_sha256!r}")
    for field in ("samples", "concurrency", "input_tokens", "output_tokens"):
        value = getattr(w, field)
        if value is not None and value < (1 if field in ("samples", "concurrency") else 0):
            out.append(f"workload.{field}: must be positive, got {value}")
    if claim.status == "failed" and not claim.failure_reason.strip():
        out.append("failure_reason: required when status is 'failed'")
    if claim.status == "ok" and claim.failure_reason.strip():
        out.append("failure_reason: given but status is 'ok'")
    if claim.status == "ok" and not claim.metrics:
        out.append("metrics: an 'ok' result needs at least one metric")
    for name, metric in claim.metrics.items():
        if not name.strip():
            out.append("metrics: a metric name must not be empty")
        if metric.value != metric.value or metric.value in (float("inf"), float("-inf")):
            out.append(f"metrics.{name}.value: must be a finite number")
    for name, tol in claim.tolerance.items():
        if name != "*" and name not in claim.metrics:
            out.append(f"tolerance.{name}: no such metric")
        if not 0 <= tol < 10:
            out.append(f"tolerance.{name}: expected a relative tolerance such as 0.05, got {tol}")
    for i, art in enumerate(claim.artifacts):
        if not art.path.strip():
            out.append(f"artifacts[{i}].path: must not be empty")
        if art.sha256 and not _HEX64.fullmatch(art.sha256):
            out.append(f"artifacts[{i}].sha256: expected 64 lowercase hex characters, got {art.sha256!r}")
    return out


class Event(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """An append-only ledger event about a record or a topic; write-once like records.

    ``promotion`` raises a record's level (``proof`` says what proved it), ``decision`` records
    what a topic decided about a run label (the newest one is the topic's current decision),
    ``flag`` marked a record whose rerun fell outside the declared tolerance (written by
    ledgers before schema 1.1; flags are now derived from the records themselves)."""

    schema_version: str = RESULT_SCHEMA_VERSION
    kind: Literal["promotion", "decision", "flag"]
    created_at: str
    topic: str
    run_label: str
    record_id: str = ""  # full hex digest of the record it is about ("" for a decision)
    level: Level | None = None  # promotion: the level reached
    text: str = ""  # decision text, or the flag's reason
    proof: dict[str, str] = {}  # promotion: what proved it; flag: the rerun's id
    prev: str = ""  # the file stored just before this one (see ResultRecord.prev)
    digest: str = ""
