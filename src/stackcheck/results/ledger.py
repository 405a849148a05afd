"""The append-only evidence ledger: write-once JSON files plus an index.

Records live in ``<root>/records/<sha256>.json`` and events (promotions, decisions) in
``<root>/events/<sha256>.json``, each named by its content digest and created exclusively
(temp file + fsync + hard link), so nothing is ever overwritten and a crash leaves either the
whole file or none. Each file names the one stored before it (``prev``, see
:mod:`stackcheck.results.chain`). A writer takes the index's write lock, writes the file,
then commits its row and the new chain head; an index error removes the file it wrote, so a
failed write leaves nothing behind. :meth:`Ledger.reindex` rebuilds the index from the files.
Flags (a later run outside a record's tolerance) are derived from the records themselves, so
there is nothing separate to lose.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import msgspec

from stackcheck.errors import InputError, Refused
from stackcheck.fileio import atomic_write, decode_json, read_bytes, require_creatable_dir
from stackcheck.results import chain, ladder
from stackcheck.results.contract import Event, Level, ResultRecord
from stackcheck.results.identity import content_digest, data_digest, short
from stackcheck.results.index import Index, default_url, parse_ledger_url, storage_problems

LEDGER_DIR_ENV = "STACKCHECK_LEDGER_DIR"
STALE_TEMP_S = 3600  # a hidden temp file this old is left by a crashed write, never one in progress
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
        return Stored(
            id=short(self.record.digest),
            path=str(self.path),
            candidate=short(self.record.identity_key, 12),
            evidence=self.level,
        )


class Ledger:
    def __init__(self, root: str | os.PathLike | None = None, url: str | None = None):
        self.root = Path(root) if root is not None else default_root()
        require_creatable_dir(self.root, "the ledger directory, --ledger-dir")
        given = url or os.environ.get("STACKCHECK_LEDGER")
        self.index = Index(parse_ledger_url(given, existing_dir=False) if given else default_url(self.root))
        self.skipped: list[str] = []  # "path: problem" for files a listing had to skip
        self.removed: list[str] = []  # stale temp files the last reindex removed
        self.notes: list[str] = []  # what the last reindex found wrong beyond single files

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
    def store(self, record: ResultRecord) -> tuple[Stored, list[Event], ResultRecord]:
        """Write a completed record once, linked into the chain, and index it. Returns the
        stored entry, the earlier runs of its candidate this run contradicts (flags derived
        from the records, see :meth:`flags`) and the record as stored (with its ``prev``)."""
        _storable(**indexed_fields(record))
        content_id = _hex(_digest(msgspec.structs.replace(record, prev="")))
        with self._undone_on_failure() as written, self.index.transaction() as tx:
            tx.head()  # the write lock (PostgreSQL), before looking for the same record
            # the same content, or a stored record read back (by a later version, whose new
            # fields change its encoding but not the digest it was stored under)
            existing = tx.stored_as(content_id) or self._stored_unchanged(tx, record)
            if existing is not None:
                where = self.root / existing
                raise Refused(
                    f"record {short(record.digest)} is already in the ledger ({where}); "
                    "records are never replaced"
                )
            if record.digest != _digest(record):
                raise Refused("record digest does not match its content; complete it with results.record()")
            record = self._write_chained(
                tx, record, self.records_dir, self._record_row, tx.insert_record, written
            )
        entry = Entry(record, self._path(record), record.evidence)
        return entry.stored(), self._flags_raised_by(record), record

    def _stored_unchanged(self, tx, record: ResultRecord) -> str | None:
        """The path of the stored file ``record`` was read from, when it is that file's content
        unchanged (read back by a later version, whose added fields change its encoding)."""
        path = tx.stored_as(_hex(record.digest)) if record.digest.startswith("sha256:") else None
        if path is None:
            return None
        stored, problems = read_verified(self.root / path, ResultRecord)
        return path if stored == record and not problems else None

    def append(self, kind: str, *, topic: str, run_label: str, **fields) -> Event:
        """Write one event file once, linked into the chain, and index it (promotion, decision)."""
        event = Event(kind=kind, created_at=utc_now(), topic=topic, run_label=run_label, **fields)
        _storable(**indexed_fields(event))
        with self._undone_on_failure() as written, self.index.transaction() as tx:
            return self._write_chained(tx, event, self.events_dir, self._event_row, tx.insert_event, written)

    @contextlib.contextmanager
    def _undone_on_failure(self) -> Iterator[list[Path]]:
        """Collects the files a write creates; when the write fails after one (its row or its
        commit did not go through), removes each that the index does not hold, so a failed
        write leaves nothing behind. A file whose fate the index cannot tell (the index is
        gone) is kept for ``reindex``."""
        written: list[Path] = []
        try:
            yield written
        except BaseException:
            for path in written:
                try:
                    held = self.index.query(f"SELECT 1 FROM {path.parent.name} WHERE id = ?", (path.stem,))
                except InputError:  # the index cannot tell: keep the file
                    continue
                if not held:
                    path.unlink(missing_ok=True)
            raise

    def _write_chained(self, tx, obj, directory: Path, make_row, insert, written: list[Path]):
        """Inside ``tx`` (the write lock held): link ``obj`` to the head, write its file (added
        to ``written``), index it and make it the head. Every check runs before the file is
        written."""
        head, _ = tx.head()
        obj = msgspec.structs.replace(obj, prev=f"sha256:{head}" if head else "", digest="")
        obj.digest = _digest(obj)
        path = directory / f"{_hex(obj.digest)}.json"
        row = make_row(obj, path)
        _no_symlink(directory)
        data = msgspec.json.format(msgspec.json.encode(obj), indent=1)
        try:
            atomic_write(path, data, exclusive=True)
            written.append(path)
        except FileExistsError:
            # the same file, linked to the same head: a write that crashed before its index
            # row; taking it in completes that write
            if read_verified(path, type(obj))[0] != obj:
                raise Refused(
                    f"{path}: exists and differs from what is being stored; run `stackcheck results validate`"
                ) from None
        insert(row)
        tx.set_head(_hex(obj.digest), row["path"])
        return obj

    def promote(self, record: ResultRecord, level: Level) -> Event:
        """Raise a record to ``level`` by appending a promotion event, or refuse with what is missing."""
        current = self.level_of(record)
        if ladder.rank(level) <= ladder.rank(current):
            raise Refused(f"record {short(record.digest)} already stands at {current}; levels only go up")
        lacking = ladder.missing(record, level, self)
        if lacking:
            raise Refused(
                f"cannot promote {short(record.digest)} to {level}; missing:\n  - " + "\n  - ".join(lacking)
            )
        proof = {"from": current}
        if ladder.rank(level) >= ladder.rank("reproduced"):
            proof["reproduced_by"] = ",".join(short(o.digest) for o in ladder.reproductions(record, self))
        if level == "delivery":
            proof["decision"] = short(self.decisions(record.topic, record.run_label)[-1].digest)
        return self.append(
            "promotion",
            topic=record.topic,
            run_label=record.run_label,
            record_id=_hex(record.digest),
            level=level,
            proof=proof,
        )

    def decide(self, topic: str, run_label: str, decision: str) -> Event:
        if not decision.strip():
            raise InputError("--decision: must not be empty")
        _storable(topic=topic, run_label=run_label, text=decision.strip())
        if not self.index.records("WHERE topic = ? AND run_label = ?", (topic, run_label)):
            raise Refused(
                f"no record with topic {topic!r} and run label {run_label!r} in the ledger at {self.root}"
            )
        return self.append("decision", topic=topic, run_label=run_label, text=decision.strip())

    def _flags_raised_by(self, rerun: ResultRecord) -> list[Event]:
        """The flags ``rerun`` puts on earlier runs of its candidate (see :meth:`flags`)."""
        if rerun.status != "ok":
            return []
        return _found(ladder.contradiction(r, rerun) for r in self._runs_elsewhere(rerun, later=False))

    def _runs_elsewhere(self, record: ResultRecord, *, later: bool) -> list[ResultRecord]:
        """The ok runs of ``record``'s candidate from other snapshots recorded after it (or
        before it): the only ones that can flag it (or that it can flag). Selected in the
        index, so recording stays O(1) in the size of the ledger."""
        after = ">=" if later else "<="
        rows = self.index.records(
            "WHERE identity_key = ? AND snapshot_digest <> ? AND status = 'ok'"
            f" AND created_at {after} ? AND id <> ?",
            (record.identity_key, record.snapshot_digest, record.created_at, _hex(record.digest)),
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
        if topic:
            _storable(topic=topic)
        rows = self.index.records("WHERE topic = ?", (topic,)) if topic else self.index.records()
        events = self._events_by_record()
        loaded = [(r, row) for r, row in ((self._load_row(row), row) for row in rows) if r is not None]
        runs: dict[str, list[ResultRecord]] = {}
        for record, _ in loaded:
            runs.setdefault(record.identity_key, []).append(record)
        out = []
        for record, row in loaded:
            derived = _found(ladder.contradiction(record, o) for o in runs[record.identity_key])
            out.append(self._entry(record, self.root / row["path"], events.get(row["id"], []), derived))
        return out

    def same_candidate(self, record: ResultRecord) -> list[ResultRecord]:
        rows = self.index.records("WHERE identity_key = ?", (record.identity_key,))
        return [r for r in (self._load_row(row) for row in rows) if r is not None]

    def flags(self, record: ResultRecord) -> list[Event]:
        """What contradicts ``record``: every later run of its candidate from another snapshot
        outside its tolerance, derived from the records themselves (so a crash cannot lose a
        flag and ``reindex`` recreates it), plus the flag events older ledgers wrote."""
        derived = _found(ladder.contradiction(record, o) for o in self._runs_elsewhere(record, later=True))
        return _with_derived(self._events_about(record, "flag"), derived)

    def decisions(self, topic: str, run_label: str) -> list[Event]:
        return self._load_events(
            self.index.events("WHERE kind = 'decision' AND topic = ? AND run_label = ?", (topic, run_label))
        )

    def current_decision(self, topic: str) -> Event | None:
        event_id = self.index.current_decision(topic)
        if event_id is None:
            return None
        found = self._load_events(self.index.events("WHERE id = ?", (event_id,)))
        return found[0] if found else None

    def level_of(self, record: ResultRecord) -> str:
        return _highest(record.evidence, self._events_about(record, "promotion"))

    def entry(self, record: ResultRecord, path: Path) -> Entry:
        return self._entry(record, path, [*self._events_about(record, "promotion"), *self.flags(record)])

    def _events_about(self, record: ResultRecord, kind: str) -> list[Event]:
        rows = self.index.events("WHERE kind = ? AND record_id = ?", (kind, _hex(record.digest)))
        return self._load_events(rows)

    # ----- maintenance ------------------------------------------------------------------
    def files(self) -> Iterator[Path]:
        """Every record and event file (never the hidden temp files of unfinished writes)."""
        for d in (self.records_dir, self.events_dir):
            if d.is_dir():
                yield from sorted(p for p in d.glob("*.json") if not p.name.startswith("."))

    def stale_temp_files(self, older_than: float = STALE_TEMP_S) -> list[Path]:
        """Hidden temp files that crashed writes left behind (older than ``older_than`` s, so
        never the file of a write in progress)."""
        cutoff = time.time() - older_than
        out = []
        for d in (self.records_dir, self.events_dir):
            if d.is_dir():
                for p in sorted(d.glob(".*.tmp")):
                    try:
                        if p.lstat().st_mtime < cutoff:
                            out.append(p)
                    except FileNotFoundError:  # finished meanwhile
                        pass
        return out

    def reindex(self) -> dict[str, int]:
        """Rebuild the index from the files, skipping (and naming in :attr:`skipped`) corrupt
        ones and ones the index cannot store; remove stale temp files. The chain's head is
        kept (advanced over files that extend it), so a ledger that lost its newest files
        keeps saying so."""
        objs, skipped, present = {}, [], set()
        for path in self.files():
            present.add(path.stem)
            obj, problems = read_verified(path, ResultRecord if path.parent == self.records_dir else Event)
            if not problems:
                row = self._row(obj, path)
                problems = [f"cannot be indexed: {p}" for p in storage_problems(row)]
            if problems:
                skipped.append(f"{path}: {'; '.join(problems)}")
            else:
                objs[_hex(obj.digest)] = (obj, path)
        links = self._links(objs)
        self.removed = []
        self.notes = [
            f"{self._guess_path(missing)}: missing, but {link.path} names it as its predecessor "
            "(a deleted, replaced or re-hashed file)"
            for missing, link in chain.breaks(links, present)
        ]
        with self.index.transaction() as tx:
            head, head_path = tx.head()
            if head in links or not head:
                head = chain.tip(links, head)
                head_path = str(Path(links[head].path).relative_to(self.root)) if head else ""
            else:
                self.notes.append(
                    f"{self.root / head_path}: missing, but the index names it as the chain's "
                    "head (the newest files were removed); kept as the head, so `validate` "
                    "keeps reporting it"
                )
            tx.clear()
            rows = [self._row(obj, path) for obj, path in objs.values()]
            for row in rows:
                if "kind" not in row:
                    tx.insert_record(row)
            for row in sorted((r for r in rows if "kind" in r), key=lambda r: (r["created_at"], r["id"])):
                tx.insert_event(row)
            tx.set_head(head, head_path)
            for temp in self.stale_temp_files():
                temp.unlink(missing_ok=True)
                self.removed.append(str(temp))
        self.skipped = skipped
        n_records = sum(1 for obj, _ in objs.values() if isinstance(obj, ResultRecord))
        return {"records": n_records, "events": len(objs) - n_records, "skipped": len(skipped)}

    def audit(self, objs: dict[str, tuple[object, Path]], present: set[str]) -> dict[str, list[str]]:
        """Path → what is wrong with the ledger as a whole there, given every decoded and
        untampered file (hex digest → (object, path)) and the names of all files there
        (``present``, hex, tampered and corrupt ones too): the chain (a deleted, replaced or
        re-hashed file), files and index rows without each other, events about records that
        are not there, stale temp files."""
        rows = [*self.index.records(), *self.index.events()]
        indexed = {row["id"]: str(self.root / row["path"]) for row in rows}
        head, head_path = self.index.head()
        head_at = (head, str(self.root / head_path))
        found = chain.problems(self._links(objs), present, indexed, head_at, self._guess_path)
        for obj, path in objs.values():
            if isinstance(obj, Event) and obj.record_id and obj.record_id not in present:
                problem = f"record_id: no record {obj.record_id[:16]} in the ledger"
                found.setdefault(str(path), []).append(problem)
        for temp in self.stale_temp_files():
            found.setdefault(str(temp), []).append(
                f"stale temp file of an interrupted write (older than {STALE_TEMP_S // 60} min); "
                "`stackcheck results reindex` removes it"
            )
        return found

    def _links(self, objs: dict[str, tuple[object, Path]]) -> dict[str, chain.Link]:
        return {h: chain.Link(h, _hex(o.prev), str(path), o.created_at) for h, (o, path) in objs.items()}

    def _guess_path(self, hex_id: str) -> str:
        return str(self.root / "{records,events}" / f"{hex_id}.json")

    # ----- internals --------------------------------------------------------------------
    def _row(self, obj, path: Path) -> dict:
        return self._record_row(obj, path) if isinstance(obj, ResultRecord) else self._event_row(obj, path)

    def _path(self, obj) -> Path:
        directory = self.records_dir if isinstance(obj, ResultRecord) else self.events_dir
        return directory / f"{_hex(obj.digest)}.json"

    def _record_row(self, r: ResultRecord, path: Path) -> dict:
        return {
            "id": _hex(r.digest),
            "topic": r.topic,
            "run_label": r.run_label,
            "identity_key": r.identity_key,
            "evidence": r.evidence,
            "status": r.status,
            "created_at": r.created_at,
            "snapshot_digest": r.snapshot_digest,
            "path": str(path.relative_to(self.root)),
            "content_id": _hex(content_digest(msgspec.structs.replace(r, prev=""))),
        }

    def _event_row(self, e: Event, path: Path) -> dict:
        return {
            "id": _hex(e.digest),
            "kind": e.kind,
            "record_id": e.record_id,
            "topic": e.topic,
            "run_label": e.run_label,
            "level": e.level or "",
            "text": e.text,
            "created_at": e.created_at,
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

    def _entry(self, record: ResultRecord, path: Path, events: list[Event], derived=()) -> Entry:
        return Entry(
            record=record,
            path=path,
            level=_highest(record.evidence, [e for e in events if e.kind == "promotion"]),
            flags=_with_derived([e for e in events if e.kind == "flag"], list(derived)),
        )


def read_verified(path: Path, model: type, data: bytes | None = None) -> tuple[object | None, list[str]]:
    """A draft, record or event file (or its ``data``, already read) and its problems
    (unreadable, invalid, tampered); never raises. Problems do not repeat the path."""
    what = {ResultRecord: "result record", Event: "ledger event"}.get(model, "result draft")
    try:
        raw = read_bytes(path, what) if data is None else data
        obj = decode_json(raw, model, str(path), what)
    except InputError as exc:
        return None, [str(exc).removeprefix(f"{path}: ")]
    if not hasattr(obj, "digest"):
        return obj, []
    return obj, verify(obj, path, stored=msgspec.json.decode(raw))


def verify(
    obj: ResultRecord | Event, path: str | os.PathLike | None = None, *, stored: dict | None = None
) -> list[str]:
    """Tamper evidence: the content must hash to its digest, and a ledger file (named by a
    digest) be named after its own. ``stored``: the file's decoded JSON, hashed as written."""
    actual = data_digest(stored) if stored is not None else content_digest(obj)
    if obj.digest != actual:
        return [
            f"tampered: content hashes to {short(actual)}, the file says {short(obj.digest) or '(no digest)'}"
        ]
    stem = Path(path).stem if path is not None else ""
    if _HEX64.fullmatch(stem) and stem != _hex(obj.digest):  # a ledger file (copies may be renamed)
        return [f"tampered: file name does not match the digest {short(obj.digest)}"]
    return []


