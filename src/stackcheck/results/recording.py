"""``results record``: complete a user's draft into a ResultRecord and store it.

Completing means adding what a user should not have to type and must not be able to fake:
the environment snapshot and its digest, the preflight verdict of the declared profile, the
git state, the sha256 of every artifact, the dispersion of every metric, the identity key and
the record digest. The claimed evidence level is then proven against the ladder, or refused.
"""

from __future__ import annotations

import hashlib
import os
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from stackcheck.errors import InputError, Refused
from stackcheck.models.finding import Report
from stackcheck.models.fleet import FleetInfo
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
    report: Report | str | os.PathLike | None = None,
    artifact: str | os.PathLike | None = None,
) -> Recorded:
    """Complete, prove and store one result (the Python API of ``stackcheck results record``).

    ``snapshot`` (a Snapshot, a snapshot file, or any :class:`stackcheck.sources.FactSource`)
    defaults to a snapshot of the live environment; ``catalog`` to
    ``stackcheck.catalog.load_catalog(registry, cwd)``; ``ledger`` to the default ledger.
    Artifact paths are relative to ``cwd``. ``report``: a preflight Report of the declared
    profile on this same snapshot (or the file ``stackcheck preflight --json`` wrote), used
    instead of judging again. ``artifact``: the model or adapter directory the result was
    measured with; it fills the model, adapter and tokenizer identity the draft leaves empty
    (:func:`with_artifact`). Raises Refused when the claimed evidence level is not proven
    or the report is of another snapshot, InputError for unreadable input.
    """
    from stackcheck.environment import snapshot_digest

    cwd = Path(cwd or os.getcwd())
    d = load_draft(draft)
    if artifact is not None:
        d = with_artifact(d, artifact)
    snap = _snapshot(snapshot)
    digest = snapshot_digest(snap)
    own_ledger = ledger is None
    ledger = ledger or Ledger(default_root(cwd))
    try:
        fleet = None
        if report is None:
            judged = preflight(d.profile, snap, registry=registry, catalog=catalog, cwd=cwd, digest=digest)
        else:
            loaded = _load_report(report)
            where = None if isinstance(report, Report) else str(report)
            judged = from_report(
                loaded, d.profile, digest, registry=registry, catalog=catalog, cwd=cwd, where=where
            )
            fleet = loaded.fleet  # a distributed run's: every rank's snapshot digest comes along
        rec = complete(d, snap, judged, cwd=cwd, digest=digest, fleet=fleet)
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


# Preflight verdicts already judged in this process: (snapshot digest, profile, registry
# digest, registry source) → (reference, scope). Checks are pure functions of snapshot,
# profile and knowledge, so a second record of the same environment need not judge again.
_JUDGED: dict[tuple[str, str, str, str], tuple[ProfileRef, str]] = {}
_JUDGED_MAX = 16


def preflight(
    profile_id: str, snapshot: Snapshot, *, registry=None, catalog=None, cwd=None, digest: str | None = None
) -> tuple[ProfileRef, str]:
    """The declared profile judged on the snapshot → (reference with verdict, evidence scope).
    Judged once per process for one (snapshot, profile, registry); ``digest`` is the
    snapshot's digest when the caller has it."""
    from stackcheck.environment import snapshot_digest
    from stackcheck.judge import judge

    catalog = _catalog(catalog, registry, cwd)
    profile = catalog.get(profile_id)  # InputError naming the registry for an unknown ID
    key = (digest or snapshot_digest(snapshot), profile.id, catalog.digest, catalog.source)
    if key not in _JUDGED:
        report = judge(snapshot, command="preflight", profile=profile)
        while len(_JUDGED) >= _JUDGED_MAX:
            del _JUDGED[next(iter(_JUDGED))]
        _JUDGED[key] = (_profile_ref(profile.id, catalog, report), profile.evidence_scope)
    ref, scope = _JUDGED[key]
    return msgspec.structs.replace(ref, failing_checks=list(ref.failing_checks)), scope


