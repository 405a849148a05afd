"""``results record``: complete a user's draft into a ResultRecord and store it.

Completing means adding what a user should not have to type and must not be able to fake:
the environment snapshot and its digest, the preflight verdict of the declared profile, the
git state, the sha256 of every artifact, the dispersion of every metric, the identity key and
the record digest. The claimed evidence level is then proven against the ladder, or refused.
"""

from __future__ import annotations

import hashlib
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from stackcheck.errors import InputError, Refused
from stackcheck.models.snapshot import Snapshot
from stackcheck.redaction import redact_snapshot, redact_value
from stackcheck.results import ladder
from stackcheck.results.contract import (
    Artifact,
    Dispersion,
    Draft,
    Event,
    GitState,
    Metric,
    ProfileRef,
    ResultRecord,
    problems,
)
from stackcheck.results.identity import content_digest, identity_key
from stackcheck.results.ledger import Ledger, Stored, default_root, utc_now
from stackcheck.sources import FactSource


@dataclass
class Recorded:
    stored: Stored
    record: ResultRecord
    flags: list[Event]  # earlier runs of the same candidate this run did not reproduce


def load_draft(source: Draft | dict | str | os.PathLike) -> Draft:
    """A draft from a file, a dict or a Draft, checked field by field (Refused lists them all)."""
    from stackcheck.fileio import decode_json, read_bytes, source_name
    from stackcheck.results.contract import missing_message

    if isinstance(source, Draft):
        draft = source
    elif isinstance(source, dict):
        if (missing := missing_message(source)) is not None:
            raise InputError(f"draft: {missing}")
        try:
            draft = msgspec.convert(source, Draft)
        except msgspec.ValidationError as exc:
            raise InputError(f"draft: {exc}") from None
    else:
        data, name = read_bytes(source, "result draft"), source_name(source)
        raw = decode_json(data, Any, name, "result draft")
        if (missing := missing_message(raw)) is not None:
            raise InputError(f"{name}: {missing}")
        draft = decode_json(data, Draft, name, "result draft")
    from stackcheck.results.contract import identifier_problems

    names = identifier_problems(draft)
    if names:  # the names a result is filed under appear in printed commands: bad input, exit 2
        raise InputError(f"{source if isinstance(source, (str, os.PathLike)) else 'draft'}: {names[0]}")
    found = problems(draft)
    if found:
        raise Refused("invalid result:\n  " + "\n  ".join(found))
    where = _not_unicode(msgspec.to_builtins(draft))
    if where:  # only a dict or Draft from Python can carry one; JSON text cannot
        raise InputError(f"{where[0]}: not valid Unicode text (a lone surrogate at position {where[1]})")
    return draft


