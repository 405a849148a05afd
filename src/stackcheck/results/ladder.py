"""The evidence ladder, machine-checked: what a record must show to stand at each level.

smoke < mechanism < measured < reproduced < delivery. Each level needs everything below it.
:func:`missing` lists what a record lacks for a level (empty: the level is proven); ``record``
refuses a claim and ``promote`` refuses a promotion while anything is missing. A passing
profile never raises a level by itself: the level is always claimed, then proven.
"""

from __future__ import annotations

from typing import Protocol

from stackcheck.identifiers import printable
from stackcheck.results.contract import LEVELS, SERVING_BACKENDS, Event, Level, ResultRecord
from stackcheck.results.identity import environment_digest, provenance_changes
from stackcheck.shellcmd import code, command
from stackcheck.versions import parse_version

MIN_REPETITIONS = 3


class Evidence(Protocol):
    """What the ladder needs from the ledger (:class:`stackcheck.results.ledger.Ledger`)."""

    def same_candidate(self, record: ResultRecord) -> list[ResultRecord]: ...
    def flags(self, record: ResultRecord) -> list[Event]: ...
    def decisions(self, topic: str, run_label: str) -> list[Event]: ...


def rank(level: str) -> int:
    return LEVELS.index(level)


def missing(record: ResultRecord, level: Level, ledger: Evidence | None = None) -> list[str]:
    """What ``record`` lacks to stand at ``level`` (every level below included)."""
    out: list[str] = []
    for step in LEVELS[1 : rank(level) + 1]:
        out.extend(_RULES[step](record, ledger))
    return [printable(line) for line in out]  # one line each, whatever a hand-written record holds


def _mechanism(r: ResultRecord, _ledger) -> list[str]:
    out = []
    if r.status != "ok":
        out.append(f"status: a failed run ({r.failure_reason}) stays at smoke")
    m = r.model
    kernel = r.workload.kind == "kernel"  # synthetic inputs, no weights, tokenizer or template
    for field, what in (
        ("revision", "model revision pinned to a 40-hex commit"),
        ("tokenizer_revision", "tokenizer revision pinned to a 40-hex commit"),
        ("chat_template_sha256", "sha256 of the chat template actually used"),
        ("thinking_source", "where the thinking mode came from"),
        ("dtype", "dtype"),
    ):
        if not getattr(m, field) and (field == "dtype" or not kernel):
            out.append(f"model.{field}: {what}")
    b = r.backend
    if not b.version:
        out.append(f"backend.version: the version of {b.name}")
    else:
        installed = installed_version(r.snapshot, b.name)
        if installed and installed != b.version:
            out.append(f"backend.version: declared {b.version} but the snapshot has {b.name} {installed}")
    w = r.workload
    for field in ("manifest_sha256", "samples", "concurrency", "input_tokens", "output_tokens", "seed"):
        if getattr(w, field) in ("", None) and not (kernel and field in _NO_TOKENS):
            out.append(f"workload.{field}: part of the workload identity")
    verdict = r.profile.verdict
    if verdict not in ("ok", "warning"):
        failing = f" (failing: {', '.join(r.profile.failing_checks)})" if r.profile.failing_checks else ""
        out.append(
            f"profile: preflight of {r.profile.id} must pass at record time, it was {verdict}{failing}"
        )
    out.extend(scope_conflicts(r))
    return out


_NO_TOKENS = ("concurrency", "input_tokens", "output_tokens")  # not part of a kernel's workload


def scope_conflicts(r: ResultRecord) -> list[str]:
    """Evidence that cannot stand for the claim it is filed under."""
    out = fleet_problems(r)
    gpus = len(r.snapshot.visible_gpus())
    scope = r.scope or "cpu-smoke"
    # a distributed run of one GPU per rank is multi-GPU evidence: its ranks saw the GPUs
    fleet_gpus = r.fleet.world_size if r.fleet and all(x.gpus for x in r.fleet.ranks) else 0
    if scope in ("single-gpu", "multi-gpu") and gpus == 0:
        out.append(
            f"scope: a CPU-only environment cannot carry {scope} evidence (the snapshot has no visible GPU)"
        )
    elif scope == "multi-gpu" and gpus < 2 and fleet_gpus < 2:
        ranks = f", and a distributed run of {r.fleet.world_size} rank(s)" if r.fleet else ""
        out.append(
            "scope: single-GPU evidence cannot stand for a multi-GPU claim (the snapshot has "
            f"{gpus} visible GPU{ranks})"
        )
    if (scope == "training" or r.workload.kind == "training") and r.backend.name in SERVING_BACKENDS:
        out.append(
            f"backend.name: a serving backend's run ({r.backend.name}) cannot stand for a training mechanism"
        )
    return out


