"""Where a run's job logs are: a GitHub Actions run as downloaded, a folder, one file.

- A run's logs zip (``gh run download``'s or the web UI's "Download log archive"), or that
  zip unpacked: ``N_<job name>.txt`` holds a job's whole log, ``<job name>/N_<step>.txt`` its
  steps (used only when the whole log is missing).
- A folder with a ``runs.jsonl`` sidecar: one JSON object a line, ``{"run", "job", "attempt",
  "outcome", "env", "log", "junit", "snapshot", "family"}`` (paths relative to the sidecar).
  A sidecar beside a zip or a GitHub Actions folder instead adds outcome, attempt and
  environment to the jobs it names.
- One file: a plain-text log or pytest output, or a JUnit XML file (``.xml``).

Nothing is read here but names and the sidecar; logs are opened when they are scanned.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, cast

from stackcheck.errors import InputError
from stackcheck.mining.envfacts import facts_from_env

__all__ = ["JobSource", "LogFile", "SIDECAR", "discover", "read_sidecar"]

SIDECAR = "runs.jsonl"
MAX_MEMBERS = 20_000  # files of one run's archive or folder
MAX_SIDECAR_LINE = 1 << 20
_OUTCOMES = {
    "failed": "failed",
    "failure": "failed",
    "passed": "passed",
    "success": "passed",
    "succeeded": "passed",
}
_NOT_ATTEMPTS = {"cancelled", "canceled", "skipped", "neutral"}
_NUMBERED = re.compile(r"^(\d+)_(.+)$")
_LOG_SUFFIXES = (".txt", ".log", ".out")


@dataclass
class LogFile:
    label: str  # how messages name it: a path, or "run.zip: 3_test (…).txt"
    open: Callable[[], BinaryIO]


@dataclass
class JobSource:
    """One attempt of one job of one run, and where its logs and facts are."""

    run: str
    job: str
    attempt: int = 1
    family: str = ""  # the job without its matrix values; from the job name when not given
    outcome: str | None = None  # failed | passed when the sidecar (or the caller) says so
    env: dict[str, str] = field(default_factory=dict)  # facts the sidecar gives
    logs: list[LogFile] = field(default_factory=list)
    junit: list[LogFile] = field(default_factory=list)
    snapshot: LogFile | None = None
    where: str = ""  # the sidecar line it came from, for messages


@dataclass
class _Entry:
    line: int
    run: str | None
    job: str
    attempt: int
    outcome: str | None
    env: dict[str, str]
    family: str
    log: str | None
    junit: list[str]
    snapshot: str | None


def _file(path: Path) -> LogFile:
    return LogFile(str(path), lambda: open(path, "rb"))  # noqa: SIM115 - the scanner closes it


def read_sidecar(path: Path) -> list[_Entry]:
    """The entries of a ``runs.jsonl``; a bad line is an InputError naming file and line."""
    entries: list[_Entry] = []
    try:
        fh = open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise InputError(f"{path}: cannot read the sidecar: {exc.strerror or exc}") from None
    with fh:
        for n, raw in enumerate(iter(lambda: fh.readline(MAX_SIDECAR_LINE + 1), b""), 1):
            where = f"{path}: line {n}"
            if len(raw) > MAX_SIDECAR_LINE:
                raise InputError(f"{where}: longer than {MAX_SIDECAR_LINE} bytes, expected one JSON object")
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                raise InputError(f"{where}: not JSON ({exc}); expected one object a line") from None
            except RecursionError:
                raise InputError(
                    f"{where}: JSON nested too deeply; expected one flat object a line"
                ) from None
            if not isinstance(obj, dict):
                raise InputError(f"{where}: expected a JSON object, found {type(obj).__name__}")
            entry = _entry(where, n, obj)
            if entry is not None:
                entries.append(entry)
    return entries


def _entry(where: str, n: int, obj: dict) -> _Entry | None:
    job = obj.get("job")
    if not isinstance(job, str) or not job.strip():
        raise InputError(f"{where}: job: expected the job's name (a non-empty string)")
    attempt = obj.get("attempt", 1)
    if not isinstance(attempt, int) or isinstance(attempt, bool) or attempt < 1:
        raise InputError(f"{where}: attempt: expected a whole number >= 1, found {attempt!r}")
    outcome = obj.get("outcome")
    if outcome is not None:
        if not isinstance(outcome, str) or outcome.lower() not in {*_OUTCOMES, *_NOT_ATTEMPTS}:
            raise InputError(
                f"{where}: outcome: expected failed or passed (or success/failure), found {outcome!r}"
            )
        if outcome.lower() in _NOT_ATTEMPTS:
            return None  # a cancelled or skipped job is no attempt
        outcome = _OUTCOMES[outcome.lower()]
    env = obj.get("env", {})
    if not isinstance(env, dict):
        raise InputError(f"{where}: env: expected an object of facts, found {type(env).__name__}")
    junit = obj.get("junit", [])
    junit = [junit] if isinstance(junit, str) else junit
    for key, value in (
        ("log", obj.get("log")),
        ("snapshot", obj.get("snapshot")),
        ("family", obj.get("family")),
    ):
        if value is not None and not isinstance(value, str):
            raise InputError(f"{where}: {key}: expected a string, found {type(value).__name__}")
    if not isinstance(junit, list) or not all(isinstance(j, str) for j in junit):
        raise InputError(f"{where}: junit: expected a path or a list of paths")
    run = obj.get("run")
    return _Entry(
        n,
        None if run is None else str(run),
        job.strip(),
        attempt,
        outcome,
        facts_from_env(env),
        obj.get("family") or "",
        obj.get("log"),
        junit,
        obj.get("snapshot"),
    )


def run_id_of(path: Path) -> str:
    """A run ID from a download's name: ``logs_6234567890.zip`` → ``6234567890``."""
    digits = re.findall(r"\d{4,}", path.name)
    return digits[-1] if digits else path.stem