def _with_derived(stored: list[Event], derived: list[Event]) -> list[Event]:
    """Flag events of older ledgers, then the derived flags they do not already say."""
    said = {(e.record_id, e.proof.get("rerun", "")) for e in stored}
    return [*stored, *(f for f in derived if (f.record_id, f.proof.get("rerun", "")) not in said)]


def _found(flags) -> list[Event]:
    return [f for f in flags if f is not None]


def indexed_fields(obj) -> dict:
    """The values of a draft, record or event that the index stores (checked by
    :func:`storage_problems` before anything is written)."""
    fields = {"topic": obj.topic, "run_label": obj.run_label}
    if isinstance(obj, Event):
        fields.update(created_at=obj.created_at, text=obj.text, record_id=obj.record_id)
    elif isinstance(obj, ResultRecord):
        fields.update(
            created_at=obj.created_at, identity_key=obj.identity_key, snapshot_digest=obj.snapshot_digest
        )
    return fields


def _digest(obj) -> str:
    try:
        return content_digest(obj)
    except UnicodeEncodeError as exc:  # only a Python caller can build such a string
        what = type(obj).__name__
        raise InputError(f"{what}: not valid Unicode text (a lone surrogate: {exc.reason})") from None


def _storable(**values: str) -> None:
    lacking = storage_problems(values)
    if lacking:
        raise InputError("; ".join(lacking))


def _no_symlink(directory: Path) -> None:
    if directory.is_symlink():
        raise InputError(
            f"{directory}: is a symbolic link; ledger files are written only inside the ledger directory"
        )


def _highest(claimed: str, promotions: list[Event]) -> str:
    levels = [claimed, *(e.level for e in promotions if e.level)]
    return max(levels, key=ladder.rank)


def _hex(digest: str) -> str:
    return digest.partition(":")[2]
