"""The ledger index: one code path over SQLite (stdlib ``sqlite3``) and PostgreSQL (``psycopg``).

The index only speeds up queries; the write-once files are the truth and
:meth:`stackcheck.results.ledger.Ledger.reindex` rebuilds the index from them. SQL is written
once with ``?`` placeholders and portable types; the few dialect differences (placeholder
style, how a writer takes the lock, how schema creation is serialized) live in :class:`Index`.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from stackcheck.errors import InputError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")

RECORD_COLUMNS = ("id", "topic", "run_label", "identity_key", "evidence", "status", "created_at", "snapshot_digest", "path")
EVENT_COLUMNS = ("id", "kind", "record_id", "topic", "run_label", "level", "text", "created_at", "path")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, topic TEXT NOT NULL, run_label TEXT NOT NULL,"
    " identity_key TEXT NOT NULL, evidence TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,"
    " snapshot_digest TEXT NOT NULL, path TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS records_topic ON records (topic, run_label)",
    "CREATE INDEX IF NOT EXISTS records_identity ON records (identity_key)",
    "CREATE TABLE IF NOT EXISTS events (id TEXT PRIMARY KEY, kind TEXT NOT NULL, record_id TEXT NOT NULL,"
    " topic TEXT NOT NULL, run_label TEXT NOT NULL, level TEXT NOT NULL, text TEXT NOT NULL,"
    " created_at TEXT NOT NULL, path TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS events_record ON events (record_id)",
    # the current decision per topic: a pointer to an append-only decision event
    "CREATE TABLE IF NOT EXISTS current_decisions (topic TEXT PRIMARY KEY, event_id TEXT NOT NULL,"
    " created_at TEXT NOT NULL)",
)

_POINT_DECISION = (
    "INSERT INTO current_decisions (topic, event_id, created_at) VALUES (?, ?, ?)"
    " ON CONFLICT (topic) DO UPDATE SET event_id = excluded.event_id, created_at = excluded.created_at"
    " WHERE excluded.created_at > current_decisions.created_at"
    " OR (excluded.created_at = current_decisions.created_at AND excluded.event_id > current_decisions.event_id)"
)


def is_postgres(url: str) -> bool:
    return url.startswith(POSTGRES_SCHEMES)


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_LEDGER_FORMS = ("give a PostgreSQL DSN (postgresql://USER@HOST/DB), sqlite:///ABSOLUTE/PATH, "
                 "sqlite:RELATIVE/PATH or a file path in an existing directory")


def parse_ledger_url(url: str, *, existing_dir: bool = True) -> str:
    """What ``--ledger`` names: a PostgreSQL DSN (returned as given) or the absolute path of a
    SQLite index file (from ``sqlite:///abs/path``, ``sqlite:relative/path`` or a plain path),
    whose directory must exist (with ``existing_dir``; else it is created on first use). Any
    other ``scheme://`` is an error naming these forms."""
    scheme = _SCHEME.match(url)
    if is_postgres(url):
        return url
    path = url
    if scheme and scheme.group(1).lower() == "sqlite":
        path = url[scheme.end():]
        if path.startswith("//"):  # sqlite:///abs/path (sqlite:////abs/path too); no host
            path = path[2:]
            if path and not path.startswith("/"):
                raise InputError(f"--ledger {redact(url)}: a sqlite URL has no host; {_LEDGER_FORMS}")
            path = "/" + path.lstrip("/") if path.strip("/") else ""
        if not path:
            raise InputError(f"--ledger {redact(url)}: a sqlite URL needs a file path; {_LEDGER_FORMS}")
    elif scheme and url[scheme.end():].startswith("//"):
        raise InputError(
            f"--ledger {redact(url)}: unsupported URL scheme {scheme.group(1)!r}; {_LEDGER_FORMS}"
        )
    full = Path(os.path.abspath(path))
    if full.is_dir():
        raise InputError(f"--ledger {redact(url)}: {full} is a directory, expected the SQLite index file "
                         f"(e.g. {full / 'ledger.sqlite'})")
    if existing_dir and not full.parent.is_dir():
        raise InputError(f"--ledger {redact(url)}: directory {full.parent} does not exist "
                         "(create it, or give a file in an existing directory)")
    return str(full)


def redact(url: str) -> str:
    """A DSN (any ``scheme://user:password@host…``) without its password, for messages."""
    if "://" not in url:
        return url
    scheme, _, rest = url.partition("://")
    creds, at, host = rest.rpartition("@")
    if not at:
        return url
    user = creds.partition(":")[0]
    return f"{scheme}://{user}:***@{host}" if ":" in creds else url


class Index:
    """A connection to the index database, SQLite file path or ``postgresql://`` DSN."""

    def __init__(self, url: str):
        self.url = url
        self.postgres = is_postgres(url)
        self._conn = None

    # ----- connection -------------------------------------------------------------------
    def _connect(self):
        if self._conn is not None:
            return self._conn
        if self.postgres:
            try:
                import psycopg
            except ImportError:
                raise InputError(
                    f"--ledger {redact(self.url)}: PostgreSQL needs psycopg: pip install 'stackcheck[postgres]'"
                ) from None
            try:
                self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            except psycopg.Error as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise InputError(f"--ledger {redact(self.url)}: cannot connect: {first}") from None
        else:
            import sqlite3

            Path(self.url).parent.mkdir(parents=True, exist_ok=True)
            try:
                # autocommit mode: transactions are explicit (BEGIN IMMEDIATE) below
                conn = sqlite3.connect(self.url, timeout=60, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
            except sqlite3.DatabaseError as exc:
                raise InputError(f"{self.url}: not a usable SQLite index ({exc}); run `stackcheck results reindex`") from None
            self._conn = conn
        with self.transaction() as tx:
            if self.postgres:  # concurrent CREATE TABLE IF NOT EXISTS can collide in PostgreSQL
                tx.execute("SELECT pg_advisory_xact_lock(7250119)")
            for statement in _SCHEMA:
                tx.execute(statement)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_Tx]:
        """One write transaction; commits on success, rolls back on any error."""
        conn = self._conn if self._conn is not None else self._connect()
        if self.postgres:
            with conn.transaction():
                with conn.cursor() as cur:
                    yield _Tx(cur, "%s")
        else:
            conn.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlocks
            try:
                yield _Tx(conn.cursor(), "?")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence = ()) -> list[tuple]:
        conn = self._connect()
        if self.postgres:
            with conn.cursor() as cur:
                cur.execute(sql.replace("?", "%s"), params)
                return cur.fetchall()
        return conn.execute(sql, params).fetchall()

    # ----- the queries the ledger needs -------------------------------------------------
    def records(self, where: str = "", params: Sequence = ()) -> list[dict]:
        rows = self.query(f"SELECT {', '.join(RECORD_COLUMNS)} FROM records {where} ORDER BY created_at, id", params)
        return [dict(zip(RECORD_COLUMNS, row, strict=True)) for row in rows]

    def events(self, where: str = "", params: Sequence = ()) -> list[dict]:
        rows = self.query(f"SELECT {', '.join(EVENT_COLUMNS)} FROM events {where} ORDER BY created_at, id", params)
        return [dict(zip(EVENT_COLUMNS, row, strict=True)) for row in rows]

    def current_decision(self, topic: str) -> str | None:
        rows = self.query("SELECT event_id FROM current_decisions WHERE topic = ?", (topic,))
        return rows[0][0] if rows else None


