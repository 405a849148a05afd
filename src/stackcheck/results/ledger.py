"""The append-only evidence ledger: write-once JSON files plus an index.

Records live in ``<root>/records/<sha256>.json`` and events (promotions, decisions, flags) in
``<root>/events/<sha256>.json``, each named by its content digest and created exclusively
(temp file + fsync + hard link), so nothing is ever overwritten and a crash leaves either the
whole file or none. The index (SQLite ``<root>/ledger.sqlite`` or PostgreSQL) is written
after the file in one transaction; :meth:`Ledger.reindex` rebuilds it from the files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import msgspec

from stackcheck.errors import InputError, Refused
from stackcheck.fileio import atomic_write, decode_json, read_bytes
from stackcheck.results import ladder
from stackcheck.results.contract import LEVELS, Event, Level, ResultRecord
from stackcheck.results.identity import content_digest, short
from stackcheck.results.index import Index, default_url

LEDGER_DIR_ENV = "STACKCHECK_LEDGER_DIR"
_HEX64 = re.compile(r"[0-9a-f]{64}")


def utc_now() -> str:
    """Microsecond UTC timestamps: two records of one process never share one."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def default_root(cwd: str | os.PathLike | None = None) -> Path:
    """``$STACKCHECK_LEDGER_DIR``, else ``<git root or cwd>/.stackcheck``."""
    if os.environ.get(LEDGER_DIR_ENV):
        return Path(os.environ[LEDGER_DIR_ENV])
    start = Path(cwd or os.getcwd()).resolve()
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d / ".stackcheck"
    return start / ".stackcheck"


class Stored(msgspec.Struct, kw_only=True):
    """What ``record`` and ``list`` print per record."""

    id: str
    path: str
    candidate: str
    evidence: str


@dataclass
class Entry:
    """A listed record with what the events say about it."""

    record: ResultRecord
    path: Path
    level: str  # effective: claimed, or the highest promotion
    flags: list[Event] = field(default_factory=list)

    def stored(self) -> Stored:
        return Stored(id=short(self.record.digest), path=str(self.path), candidate=short(self.record.identity_key, 12), evidence=self.level)


