"""The result contract: what a number must carry to be comparable across machines and months.

The types (:class:`Draft`, :class:`ResultRecord`, :class:`Claim`, :class:`Event` …) are
contracts and live in :mod:`stackcheck.models.result`, re-exported here. This module checks
what a type cannot express (40-hex revisions, failure reasons …): :func:`problems` returns
every problem at once as ``field: what is wrong``.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from stackcheck.identifiers import problem, shown
from stackcheck.models.result import (
    LEVELS,
    RESULT_SCHEMA_VERSION,
    SERVING_BACKENDS,
    Artifact,
    BackendIdentity,
    BackendName,
    Claim,
    Dispersion,
    Draft,
    Event,
    GitState,
    Level,
    Metric,
    ModelIdentity,
    ProfileRef,
    ResultRecord,
    Scope,
    WorkloadIdentity,
)
from stackcheck.redaction import redact_text

__all__ = [
    "LEVELS",
    "RESULT_SCHEMA_VERSION",
    "SERVING_BACKENDS",
    "Artifact",
    "BackendIdentity",
    "BackendName",
    "Claim",
    "Dispersion",
    "Draft",
    "Event",
    "GitState",
    "Level",
    "Metric",
    "ModelIdentity",
    "ProfileRef",
    "ResultRecord",
    "Scope",
    "WorkloadIdentity",
    "identifier_problems",
    "problems",
]

_HEX40 = re.compile(r"[0-9a-f]{40}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


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
    return (
        f"missing required field{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
        f"(a result draft needs {', '.join(required_fields(Draft))})"
    )


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
            out.append(
                f"{name}: looks like it holds a credential; names are printed and stored, keep secrets out"
            )
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
        out.append(
            f"workload.manifest_sha256: expected 64 lowercase hex characters, got {w.manifest_sha256!r}"
        )
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