class _Tx:
    """A cursor that speaks ``?`` placeholders whatever the driver's paramstyle."""

    def __init__(self, cursor, placeholder: str):
        self._cur = cursor
        self._ph = placeholder

    def execute(self, sql: str, params: Sequence = ()) -> None:
        self._cur.execute(sql if self._ph == "?" else sql.replace("?", self._ph), params)

    def insert_record(self, row: dict) -> None:
        self._insert("records", RECORD_COLUMNS, row)

    def insert_event(self, row: dict) -> None:
        self._insert("events", EVENT_COLUMNS, row)
        if row["kind"] == "decision":
            self.execute(_POINT_DECISION, (row["topic"], row["id"], row["created_at"]))

    def clear(self) -> None:
        for table in ("current_decisions", "events", "records"):
            self.execute(f"DELETE FROM {table}")

    def _insert(self, table: str, columns: tuple[str, ...], row: dict) -> None:
        marks = ", ".join("?" for _ in columns)
        self.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT (id) DO NOTHING",
            tuple(row[c] for c in columns),
        )


def default_url(root: Path) -> str:
    """``--ledger`` / ``STACKCHECK_LEDGER`` when set, else ``<root>/ledger.sqlite``."""
    return os.environ.get("STACKCHECK_LEDGER") or str(root / "ledger.sqlite")