def fleet_problems(r: ResultRecord) -> list[str]:
    """A distributed run's fleet must list every rank once, rank 0 being the record's snapshot."""
    f = r.fleet
    if f is None:
        return []
    out = []
    ranks = sorted(x.rank for x in f.ranks)
    if ranks != list(range(f.world_size)):
        out.append(f"fleet.ranks: one snapshot digest per rank 0..{f.world_size - 1}, got ranks {ranks[:8]}")
    first = next((x for x in f.ranks if x.rank == 0), None)
    if first is not None and first.snapshot_digest != r.snapshot_digest:
        out.append("fleet.ranks: rank 0's snapshot digest is not the record's snapshot_digest")
    return out


def _measured(r: ResultRecord, _ledger) -> list[str]:
    out = []
    if not r.metrics:
        out.append("metrics: at least one metric")
    for name, metric in sorted(r.metrics.items()):
        if len(metric.repetitions) < MIN_REPETITIONS:
            out.append(
                f"metrics.{name}.repetitions: at least {MIN_REPETITIONS} repetitions with their dispersion, "
                f"got {len(metric.repetitions)}"
            )
    if not any(a.kind == "raw-log" and a.sha256 for a in r.artifacts):
        out.append('artifacts: the raw log with its sha256 (an artifact of kind "raw-log")')
    return out


def _reproduced(r: ResultRecord, ledger) -> list[str]:
    if ledger is None:
        return ["reproduced: needs the ledger to find an independent run"]
    out = [f"flag: {e.text}" for e in ledger.flags(r)]
    if not r.tolerance:
        out.append(
            'tolerance: the topic declares no tolerance for reproduction (e.g. "tolerance": {"*": 0.05})'
        )
        return out
    if not reproductions(r, ledger):
        out.append(
            "reproduced: an independent run with the same identity key from another environment snapshot, "
            "at least measured, within tolerance"
        )
        for other in ledger.same_candidate(r):
            reason = same_run(r, other) if other.digest != r.digest else ""
            if reason:
                out.append(f"reproduced: {_hex(other)[:16]} is not an independent run: {reason}")
    return out


def _delivery(r: ResultRecord, ledger) -> list[str]:
    out = []
    if not r.git.commit:
        out.append("git.commit: recorded from a git checkout")
    if r.git.dirty is not False:
        out.append("git.dirty: a clean git working tree (commit everything first)")
    elif r.git.source != "observed":
        out.append(
            "git.source: the git state observed by `record` in the checkout, not declared in the draft"
        )
    out.extend(unreleased(r))
    if ledger is None or not ledger.decisions(r.topic, r.run_label):
        decide = command("stackcheck", "results", "decide", r.topic, r.run_label, "--decision", "TEXT")
        out.append(f"decision: a recorded decision ({code(decide)})")
    return out


_RULES = {"mechanism": _mechanism, "measured": _measured, "reproduced": _reproduced, "delivery": _delivery}


# ----- helpers shared with the ledger and the diff ----------------------------------------
_DIST_OF_BACKEND = {"llama.cpp": "llama-cpp-python", "tensorrt-llm": "tensorrt-llm"}


def installed_version(snapshot, backend: str) -> str:
    """The version of a backend's distribution in a snapshot ("" when not installed)."""
    dist = snapshot.distribution(_DIST_OF_BACKEND.get(backend, backend))
    return dist.version if dist else ""


def _released(version: str) -> bool:
    v = parse_version(version)
    return v is not None and not (v.is_prerelease or v.is_devrelease)


