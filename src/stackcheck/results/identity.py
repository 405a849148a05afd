"""Digests: what makes two runs the same candidate, and what makes a record the same record.

The identity key hashes the experiment's identity only (topic, model, tokenizer, template,
thinking mode, backend, workload, profile), never the environment or the metrics: same key →
another run of the same candidate. The record digest hashes the whole record and names its
file, so a record edited after the fact no longer matches its name.
"""

from __future__ import annotations

import hashlib

import msgspec

from stackcheck.results.contract import Claim

# The fields of the model identity that make a new candidate when they change.
MODEL_IDENTITY = (
    "id",
    "revision",
    "tokenizer_revision",
    "chat_template_sha256",
    "thinking",
    "dtype",
    "quantization",
)


def canonical(obj) -> bytes:
    """Canonical JSON: sorted keys, no whitespace (msgspec's encoding is deterministic)."""
    return msgspec.json.encode(obj, order="sorted")


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def identity_fields(claim: Claim, profile_id: str) -> dict:
    """The experiment's identity as a plain mapping (also what ``results diff`` compares)."""
    return {
        "topic": claim.topic,
        "profile": profile_id,
        "model": _model_fields(claim.model),
        "backend": msgspec.to_builtins(claim.backend),
        "workload": msgspec.to_builtins(claim.workload),
    }


def _model_fields(model) -> dict:
    """The model's identity fields; the adapter only when one is mounted (so the key of a
    result without an adapter is what it was before adapters were recorded)."""
    fields = {f: getattr(model, f) for f in MODEL_IDENTITY}
    if model.adapter is not None:
        fields["adapter"] = msgspec.to_builtins(model.adapter)
    return fields


def identity_key(claim: Claim, profile_id: str) -> str:
    return sha256(canonical(identity_fields(claim, profile_id)))


# Fields added after schema 1.0: left out of the digest while empty ("" or None), so a file
# written before they existed still hashes to the digest it was named after.
_LATER_FIELDS = ("prev", "fleet")


def content_digest(obj) -> str:
    """sha256 of a record or event with its ``digest`` field empty."""
    return data_digest(msgspec.to_builtins(obj))


def data_digest(data: dict) -> str:
    """:func:`content_digest` of a record or event as decoded JSON. A stored file is verified
    by what it holds, so a field a later version adds (with its default) does not make an
    older file look tampered."""
    data = {**data, "digest": ""}
    for name in _LATER_FIELDS:
        if name in data and data[name] in ("", None):
            del data[name]
    return sha256(canonical(data))


# Snapshot sections that say how, when and in which checkout a snapshot was taken (tool:
# captured_at, command, stackcheck's version; git: the checkout's commit and state), not what
# the environment is.
SNAPSHOT_PROVENANCE = ("tool", "git")


def environment_digest(snapshot) -> str:
    """sha256 of a snapshot without its provenance sections: two snapshots of one unchanged
    environment taken a minute apart, or after a commit, have the same environment digest."""
    blank = {name: type(getattr(snapshot, name))() for name in SNAPSHOT_PROVENANCE}
    return sha256(canonical(msgspec.structs.replace(snapshot, **blank)))


def provenance_changes(a, b) -> list[str]:
    """The provenance fields (``tool.captured_at`` …) in which two snapshots differ."""
    out: list[str] = []
    for name in SNAPSHOT_PROVENANCE:
        x, y = getattr(a, name), getattr(b, name)
        out.extend(f"{name}.{f}" for f in x.__struct_fields__ if getattr(x, f) != getattr(y, f))
    return out


def short(digest: str, n: int = 16) -> str:
    """``sha256:abcd…`` → ``abcd…`` (first ``n`` hex characters): record ids, candidate ids."""
    return digest.partition(":")[2][:n]
