"""A run's jobs → records for the store: scan every log, read every JUnit file and sidecar
fact, decide each job's outcome. Everything is read before anything is stored, so unusable
input stops an ingest before its transaction begins."""

from __future__ import annotations

import itertools
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from stackcheck.errors import InputError
from stackcheck.mining.envfacts import facts_from_job_name, facts_from_snapshot
from stackcheck.mining.extract import JobScan, scan_lines
from stackcheck.mining.inputs import JobSource, LogFile
from stackcheck.mining.junit import read_junit
from stackcheck.mining.signature import Failure
from stackcheck.triage.reader import iter_lines

__all__ = ["JobRecord", "scan_job", "scan_jobs"]

MAX_FAILURES = 200  # signatures stored per job


@dataclass
class JobRecord:
    run: str
    job: str
    attempt: int
    family: str
    outcome: str  # failed | passed
    facts: dict[str, str]
    failures: list[Failure] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # signature key → occurrences
    lines: int = 0
    source: str = ""

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.run, self.job, self.attempt)


def _lines(logs: list[LogFile]) -> Iterator[str]:
    """The cleaned lines of a job's logs, one after the other (a job split in step files)."""
    for log in logs:
        with log.open() as fh:
            yield from iter_lines(fh, log.label)


def _readable(what: str, step: Callable):
    """Run a read; a truncated or corrupt archive member becomes an InputError naming it."""
    try:
        return step()
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise InputError(f"{what}: truncated or corrupt archive member ({exc})") from None
    except OSError as exc:
        raise InputError(f"{what}: cannot read: {exc.strerror or exc}") from None


def scan_job(src: JobSource) -> JobRecord:
    family, facts = facts_from_job_name(src.job)
    scan = JobScan()
    if src.logs:
        label = (
            src.logs[0].label if len(src.logs) == 1 else f"{src.logs[0].label} (+{len(src.logs) - 1} steps)"
        )
        scan = _readable(label, lambda: scan_lines(_lines(src.logs)))
    junit_failed = False
    for report in src.junit:
        failures, _cases = _readable(report.label, lambda r=report: read_junit(r))
        junit_failed = junit_failed or bool(failures)
        for failure in failures:
            if failure.key not in scan.failures:
                scan.add(failure)
    facts.update(scan.facts)
    if src.snapshot is not None:
        from stackcheck.fileio import decode_json
        from stackcheck.models.snapshot import Snapshot

        snap = src.snapshot
        data = _readable(snap.label, lambda: _read_all(snap))
        facts.update(facts_from_snapshot(decode_json(data, Snapshot, snap.label, "snapshot")))
    facts.update(src.env)
    if "os" in facts and "platform" not in src.env:
        from stackcheck.mining.envfacts import platform_of

        facts["platform"] = platform_of(facts["os"]) or facts.get("platform", "")
    outcome = src.outcome or ("failed" if scan.failed or junit_failed else "passed")
    failures = list(itertools.islice(scan.failures.values(), MAX_FAILURES))
    return JobRecord(
        run=src.run,
        job=src.job,
        attempt=src.attempt,
        family=src.family or family,
        outcome=outcome,
        facts=facts,
        failures=failures,
        counts={f.key: scan.counts.get(f.key, 1) for f in failures},
        lines=scan.lines,
        source=src.where or (src.logs[0].label if src.logs else src.junit[0].label if src.junit else ""),
    )


def _read_all(log: LogFile, limit: int = 64 << 20) -> bytes:
    with log.open() as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{log.label}: larger than {limit >> 20} MiB, expected a snapshot JSON")
    return data


def scan_jobs(
    sources: list[JobSource], progress: Callable[[int, int, JobSource], None] | None = None
) -> list[JobRecord]:
    """Scan every job; two sources naming one (run, job, attempt) are an InputError."""
    records: list[JobRecord] = []
    seen: dict[tuple[str, str, int], str] = {}
    for i, src in enumerate(sources):
        key = (src.run, src.job, src.attempt)
        if key in seen:
            raise InputError(
                f"{src.where or src.job}: run {src.run}, job {src.job!r}, attempt {src.attempt}: "
                f"given twice (also {seen[key]})"
            )
        seen[key] = src.where or src.job
        if progress:
            progress(i, len(sources), src)
        records.append(scan_job(src))
    return records
