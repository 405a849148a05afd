"""The result contract: what a number must carry to be comparable across machines and months.

A user writes a :class:`Draft` (identity, metrics, status); ``results record`` completes it
into a :class:`ResultRecord` (snapshot, preflight verdict, git state, digests). Both share the
claim fields through :class:`Claim`. Types are checked by msgspec on decode; the formats a
type cannot express (40-hex revisions, failure reasons …) are checked by
:func:`stackcheck.results.contract.problems`. The ledger's :class:`Event` is here too.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from stackcheck.models.fleet import FleetInfo
from stackcheck.models.snapshot import Snapshot

# 1.1: records and events name their predecessor in the ledger (``prev``); 1.0 files stay valid
RESULT_SCHEMA_VERSION = "1.1"

Level = Literal["smoke", "mechanism", "measured", "reproduced", "delivery"]
LEVELS: tuple[str, ...] = Level.__args__  # type: ignore[attr-defined]  # ladder order, lowest first

# torch, flash-attn, xformers: the kernel paths `stackcheck bench` measures (args name the path)
BackendName = Literal[
    "transformers", "vllm", "sglang", "llama.cpp", "tensorrt-llm", "torch", "flash-attn", "xformers"
]
SERVING_BACKENDS = frozenset({"vllm", "sglang", "llama.cpp", "tensorrt-llm"})

# What the evidence claims to cover (Profile.evidence_scope plus training).
Scope = Literal["cpu-smoke", "single-gpu", "multi-gpu", "serving", "training"]


class AdapterIdentity(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The LoRA / PEFT adapter mounted on the model (``results record --artifact``, the registry)."""

    name: str  # its registry name, or its directory's name
    base_model: str = ""  # base_model_name_or_path as the adapter declares it
    base_revision: str = ""  # the revision it declares
    weights_sha256: str = ""  # of adapter_model.safetensors (or .bin)
    config_sha256: str = ""  # of adapter_config.json
    tokenizer_sha256: str = ""  # over its own tokenizer files, when it has them
    r: int | None = None
    lora_alpha: float | None = None


class ModelIdentity(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    id: str  # hub repo id or local name, "Qwen/Qwen2.5-0.5B-Instruct"
    revision: str = ""  # 40-hex commit of the weights
    tokenizer_revision: str = ""  # 40-hex commit of the tokenizer files
    chat_template_sha256: str = ""  # of the template text actually rendered
    thinking: Literal["on", "off", "n/a"] = "n/a"  # effective thinking mode
    thinking_source: str = ""  # where it came from: "chat_template_kwargs", "model default" …
    dtype: str = ""  # bfloat16 | float16 | float32 …
    quantization: str = "none"  # none | awq | gptq | fp8 | Q4_K_M …
    adapter: AdapterIdentity | None = None  # the adapter mounted on it, if any


class BackendIdentity(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: BackendName
    version: str = ""  # filled from the snapshot when the backend is an installed distribution
    args: dict[str, Any] = {}  # engine / generation arguments that change the number
    build: dict[str, Any] = {}  # build options (CUDA arch list, flash-attn, GGML_CUDA …)
    commit: str = ""  # source commit for builds from a checkout


class WorkloadIdentity(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    # required: no silent default; kernel: one operation on synthetic inputs (stackcheck bench),
    # where the manifest is the sha256 of the case (shape, dtype, seed) and no model is involved
    kind: Literal["inference", "serving", "training", "kernel"]
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
    verdict: Literal["ok", "warning", "blocked", "skipped", "error", "unknown"] = (
        "unknown"  # preflight at record time
    )
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
    # recorded from a distributed run (the --report of `preflight --distributed`): the world size
    # and every rank's snapshot digest; rank 0's is ``snapshot_digest`` (None: one process)
    fleet: FleetInfo | None = None
    digest: str = ""  # "sha256:…" of this record with digest = ""


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