def _not_unicode(value, where: str = "") -> tuple[str, int] | None:
    """(field path, position) of the first string that cannot be encoded as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return where or "(value)", exc.start
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        path = f"{where}.{key}".lstrip(".") if isinstance(key, str) else f"{where}[{key}]"
        found = _not_unicode(key, f"{path} (its name)") if isinstance(key, str) else None
        found = found or _not_unicode(item, path)
        if found:
            return found
    return None


def record(
    draft: Draft | dict | str | os.PathLike,
    *,
    snapshot: Snapshot | FactSource | str | os.PathLike | None = None,
    ledger: Ledger | None = None,
    registry: str | None = None,
    catalog: Any = None,
    cwd: str | os.PathLike | None = None,
) -> Recorded:
    """Complete, prove and store one result (the Python API of ``stackcheck results record``).

    ``snapshot`` (a Snapshot, a snapshot file, or any :class:`stackcheck.sources.FactSource`)
    defaults to a snapshot of the live environment; ``catalog`` to
    ``stackcheck.catalog.load_catalog(registry, cwd)``; ``ledger`` to the default ledger.
    Artifact paths are relative to ``cwd``. Raises Refused when the claimed evidence level
    is not proven, InputError for unreadable input.
    """
    cwd = Path(cwd or os.getcwd())
    d = load_draft(draft)
    snap = _snapshot(snapshot)
    own_ledger = ledger is None
    ledger = ledger or Ledger(default_root(cwd))
    try:
        rec = complete(
            d, snap, preflight(d.profile, snap, registry=registry, catalog=catalog, cwd=cwd), cwd=cwd
        )
        lacking = ladder.missing(rec, rec.evidence, ledger)
        if lacking:
            raise Refused(
                f"the result does not prove evidence level {rec.evidence!r}; missing:\n  - "
                + "\n  - ".join(lacking)
            )
        stored, flags, rec = ledger.store(rec)  # rec as stored: linked into the ledger's chain
        return Recorded(stored=stored, record=rec, flags=flags)
    finally:
        if own_ledger:
            ledger.index.close()


def preflight(
    profile_id: str, snapshot: Snapshot, *, registry=None, catalog=None, cwd=None
) -> tuple[ProfileRef, str]:
    """The declared profile judged on the snapshot → (reference with verdict, evidence scope)."""
    from stackcheck.judge import judge

    if catalog is None:
        from stackcheck.catalog import load_catalog

        catalog = load_catalog(registry=registry, cwd=cwd)
    profile = catalog.get(profile_id)  # InputError naming the registry for an unknown ID
    report = judge(snapshot, command="preflight", profile=profile)
    ref = ProfileRef(
        id=profile.id,
        registry_digest=catalog.digest,
        registry_source=catalog.source,
        verdict=report.verdict,
        failing_checks=sorted({c.id for c in report.checks if c.verdict in ("warning", "blocked", "error")}),
    )
    return ref, profile.evidence_scope


def complete(
    draft: Draft, snapshot: Snapshot, profile: tuple[ProfileRef, str], *, cwd: Path, now: str | None = None
) -> ResultRecord:
    """Everything a record carries besides the user's claim; pure except for hashing artifacts.
    The record is redacted (stackcheck.redaction) before its digests are taken: a write-once
    record can never lose a secret once stored, so none gets in (free text such as notes,
    failure_reason, backend args, the snapshot however it was obtained)."""
    from stackcheck import __version__
    from stackcheck.environment import snapshot_digest

    ref, scope = profile
    backend = draft.backend
    if not backend.version:
        installed = ladder.installed_version(snapshot, backend.name)
        backend = msgspec.structs.replace(backend, version=installed)
    claim = {f: getattr(draft, f) for f in draft.__struct_fields__ if f not in ("profile", "git")}
    claim.update(
        backend=backend,
        scope=draft.scope or scope,
        metrics={name: with_dispersion(m) for name, m in draft.metrics.items()},
        artifacts=[hashed(a, i, cwd) for i, a in enumerate(draft.artifacts)],
    )
    snapshot = redact_snapshot(snapshot)
    rec = ResultRecord(
        **redact_value(claim),
        created_at=now or utc_now(),
        profile=ref,
        snapshot=snapshot,
        snapshot_digest=snapshot_digest(snapshot),
        git=resolve_git(draft.git, git_state(cwd)),
        stackcheck_version=__version__,
    )
    rec.identity_key = identity_key(rec, ref.id)
    rec.digest = content_digest(rec)
    return rec


def with_dispersion(metric: Metric) -> Metric:
    reps = metric.repetitions
    if len(reps) < 2:
        return msgspec.structs.replace(metric, dispersion=None)
    mean = statistics.fmean(reps)
    stdev = statistics.stdev(reps)
    return msgspec.structs.replace(
        metric,
        dispersion=Dispersion(
            n=len(reps),
            mean=mean,
            stdev=stdev,
            min=min(reps),
            max=max(reps),
            cv=stdev / abs(mean) if mean else 0.0,
        ),
    )


def hashed(artifact: Artifact, i: int, cwd: Path) -> Artifact:
    """The artifact with the sha256 of its file; a given sha256 must match the file."""
    path = Path(artifact.path)
    path = path if path.is_absolute() else cwd / path
    if not path.is_file():
        if artifact.sha256:
            return artifact  # kept elsewhere; the declared hash stands
        raise InputError(
            f"artifacts[{i}].path: {artifact.path}: no such file (give its sha256 if it is kept elsewhere)"
        )
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise InputError(
            f"artifacts[{i}].path: {artifact.path}: cannot read: {exc.strerror or exc}"
        ) from None
    actual = h.hexdigest()
    if artifact.sha256 and artifact.sha256 != actual:
        raise Refused(
            f"artifacts[{i}]: {artifact.path} has sha256 {actual[:16]}…, the result declares {artifact.sha256[:16]}…"
        )
    return msgspec.structs.replace(artifact, sha256=actual)


def resolve_git(declared: GitState | None, observed: GitState) -> GitState:
    """The observed state of the working tree; a declared one only where none is observed,
    and never one that contradicts what is observed."""
    if observed.commit:
        if declared is not None and declared.commit and declared.commit != observed.commit:
            raise InputError(
                f"git.commit: the draft declares {declared.commit[:12]} but the working tree is at {observed.commit[:12]}"
            )
        return observed
    if declared is not None:
        return msgspec.structs.replace(declared, source="declared")
    return observed


def git_state(cwd: Path) -> GitState:
    """The commit and cleanliness of the working tree the result was recorded from."""
    from stackcheck.probe.proc import run

    head = run(["git", "-C", str(cwd), "rev-parse", "HEAD"], timeout=10)
    if not head.ok:
        return GitState()
    status = run(["git", "-C", str(cwd), "status", "--porcelain"], timeout=30)
    return GitState(
        commit=head.stdout.strip(),
        dirty=bool(status.stdout.strip()) if status.ok else None,
        source="observed",
    )


def _snapshot(snapshot: Snapshot | FactSource | str | os.PathLike | None) -> Snapshot:
    if isinstance(snapshot, Snapshot):
        return snapshot
    from stackcheck.environment import obtain
    from stackcheck.sources import FactSource

    if isinstance(snapshot, FactSource):
        return obtain(snapshot)
    return obtain(FactSource.snapshot(str(snapshot)) if snapshot is not None else None)
