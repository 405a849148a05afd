"""The facts every tracker and monitor gets: the key versions of an environment (from
:func:`stackcheck.results.compare.environment`, the facts that most often explain a changed
number) and a preflight report's verdict — redacted, flat, string-valued."""

from __future__ import annotations

from stackcheck.errors import InputError
from stackcheck.models.finding import Report
from stackcheck.models.snapshot import Snapshot
from stackcheck.redaction import redact_text, redact_value

__all__ = ["KEY_PACKAGES", "cannot_export", "key_versions", "snapshot_document", "verdict_facts"]

# the distributions whose versions most often change a number (shown when installed)
KEY_PACKAGES = (
    "torch",
    "torchvision",
    "transformers",
    "accelerate",
    "peft",
    "datasets",
    "tokenizers",
    "safetensors",
    "vllm",
    "sglang",
    "flash-attn",
    "xformers",
    "triton",
    "deepspeed",
    "bitsandbytes",
    "numpy",
)


def key_versions(snapshot: Snapshot) -> dict[str, str]:
    """``{"python": "3.12.3", "torch": "2.8.0+cu128", "hardware": "1x NVIDIA H100 …",
    "package.transformers": "4.57.1", …}``: only the facts that are known."""
    from stackcheck.results.compare import environment, hardware

    facts = environment(snapshot)
    out = {k: str(v) for k, v in facts.items() if v and not k.startswith("package.")}
    out["hardware"] = hardware(snapshot)
    for name in KEY_PACKAGES:
        version = facts.get(f"package.{name}")
        if version:
            out[f"package.{name}"] = str(version)
    return {k: redact_text(v) for k, v in out.items()}


def verdict_facts(report: Report) -> dict[str, str]:
    """The preflight verdict, its profile and the checks that were not ok."""
    failing = sorted({c.id for c in report.checks if c.verdict in ("warning", "blocked", "error")})
    return {
        "preflight.profile": report.profile or "",
        "preflight.verdict": report.verdict,
        "preflight.failing_checks": ",".join(failing),
        "snapshot_digest": report.snapshot_digest,
    }


def snapshot_document(snapshot: Snapshot) -> dict:
    """The snapshot as the JSON document an artifact holds, redacted."""
    import msgspec

    # the plain document is walked whole (a snapshot object marked as redacted is not walked
    # again); values of secret-named keys (HF_TOKEN …) become <redacted>
    return redact_value(msgspec.to_builtins(snapshot))


def record_tags(entry) -> dict[str, str]:
    """What names a ledger entry's run in a tracker: record id, topic, run label, candidate,
    evidence level (effective), status, backend, flagged."""
    from stackcheck.results.identity import short

    rec = entry.record
    return {
        k: redact_text(v)
        for k, v in {
            "stackcheck.record": short(rec.digest),
            "stackcheck.topic": rec.topic,
            "stackcheck.run_label": rec.run_label,
            "stackcheck.candidate": short(rec.identity_key, 12),
            "stackcheck.evidence": entry.level,
            "stackcheck.status": rec.status,
            "stackcheck.backend": rec.backend.name,
            "stackcheck.flagged": "true" if entry.flags else "false",
            "stackcheck.profile": rec.profile.id,
            "stackcheck.preflight.verdict": rec.profile.verdict,
        }.items()
    }


def record_identity(rec) -> dict[str, str]:
    """A record's experiment identity, flattened (``model.id``, ``backend.args.…``, ``workload.…``)."""
    from stackcheck.results.compare import flatten
    from stackcheck.results.identity import identity_fields

    flat = flatten(redact_value(identity_fields(rec, rec.profile.id)))
    return {k: str(v) for k, v in sorted(flat.items()) if v not in (None, "", [], {})}


def cannot_export(tracker: str, uri: str, exc: BaseException) -> InputError:
    """The one-line error of an export the tracker at ``uri`` refused; credentials redacted."""
    text = str(exc).strip()
    reason = text.splitlines()[0] if text else type(exc).__name__
    return InputError(f"{tracker} at {redact_text(uri)}: cannot export: {redact_text(reason)}")