def discover(
    path: str | Path,
    *,
    run: str | None = None,
    attempt: int | None = None,
    job: str | None = None,
    outcome: str | None = None,
    sidecar: str | Path | None = None,
) -> list[JobSource]:
    """The job attempts at ``path`` (see the module doc). ``run``/``attempt``/``job``/``outcome``
    override what the names and the sidecar say."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file or folder")
    side = Path(sidecar) if sidecar else (p / SIDECAR if p.is_dir() and (p / SIDECAR).is_file() else None)
    entries = read_sidecar(side) if side else []
    if p.is_dir() and side is not None and entries and all(e.log for e in entries):
        jobs = [_from_entry(side, e) for e in entries]
    else:
        if p.is_dir():
            jobs = _folder_jobs(p)
        elif zipfile.is_zipfile(p) or p.suffix.lower() == ".zip":
            jobs = _zip_jobs(p)
        else:
            jobs = [_single(p)]
        default_run = run_id_of(p)
        for j in jobs:
            j.run = default_run
        if entries and side is not None:  # entries come only from a sidecar
            jobs = _annotate(jobs, entries, side)
    for j in jobs:
        j.run = run or j.run
        j.attempt = attempt or j.attempt
        j.job = job or j.job
        j.outcome = outcome or j.outcome
    if not jobs:
        raise InputError(f"{p}: no job logs found (expected .txt/.log files, JUnit .xml, or a {SIDECAR})")
    return jobs


def _from_entry(side: Path, e: _Entry) -> JobSource:
    base = side.parent
    where = f"{side}: line {e.line}"

    def local(rel: str, what: str) -> Path:
        target = base / rel
        if not target.is_file():
            raise InputError(f"{where}: {what}: no such file {target}")
        return target

    source = JobSource(
        run=e.run or run_id_of(base),
        job=e.job,
        attempt=e.attempt,
        family=e.family,
        outcome=e.outcome,
        env=e.env,
        where=where,
    )
    if e.log:
        source.logs.append(_file(local(e.log, "log")))
    source.junit = [_file(local(j, "junit")) for j in e.junit]
    if e.snapshot:
        source.snapshot = _file(local(e.snapshot, "snapshot"))
    return source


def _annotate(jobs: list[JobSource], entries: list[_Entry], side: Path) -> list[JobSource]:
    """A sidecar beside logs found by name: its entries add outcome, attempt and facts."""
    by_name: dict[str, list[_Entry]] = {}
    for e in entries:
        by_name.setdefault(e.job, []).append(e)
    for j in jobs:
        found = by_name.get(j.job)
        if found:
            e = found[0] if len(found) == 1 else max(found, key=lambda x: x.attempt)
            j.attempt, j.outcome, j.env, j.family = e.attempt, e.outcome, e.env, e.family or j.family
            j.run = e.run or j.run
            j.where = f"{side}: line {e.line}"
    return jobs


def _job_name(stem: str) -> str:
    m = _NUMBERED.match(stem)
    return m.group(2) if m else stem


def _folder_jobs(folder: Path) -> list[JobSource]:
    files = sorted(folder.iterdir())
    if len(files) > MAX_MEMBERS:
        raise InputError(f"{folder}: {len(files)} entries, at most {MAX_MEMBERS} are read")
    jobs: dict[str, JobSource] = {}
    steps: dict[str, list[Path]] = {}
    for f in files:
        if f.is_file() and f.suffix.lower() in _LOG_SUFFIXES:
            name = _job_name(f.stem)
            jobs.setdefault(name, JobSource(run="", job=name)).logs.append(_file(f))
        elif f.is_dir():
            steps[f.name] = sorted(
                (s for s in f.iterdir() if s.is_file() and s.suffix.lower() in _LOG_SUFFIXES), key=_step_order
            )
    for f in files:
        if f.is_file() and f.suffix.lower() == ".xml":
            name = _job_name(f.stem)
            jobs.setdefault(name, JobSource(run="", job=name)).junit.append(_file(f))
    for name, step_files in steps.items():
        if name not in jobs and step_files:
            jobs[name] = JobSource(run="", job=name, logs=[_file(s) for s in step_files])
    return list(jobs.values())


def _step_order(path) -> tuple[int, str]:
    name = path.name if hasattr(path, "name") else str(path)
    m = _NUMBERED.match(name)
    return (int(m.group(1)), name) if m else (1 << 30, name)


def _zip_jobs(path: Path) -> list[JobSource]:
    try:
        with zipfile.ZipFile(path) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InputError(f"{path}: not a readable zip archive ({exc}); a truncated download?") from None
    if len(infos) > MAX_MEMBERS:
        raise InputError(f"{path}: {len(infos)} files, at most {MAX_MEMBERS} are read")
    jobs: dict[str, JobSource] = {}
    steps: dict[str, list[str]] = {}
    for info in infos:
        parts = info.filename.split("/")
        stem, _, suffix = parts[-1].rpartition(".")
        if f".{suffix.lower()}" not in (*_LOG_SUFFIXES, ".xml"):
            continue
        if len(parts) == 1:
            name = _job_name(stem)
            job = jobs.setdefault(name, JobSource(run="", job=name))
            (job.junit if suffix.lower() == "xml" else job.logs).append(_member(path, info.filename))
        elif len(parts) == 2:
            steps.setdefault(parts[0], []).append(info.filename)
    for name, members in steps.items():
        if name not in jobs:
            ordered = sorted(members, key=lambda m: _step_order(m.rsplit("/", 1)[-1]))
            jobs[name] = JobSource(run="", job=name, logs=[_member(path, m) for m in ordered])
    return list(jobs.values())


def _member(path: Path, name: str) -> LogFile:
    def opener() -> BinaryIO:
        zf = zipfile.ZipFile(path)
        try:
            stream = zf.open(name)
        except (zipfile.BadZipFile, OSError, EOFError, KeyError) as exc:
            zf.close()
            raise InputError(f"{path}: {name}: cannot read ({exc})") from None
        # its readers (iter_lines, read) use only readline, read, close and `with`
        return cast(BinaryIO, _Closing(stream, zf))

    return LogFile(f"{path}: {name}", opener)


class _Closing:
    """A zip member's stream that closes its archive with it."""

    def __init__(self, stream, archive) -> None:
        self._stream, self._archive = stream, archive

    def readline(self, limit: int = -1) -> bytes:
        return self._stream.readline(limit)

    def read(self, size: int = -1) -> bytes:
        return self._stream.read(size)

    def close(self) -> None:
        self._stream.close()
        self._archive.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _single(path: Path) -> JobSource:
    name = _job_name(path.stem)
    job = JobSource(run="", job=name)
    (job.junit if path.suffix.lower() == ".xml" else job.logs).append(_file(path))
    return job
