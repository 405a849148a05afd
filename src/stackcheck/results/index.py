"""The ledger index: one code path over SQLite (stdlib ``sqlite3``) and PostgreSQL (``psycopg``).

The index speeds up queries and keeps the chain's head; the write-once files are the truth
and :meth:`stackcheck.results.ledger.Ledger.reindex` rebuilds the index from them. SQL is
written once with ``?`` placeholders and portable types; the few dialect differences
(placeholder style, how a writer takes the lock, how schema creation is serialized, how a
column is added to an older index) live in :class:`Index`.

A writer holds the index's write lock from before it writes a file until its row is
committed, so the chain never loses a link to a race. Waiting for the lock is bounded
(:attr:`Index.lock_timeout`): SQLite's busy timeout, plus bounded retries with backoff for the
"database is locked" answers SQLite gives without waiting; PostgreSQL's ``lock_timeout``.
Driver errors become one-line :class:`InputError` s.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from stackcheck.errors import InputError
from stackcheck.redaction import redact_text

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
LOCK_TIMEOUT_S = 60.0  # the longest a writer waits for the index's write lock

RECORD_COLUMNS = (
    "id",
    "topic",
    "run_label",
    "identity_key",
    "evidence",
    "status",
    "created_at",
    "snapshot_digest",
    "path",
    "content_id",
)
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
    # the chain's head: the hex digest and path of the newest record or event file
    "CREATE TABLE IF NOT EXISTS chain (name TEXT PRIMARY KEY, digest TEXT NOT NULL, path TEXT NOT NULL)",
    "INSERT INTO chain (name, digest, path) VALUES ('head', '', '') ON CONFLICT (name) DO NOTHING",
)
# Added after the first index layout; an older index gains it when opened.
_CONTENT_ID = "content_id TEXT NOT NULL DEFAULT ''"  # the record's digest without its chain link
_CONTENT_INDEX = "CREATE INDEX IF NOT EXISTS records_content ON records (content_id)"

# What one value of the index may hold, identically on SQLite and PostgreSQL: PostgreSQL text
# cannot hold NUL, a btree entry holds about 2700 bytes at most (topic and run_label share
# one), and SQLite's text functions stop at a NUL. Limits in UTF-8 bytes.
MAX_BYTES = {"topic": 512, "run_label": 512, "text": 16384}
DEFAULT_MAX_BYTES = 512
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_IN_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # text may hold tabs and newlines

_POINT_DECISION = (
    "INSERT INTO current_decisions (topic, event_id, created_at) VALUES (?, ?, ?)"
    " ON CONFLICT (topic) DO UPDATE SET event_id = excluded.event_id, created_at = excluded.created_at"
    " WHERE excluded.created_at > current_decisions.created_at"
    " OR (excluded.created_at = current_decisions.created_at AND excluded.event_id > "
    "current_decisions.event_id)"
)


def storage_problems(row: dict) -> list[str]:
    """Why an index row cannot be stored (``column: what is wrong``; empty: it can), the same
    answer for both backends, so input is refused before any file is written."""
    out = []
    for column, value in row.items():
        if not isinstance(value, str):
            continue
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError as exc:
            out.append(f"{column}: not valid Unicode text (a lone surrogate at position {exc.start})")
            continue
        limit = MAX_BYTES.get(column, DEFAULT_MAX_BYTES)
        if size > limit:
            out.append(f"{column}: {size} bytes, the index stores at most {limit}")
            continue
        bad = (_CONTROL_IN_TEXT if column == "text" else _CONTROL).search(value)
        if bad:
            name = " (NUL)" if bad.group() == "\x00" else ""
            char = f"U+{ord(bad.group()):04X}{name} at position {bad.start()}"
            out.append(f"{column}: control character {char}; the index stores printable text only")
    return out


def is_postgres(url: str) -> bool:
    return url.startswith(POSTGRES_SCHEMES)


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_LEDGER_FORMS = (
    "give a PostgreSQL DSN (postgresql://HOST/DB), sqlite:///ABSOLUTE/PATH, "
    "sqlite:RELATIVE/PATH or a file path in an existing directory"
)


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
        path = url[scheme.end() :]
        if path.startswith("//"):  # sqlite:///abs/path (sqlite:////abs/path too); no host
            path = path[2:]
            if path and not path.startswith("/"):
                raise InputError(f"--ledger {redact(url)}: a sqlite URL has no host; {_LEDGER_FORMS}")
            path = "/" + path.lstrip("/") if path.strip("/") else ""
        if not path:
            raise InputError(f"--ledger {redact(url)}: a sqlite URL needs a file path; {_LEDGER_FORMS}")
    elif scheme and url[scheme.end() :].startswith("//"):
        raise InputError(
            f"--ledger {redact(url)}: unsupported URL scheme {scheme.group(1)!r}; {_LEDGER_FORMS}"
        )
    full = Path(os.path.abspath(path))
    if full.is_dir():
        raise InputError(
            f"--ledger {redact(url)}: {full} is a directory, expected the SQLite index file "
            f"(e.g. {full / 'ledger.sqlite'})"
        )
    if existing_dir and not full.parent.is_dir():
        raise InputError(
            f"--ledger {redact(url)}: directory {full.parent} does not exist "
            "(create it, or give a file in an existing directory)"
        )
    return str(full)


def redact(url: str) -> str:
    """A DSN (any ``scheme://user:password@host…``) without its credentials, for messages:
    the one redaction layer's rule for URLs."""
    return redact_text(url)


class Index:
    """A connection to the index database, SQLite file path or ``postgresql://`` DSN."""

    def __init__(self, url: str, lock_timeout: float = LOCK_TIMEOUT_S):
        self.url = url
        self.postgres = is_postgres(url)
        self.lock_timeout = lock_timeout
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
                    f"--ledger {redact(self.url)}: PostgreSQL needs psycopg: pip install "
                    "'stackcheck[postgres]'"
                ) from None
            try:
                self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
                self._conn.execute(f"SET lock_timeout = {int(self.lock_timeout * 1000)}")
            except psycopg.Error as exc:
                self._conn = None
                raise InputError(f"--ledger {redact(self.url)}: cannot connect: {_first_line(exc)}") from None
        else:
            import sqlite3

            _open_regular_file(Path(self.url))
            try:
                # autocommit mode: transactions are explicit (BEGIN IMMEDIATE) below
                conn = sqlite3.connect(self.url, timeout=self.lock_timeout, isolation_level=None)
                self._retry(lambda: conn.execute("PRAGMA journal_mode=WAL"))
                conn.execute("PRAGMA synchronous=FULL")
            except sqlite3.Error as exc:
                raise InputError(self._describe(exc)) from None
            self._conn = conn
        try:
            with self.transaction() as tx:
                if self.postgres:  # concurrent CREATE TABLE IF NOT EXISTS can collide in PostgreSQL
                    tx.execute("SELECT pg_advisory_xact_lock(7250119)")
                for statement in _SCHEMA:
                    tx.execute(statement)
                if not tx.has_column("records", "content_id"):
                    tx.execute(f"ALTER TABLE records ADD COLUMN {_CONTENT_ID}")
                tx.execute(_CONTENT_INDEX)
        except BaseException:
            self.close()
            raise
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_Tx]:
        """One write transaction holding the index's write lock (SQLite: ``BEGIN IMMEDIATE``;
        PostgreSQL: :meth:`_Tx.head` locks the head row); commits on success, rolls back on
        any error. Driver errors leave it as one-line InputErrors."""
        conn = self._conn if self._conn is not None else self._connect()
        with self._driver_errors():
            if self.postgres:
                with conn.transaction(), conn.cursor() as cur:
                    yield _Tx(cur, "%s", postgres=True)
                return
            self._retry(lambda: self._begin(conn))  # the write lock now: no upgrade deadlocks
            try:
                yield _Tx(conn.cursor(), "?")
                self._retry(lambda: self._commit(conn))
            except BaseException:
                with contextlib.suppress(Exception):
                    conn.execute("ROLLBACK")
                raise

    def _begin(self, conn) -> None:
        conn.execute("BEGIN IMMEDIATE")

    def _commit(self, conn) -> None:
        conn.execute("COMMIT")

    def _retry(self, step):
        """Run an SQLite ``step``; while it answers busy/locked without having waited, try again
        with backoff, at most until :attr:`lock_timeout` has passed."""
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.005
        while True:
            try:
                return step()
            except Exception as exc:
                left = deadline - time.monotonic()
                if not _busy(exc) or left <= 0:
                    raise
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.5)

    @contextlib.contextmanager
    def _driver_errors(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            if type(exc).__module__.split(".")[0] in ("sqlite3", "psycopg"):
                raise InputError(self._describe(exc)) from None
            raise

    def _describe(self, exc: Exception) -> str:
        if _busy(exc):
            return (
                f"{redact(self.url)}: the index stayed locked by other writers for "
                f"{self.lock_timeout:g} s; nothing was stored, try again"
            )
        if self.postgres:
            return f"--ledger {redact(self.url)}: {_first_line(exc)}"
        return (
            f"{self.url}: not a usable SQLite index ({_first_line(exc)}); move it aside and run "
            "`stackcheck results reindex` to rebuild it from the files"
        )

    def query(self, sql: str, params: Sequence = ()) -> list[tuple]:
        conn = self._connect()
        with self._driver_errors():
            if self.postgres:
                with conn.cursor() as cur:
                    cur.execute(sql.replace("?", "%s"), params)
                    return cur.fetchall()
            return self._retry(lambda: conn.execute(sql, params).fetchall())

    # ----- the queries the ledger needs -------------------------------------------------
    def records(self, where: str = "", params: Sequence = ()) -> list[dict]:
        rows = self.query(
            f"SELECT {', '.join(RECORD_COLUMNS)} FROM records {where} ORDER BY created_at, id", params
        )
        return [dict(zip(RECORD_COLUMNS, row, strict=True)) for row in rows]

    def events(self, where: str = "", params: Sequence = ()) -> list[dict]:
        rows = self.query(
            f"SELECT {', '.join(EVENT_COLUMNS)} FROM events {where} ORDER BY created_at, id", params
        )
        return [dict(zip(EVENT_COLUMNS, row, strict=True)) for row in rows]

    def current_decision(self, topic: str) -> str | None:
        rows = self.query("SELECT event_id FROM current_decisions WHERE topic = ?", (topic,))
        return rows[0][0] if rows else None

    def head(self) -> tuple[str, str]:
        """The chain's head as committed: (hex digest, path relative to the ledger), ("", "")
        when nothing is chained yet."""
        rows = self.query("SELECT digest, path FROM chain WHERE name = 'head'")
        return tuple(rows[0]) if rows else ("", "")


class _Tx:
    """A cursor that speaks ``?`` placeholders whatever the driver's paramstyle."""

    def __init__(self, cursor, placeholder: str, postgres: bool = False):
        self._cur = cursor
        self._ph = placeholder
        self._postgres = postgres

    def execute(self, sql: str, params: Sequence = ()) -> None:
        self._cur.execute(sql if self._ph == "?" else sql.replace("?", self._ph), params)

    def fetch(self, sql: str, params: Sequence = ()) -> list[tuple]:
        self.execute(sql, params)
        return self._cur.fetchall()

    def has_column(self, table: str, column: str) -> bool:
        if self._postgres:
            sql = (
                "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND table_name = ? AND column_name = ?"
            )
            return bool(self.fetch(sql, (table, column)))
        return any(row[1] == column for row in self.fetch(f"PRAGMA table_info({table})"))

    def head(self) -> tuple[str, str]:
        """The chain's head (hex digest, path); on PostgreSQL the row stays locked until the
        transaction ends, which serializes writers as SQLite's ``BEGIN IMMEDIATE`` does."""
        lock = " FOR UPDATE" if self._postgres else ""
        rows = self.fetch(f"SELECT digest, path FROM chain WHERE name = 'head'{lock}")
        return tuple(rows[0]) if rows else ("", "")

    def set_head(self, hex_id: str, path: str) -> None:
        self.execute("UPDATE chain SET digest = ?, path = ? WHERE name = 'head'", (hex_id, path))

    def stored_as(self, content_id: str) -> str | None:
        """The path of a record with this content (its digest without the chain link), if any;
        a record from before the chain is its own content id."""
        rows = self.fetch("SELECT path FROM records WHERE content_id = ? OR id = ?", (content_id, content_id))
        return rows[0][0] if rows else None

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


def _busy(exc: Exception) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or getattr(exc, "sqlstate", "") or ""
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or name == "55P03":  # 55P03: lock_not_available
        return True
    text = str(exc).lower()
    return type(exc).__name__ == "OperationalError" and ("database is locked" in text or "is busy" in text)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _open_regular_file(path: Path) -> None:
    """Create or check the SQLite index as a regular file, never through a symbolic link (a
    dangling ``ledger.sqlite`` link would put the index wherever it points), nor its journals."""
    link = "is a symbolic link; the index is opened only as a regular file in the ledger directory"
    path.parent.mkdir(parents=True, exist_ok=True)
    for p in (path, *(Path(f"{path}{suffix}") for suffix in ("-wal", "-shm", "-journal"))):
        if p.is_symlink():
            raise InputError(f"{p}: {link}")
    flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link that appeared after the check above
            raise InputError(f"{path}: {link}") from None
        raise InputError(f"{path}: cannot open the index: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{path}: not a regular file, expected the ledger's SQLite index")
    finally:
        os.close(fd)


def default_url(root: Path) -> str:
    """``--ledger`` / ``STACKCHECK_LEDGER`` when set, else ``<root>/ledger.sqlite``."""
    return os.environ.get("STACKCHECK_LEDGER") or str(root / "ledger.sqlite")