def from_report(
    report: Report | str | os.PathLike,
    profile_id: str,
    digest: str,
    *,
    registry=None,
    catalog=None,
    cwd=None,
    where: str | None = None,
) -> tuple[ProfileRef, str]:
    """The preflight verdict a Report (or the file of ``stackcheck preflight --json``) gives
    for ``profile_id`` on the snapshot whose digest is ``digest``: refused (one line) when it
    judged another snapshot, profile or registry, or skipped checks."""
    where = where or ("preflight report" if isinstance(report, Report) else str(report))
    report = _load_report(report)
    if report.kind != "preflight":
        raise InputError(
            f"{where}: kind: expected a preflight report (stackcheck preflight --json), got {report.kind!r}"
        )
    catalog = _catalog(catalog, registry, cwd)
    profile = catalog.get(profile_id)
    problem = _report_problem(report, profile.id, digest, catalog.source)
    if problem:
        raise Refused(f"{where}: not this result's preflight: {problem}")
    return _profile_ref(profile.id, catalog, report), profile.evidence_scope


def _load_report(report: Report | str | os.PathLike) -> Report:
    if isinstance(report, Report):
        return report
    from stackcheck.fileio import load_json

    return load_json(report, Report, "preflight report")


SKIPPED_BY_USER = "skipped by --skip"  # the reason stackcheck.checks.registry.run_checks gives


def _report_problem(report: Report, profile_id: str, digest: str, registry_source: str) -> str:
    """Why ``report`` is not the preflight of this result, or ""."""
    from stackcheck.models.finding import worst

    if report.profile != profile_id:
        return f"it judged profile {report.profile!r}, the result declares {profile_id!r}"
    if report.snapshot_digest != digest:
        return (
            f"it judged snapshot {report.snapshot_digest[:19] or '(none)'}…, the result's is {digest[:19]}…;"
            " run preflight and record on one snapshot (--snapshot FILE)"
        )
    used = report.environment.get("registry", "")
    if not _same_source(used, registry_source):
        return f"it used registry {used or '(unknown)'}, the result {registry_source}"
    skipped = sorted({c.id for c in report.checks if c.verdict == "skipped" and c.reason == SKIPPED_BY_USER})
    if skipped:
        return f"it skipped {', '.join(skipped)} (--skip)"
    if not report.checks:
        return "it has no checks"
    if report.verdict != worst(c.verdict for c in report.checks):
        return f"its verdict {report.verdict!r} is not the worst of its checks"
    return ""


def _same_source(a: str, b: str) -> bool:
    """One registry: the same text ("builtin"), or paths to the same file."""
    if a == b:
        return True
    try:
        return bool(a and b) and os.path.samefile(a, b)
    except OSError:
        return False


def _catalog(catalog, registry, cwd):
    if catalog is not None:
        return catalog
    from stackcheck.catalog import load_catalog

    return load_catalog(registry=registry, cwd=cwd)


def _profile_ref(profile_id: str, catalog, report: Report) -> ProfileRef:
    return ProfileRef(
        id=profile_id,
        registry_digest=catalog.digest,
        registry_source=catalog.source,
        verdict=report.verdict,
        failing_checks=sorted({c.id for c in report.checks if c.verdict in ("warning", "blocked", "error")}),
    )


def complete(
    draft: Draft,
    snapshot: Snapshot,
    profile: tuple[ProfileRef, str],
    *,
    cwd: Path,
    now: str | None = None,
    digest: str | None = None,
    fleet: FleetInfo | None = None,
) -> ResultRecord:
    """Everything a record carries besides the user's claim; pure except for hashing artifacts
    and reading the git state. ``digest``: the snapshot's digest when the caller has it. The
    record is redacted (stackcheck.redaction) before its digests are taken: a write-once
    record can never lose a secret once stored, so none gets in (free text such as notes,
    failure_reason, backend args, the snapshot however it was obtained)."""
    from stackcheck import __version__
    from stackcheck.environment import snapshot_digest

    ref, scope = profile
    backend = with_engine(draft.backend, snapshot)
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
        snapshot_digest=digest or snapshot_digest(snapshot),
        git=resolve_git(draft.git, git_state(cwd)),
        stackcheck_version=__version__,
        fleet=fleet,
    )
    rec.identity_key = identity_key(rec, ref.id)
    rec.digest = content_digest(rec)
    return rec