class Ledger:
    def __init__(self, root: str | os.PathLike | None = None, url: str | None = None):
        self.root = Path(root) if root is not None else default_root()
        self.index = Index(url or default_url(self.root))
        self.skipped: list[str] = []  # "path: problem" for files a listing had to skip

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc) -> None:
        self.index.close()

    @property
    def records_dir(self) -> Path:
        return self.root / "records"

    @property
    def events_dir(self) -> Path:
        return self.root / "events"

    # ----- writing ----------------------------------------------------------------------
    def store(self, record: ResultRecord) -> tuple[Stored, list[Event]]:
        """Write a completed record once and index it; flag earlier runs of the same
        candidate that this run does not reproduce. Returns the stored entry and the flags."""
        if record.digest != content_digest(record):
            raise Refused("record digest does not match its content; complete it with results.record()")
        path = self.records_dir / f"{_hex(record.digest)}.json"
        try:
            atomic_write(path, msgspec.json.format(msgspec.json.encode(record), indent=1), exclusive=True)
        except FileExistsError:
            raise Refused(f"record {short(record.digest)} is already in the ledger ({path}); records are never replaced") from None
        with self.index.transaction() as tx:
            tx.insert_record(self._record_row(record, path))
        flags = self._flag_earlier(record)
        entry = Entry(record, path, record.evidence)
        return entry.stored(), flags

    def append(self, kind: str, *, topic: str, run_label: str, **fields) -> Event:
        """Write one event file once and index it (promotion, decision, flag)."""
        event = Event(kind=kind, created_at=utc_now(), topic=topic, run_label=run_label, **fields)
        event.digest = content_digest(event)
        path = self.events_dir / f"{_hex(event.digest)}.json"
        atomic_write(path, msgspec.json.format(msgspec.json.encode(event), indent=1), exclusive=True)
        with self.index.transaction() as tx:
            tx.insert_event(self._event_row(event, path))
        return event

    def promote(self, record: ResultRecord, level: Level) -> Event:
        """Raise a record to ``level`` by appending a promotion event, or refuse with what is missing."""
        current = self.level_of(record)
        if ladder.rank(level) <= ladder.rank(current):
            raise Refused(f"record {short(record.digest)} already stands at {current}; levels only go up")
        lacking = ladder.missing(record, level, self)
        if lacking:
            raise Refused(f"cannot promote {short(record.digest)} to {level}; missing:\n  - " + "\n  - ".join(lacking))
        proof = {"from": current}
        if ladder.rank(level) >= ladder.rank("reproduced"):
            proof["reproduced_by"] = ",".join(short(o.digest) for o in ladder.reproductions(record, self))
        if level == "delivery":
            proof["decision"] = short(self.decisions(record.topic, record.run_label)[-1].digest)
        return self.append(
            "promotion", topic=record.topic, run_label=record.run_label, record_id=_hex(record.digest), level=level, proof=proof
        )

    def decide(self, topic: str, run_label: str, decision: str) -> Event:
        if not decision.strip():
            raise InputError("--decision: must not be empty")
        if not self.index.records("WHERE topic = ? AND run_label = ?", (topic, run_label)):
            raise Refused(f"no record with topic {topic!r} and run label {run_label!r} in the ledger at {self.root}")
        return self.append("decision", topic=topic, run_label=run_label, text=decision.strip())

    def _flag_earlier(self, rerun: ResultRecord) -> list[Event]:
        if rerun.status != "ok":
            return []
        flags = []
        for earlier in self._measured_runs_elsewhere(rerun):
            if earlier.created_at > rerun.created_at or not earlier.tolerance:
                continue
            outside = [o for o in ladder.within_tolerance(earlier, rerun) if "no tolerance" not in o]
            if outside:
                text = f"rerun {short(rerun.digest)} outside tolerance: " + "; ".join(outside)
                flags.append(
                    self.append("flag", topic=earlier.topic, run_label=earlier.run_label, record_id=_hex(earlier.digest),
                                text=text, proof={"rerun": _hex(rerun.digest)})
                )
        return flags

    def _measured_runs_elsewhere(self, rerun: ResultRecord) -> list[ResultRecord]:
        """Runs of the same candidate from other snapshots standing at measured or above:
        the ones a rerun can contradict (selected in the index, so recording stays O(1))."""
        measured = LEVELS[ladder.rank("measured"):]
        marks = ", ".join("?" for _ in measured)
        rows = self.index.records(
            f"WHERE identity_key = ? AND snapshot_digest <> ? AND status = 'ok' AND (evidence IN ({marks})"
            f" OR id IN (SELECT record_id FROM events WHERE kind = 'promotion' AND level IN ({marks})))",
            (rerun.identity_key, rerun.snapshot_digest, *measured, *measured),
        )
        return [r for r in (self._load_row(row) for row in rows) if r is not None]

    # ----- reading ----------------------------------------------------------------------
    def get(self, ref: str) -> tuple[ResultRecord, Path]:
        """A record by id (any unique prefix of its digest), verified against its name."""
        ref = ref.removeprefix("sha256:").lower()
        if len(ref) < 4 or any(c not in "0123456789abcdef" for c in ref):
            raise InputError(f"record id {ref!r}: expected at least 4 hex characters of a record digest")
        matches = sorted(self.records_dir.glob(f"{ref}*.json"))
        if not matches:
            raise InputError(f"record {ref}: not in the ledger at {self.root}")
        if len(matches) > 1:
            raise InputError(f"record {ref}: ambiguous, matches {len(matches)} records; give more characters")
        record, problems = read_verified(matches[0], ResultRecord)
        if record is None:
            raise InputError(f"{matches[0]}: {problems[0]}")
        if problems:
            raise Refused(f"{matches[0]}: " + "; ".join(problems))
        return record, matches[0]

    def entries(self, topic: str | None = None) -> list[Entry]:
        """Indexed records (optionally of one topic), each read and verified from its file;
        corrupt or tampered files are skipped and named in :attr:`skipped`."""
        rows = self.index.records("WHERE topic = ?", (topic,)) if topic else self.index.records()
        events = self._events_by_record()
        out = []
        for row in rows:
            record = self._load_row(row)
            if record is not None:
                out.append(self._entry(record, self.root / row["path"], events.get(row["id"], [])))
        return out

    def same_candidate(self, record: ResultRecord) -> list[ResultRecord]:
        rows = self.index.records("WHERE identity_key = ?", (record.identity_key,))
        return [r for r in (self._load_row(row) for row in rows) if r is not None]

    def flags(self, record_id: str) -> list[Event]:
        return self._load_events(self.index.events("WHERE kind = 'flag' AND record_id = ?", (record_id,)))

    def decisions(self, topic: str, run_label: str) -> list[Event]:
        return self._load_events(self.index.events("WHERE kind = 'decision' AND topic = ? AND run_label = ?", (topic, run_label)))

    def current_decision(self, topic: str) -> Event | None:
        event_id = self.index.current_decision(topic)
        if event_id is None:
            return None
        found = self._load_events(self.index.events("WHERE id = ?", (event_id,)))
        return found[0] if found else None

    def level_of(self, record: ResultRecord) -> str:
        promotions = self._load_events(self.index.events("WHERE kind = 'promotion' AND record_id = ?", (_hex(record.digest),)))
        return _highest(record.evidence, promotions)

    def entry(self, record: ResultRecord, path: Path) -> Entry:
        events = self._load_events(self.index.events("WHERE record_id = ?", (_hex(record.digest),)))
        return self._entry(record, path, events)

    # ----- maintenance ------------------------------------------------------------------
    def files(self) -> Iterator[Path]:
        """Every record and event file (never the hidden temp files of unfinished writes)."""
        for d in (self.records_dir, self.events_dir):
            if d.is_dir():
                yield from sorted(p for p in d.glob("*.json") if not p.name.startswith("."))

    def reindex(self) -> dict[str, int]:
        """Rebuild the index from the files, skipping (and naming) corrupt ones."""
        records, events, skipped = [], [], []
        for path in self.files():
            is_record = path.parent == self.records_dir
            obj, problems = read_verified(path, ResultRecord if is_record else Event)
            if problems:
                skipped.append(f"{path}: {'; '.join(problems)}")
            elif is_record:
                records.append(self._record_row(obj, path))
            else:
                events.append(self._event_row(obj, path))
        with self.index.transaction() as tx:
            tx.clear()
            for row in records:
                tx.insert_record(row)
            for row in sorted(events, key=lambda r: (r["created_at"], r["id"])):
                tx.insert_event(row)
        self.skipped = skipped
        return {"records": len(records), "events": len(events), "skipped": len(skipped)}

    # ----- internals --------------------------------------------------------------------
    def _record_row(self, r: ResultRecord, path: Path) -> dict:
        return {
            "id": _hex(r.digest), "topic": r.topic, "run_label": r.run_label, "identity_key": r.identity_key,
            "evidence": r.evidence, "status": r.status, "created_at": r.created_at,
            "snapshot_digest": r.snapshot_digest, "path": str(path.relative_to(self.root)),
        }

    def _event_row(self, e: Event, path: Path) -> dict:
        return {
            "id": _hex(e.digest), "kind": e.kind, "record_id": e.record_id, "topic": e.topic,
            "run_label": e.run_label, "level": e.level or "", "text": e.text, "created_at": e.created_at,
            "path": str(path.relative_to(self.root)),
        }

    def _load_row(self, row: dict) -> ResultRecord | None:
        return self._load(self.root / row["path"], ResultRecord)

    def _load_events(self, rows: list[dict]) -> list[Event]:
        return [e for e in (self._load(self.root / row["path"], Event) for row in rows) if e is not None]

    def _load(self, path: Path, model: type):
        obj, problems = read_verified(path, model)
        if problems:
            self.skipped.append(f"{path}: {'; '.join(problems)}")
            return None
        return obj

    def _events_by_record(self) -> dict[str, list[Event]]:
        by_record: dict[str, list[Event]] = {}
        for event in self._load_events(self.index.events("WHERE kind IN ('promotion', 'flag')")):
            by_record.setdefault(event.record_id, []).append(event)
        return by_record

    def _entry(self, record: ResultRecord, path: Path, events: list[Event]) -> Entry:
        return Entry(
            record=record,
            path=path,
            level=_highest(record.evidence, [e for e in events if e.kind == "promotion"]),
            flags=[e for e in events if e.kind == "flag"],
        )