def unreleased(r: ResultRecord) -> list[str]:
    """Versions a delivery must not rest on: pre/dev releases, editable or VCS installs."""
    out = []
    if not _released(r.backend.version):
        out.append(
            f"backend.version: {r.backend.name} {r.backend.version or '(none)'} is not a released version"
        )
    if r.backend.commit:
        out.append(
            f"backend.commit: {r.backend.name} built from commit {r.backend.commit[:12]}, not a release"
        )
    for name in (_DIST_OF_BACKEND.get(r.backend.name, r.backend.name), "torch", "stackcheck"):
        dist = r.snapshot.distribution(name)
        if dist is None:
            continue
        if not _released(dist.version):
            out.append(f"snapshot: {dist.name} {dist.version} is not a released version")
        elif dist.editable or (dist.direct_url and "vcs_info" in dist.direct_url):
            out.append(
                f"snapshot: {dist.name} is installed from a checkout "
                f"({'editable' if dist.editable else 'VCS'})"
            )
    return out


def within_tolerance(original: ResultRecord, rerun: ResultRecord) -> list[str]:
    """Metrics of ``rerun`` outside ``original``'s declared tolerance (empty: all within)."""
    tol = original.tolerance
    out = []
    for name, metric in sorted(original.metrics.items()):
        limit = tol.get(name, tol.get("*"))
        other = rerun.metrics.get(name)
        if limit is None:
            out.append(f"{name}: no tolerance declared")
        elif other is None:
            out.append(f"{name}: missing in the rerun")
        else:
            delta = relative_change(metric.value, other.value)
            if abs(delta) > limit:
                out.append(
                    f"{name}: {metric.value:g} → {other.value:g} ({delta:+.1%}, tolerance ±{limit:.1%})"
                )
    return out


def relative_change(a: float, b: float) -> float:
    """Signed change from ``a`` to ``b`` relative to ``a`` (0.05 = 5 % higher)."""
    if a == b:
        return 0.0
    return (b - a) / max(abs(a), 1e-12)


def same_run(r: ResultRecord, other: ResultRecord) -> str:
    """Why ``other`` is not an independent run of ``r`` ("" when it is one). Independent means
    from another environment: a snapshot that differs from ``r``'s in more than how, when and in
    which checkout it was taken (:data:`~stackcheck.results.identity.SNAPSHOT_PROVENANCE`). The
    same draft recorded twice in one environment, a minute apart, is one run."""
    if other.snapshot_digest == r.snapshot_digest:
        return "it was recorded with the same environment snapshot"
    if environment_digest(other.snapshot) == environment_digest(r.snapshot):
        changed = ", ".join(provenance_changes(r.snapshot, other.snapshot))
        return (
            f"its environment snapshot differs only in {changed} (how, when or in which checkout it was "
            "taken): the same environment, where a rerun shows repeatability, not reproduction"
        )
    return ""


def reproductions(r: ResultRecord, ledger: Evidence) -> list[ResultRecord]:
    """Independent runs that reproduce ``r``: same identity key, another environment
    (:func:`same_run`), ok, at least measured, every metric within ``r``'s tolerance."""
    return [
        other
        for other in ledger.same_candidate(r)
        if other.digest != r.digest
        and not same_run(r, other)
        and other.status == "ok"
        and not missing(other, "measured")
        and not within_tolerance(r, other)
    ]


def contradiction(original: ResultRecord, rerun: ResultRecord) -> Event | None:
    """The flag ``rerun`` puts on ``original`` (None: none): a later ok run of the same
    candidate from another snapshot with a metric outside ``original``'s declared tolerance.
    Derived from the two records alone, so it can neither be lost nor forged apart from them."""
    if (
        rerun.digest == original.digest
        or rerun.identity_key != original.identity_key
        or rerun.snapshot_digest == original.snapshot_digest
        or rerun.status != "ok"
        or original.status != "ok"
        or rerun.created_at < original.created_at
        or not original.tolerance
    ):
        return None
    outside = [o for o in within_tolerance(original, rerun) if "no tolerance" not in o]
    if not outside:
        return None
    return Event(
        kind="flag",
        created_at=rerun.created_at,
        topic=original.topic,
        run_label=original.run_label,
        record_id=_hex(original),
        text=f"rerun {_hex(rerun)[:16]} outside tolerance: " + "; ".join(outside),
        proof={"rerun": _hex(rerun)},
    )


def _hex(r: ResultRecord) -> str:
    return r.digest.partition(":")[2]