def with_artifact(draft: Draft, path: str | os.PathLike) -> Draft:
    """``draft`` with the model identity it leaves empty filled from the artifact at ``path``:
    the revision (and tokenizer revision) of a hub cache snapshot, or for an adapter the base
    revision it declares; the dtype; the chat template's sha256; the adapter's identity."""
    from stackcheck.artifacts.identity import identify

    ident = identify(path)
    model = draft.model
    adapter = ident.adapter
    revision = ident.revision or (adapter.base_revision if adapter else "")
    if not re.fullmatch(r"[0-9a-f]{40}", revision):
        revision = ""  # a branch name pins nothing
    filled = msgspec.structs.replace(
        model,
        revision=model.revision or revision,
        tokenizer_revision=model.tokenizer_revision
        or (ident.revision if ident.tokenizer_in_snapshot else ""),
        chat_template_sha256=model.chat_template_sha256 or ident.chat_template_sha256,
        dtype=model.dtype or ident.dtype,
        adapter=model.adapter or adapter,
    )
    return msgspec.structs.replace(draft, model=filled)


def with_engine(backend, snapshot: Snapshot):
    """``backend`` with what the draft left empty filled from the snapshot's engines section:
    the version, the commit, and the build (the wheel's CUDA variant, the torch it was built
    for, llama.cpp's build number, compiler and backends; for TensorRT-LLM the TensorRT
    version, the CUDA of the torch build and the GPU). What the draft states is kept."""
    engine = snapshot.engines.get(backend.name)
    if engine is None:
        return backend
    build: dict = {
        "variant": engine.build,
        "torch": engine.torch,
        "backends": engine.backends,
        "compiler": engine.compiler,
        "ngc_release": engine.container,
    }
    if backend.name == "tensorrt-llm":
        trt = snapshot.engines.get("tensorrt")
        gpus = snapshot.accelerators.gpus
        build.update(
            tensorrt=trt.version if trt else "",
            cuda=snapshot.torch.cuda or "",
            gpu=gpus[0].name if gpus else "",
        )
    return msgspec.structs.replace(
        backend,
        version=backend.version or engine.version,
        commit=backend.commit or engine.commit,
        build=backend.build or {k: v for k, v in build.items() if v},
    )


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
            f"artifacts[{i}]: {artifact.path} has sha256 {actual[:16]}…, the result declares "
            f"{artifact.sha256[:16]}…"
        )
    return msgspec.structs.replace(artifact, sha256=actual)


def resolve_git(declared: GitState | None, observed: GitState) -> GitState:
    """The observed state of the working tree; a declared one only where none is observed,
    and never one that contradicts what is observed."""
    if observed.commit:
        if declared is not None and declared.commit and declared.commit != observed.commit:
            raise InputError(
                f"git.commit: the draft declares {declared.commit[:12]} but the working tree is "
                f"at {observed.commit[:12]}"
            )
        return observed
    if declared is not None:
        return msgspec.structs.replace(declared, source="declared")
    return observed


def git_state(cwd: Path) -> GitState:
    """The commit and cleanliness (untracked files count) of the working tree the result was
    recorded from. Outside a repository (no ``.git`` above ``cwd``) git is not started."""
    from stackcheck.probe import git

    found = git.find_repository(str(cwd))
    if found is None:
        return GitState()
    root, git_dir = found
    commit = git.head(root, git_dir)[1]
    if not commit:
        return GitState()
    dirty, _ = git.dirty(root, untracked=True, timeout=30)
    return GitState(commit=commit, dirty=dirty, source="observed")


def _snapshot(snapshot: Snapshot | FactSource | str | os.PathLike | None) -> Snapshot:
    if isinstance(snapshot, Snapshot):
        return snapshot
    from stackcheck.environment import obtain
    from stackcheck.sources import FactSource

    if isinstance(snapshot, FactSource):
        return obtain(snapshot)
    return obtain(FactSource.snapshot(str(snapshot)) if snapshot is not None else None)