def read_verified(path: Path, model: type, data: bytes | None = None) -> tuple[object | None, list[str]]:
    """A draft, record or event file (or its ``data``, already read) and its problems
    (unreadable, invalid, tampered); never raises. Problems do not repeat the path."""
    what = {ResultRecord: "result record", Event: "ledger event"}.get(model, "result draft")
    try:
        obj = decode_json(read_bytes(path, what) if data is None else data, model, str(path), what)
    except InputError as exc:
        return None, [str(exc).removeprefix(f"{path}: ")]
    return obj, verify(obj, path) if hasattr(obj, "digest") else []


def verify(obj: ResultRecord | Event, path: str | os.PathLike | None = None) -> list[str]:
    """Tamper evidence: the content must hash to its digest, and a ledger file (named by a
    digest) be named after its own."""
    actual = content_digest(obj)
    if obj.digest != actual:
        return [f"tampered: content hashes to {short(actual)}, the file says {short(obj.digest) or '(no digest)'}"]
    stem = Path(path).stem if path is not None else ""
    if _HEX64.fullmatch(stem) and stem != _hex(obj.digest):  # a ledger file (copies may be renamed)
        return [f"tampered: file name does not match the digest {short(obj.digest)}"]
    return []


def _highest(claimed: str, promotions: list[Event]) -> str:
    levels = [claimed, *(e.level for e in promotions if e.level)]
    return max(levels, key=LEVELS.index)


def _hex(digest: str) -> str:
    return digest.partition(":")[2]
