"""The mining store: jobs, their cells and their signatures, in the ledger's database.

It reuses the ledger index's connection layer (:class:`stackcheck.results.index.Index`): the
same SQLite file beside the ledger by default (opened only as a regular file, never through
a link, WAL, bounded lock waits) or the same PostgreSQL DSN, with tables of its own
(``mine_*``). One run is written in one transaction, so an ingest stores all of a run's jobs
or none; a (run, job, attempt) already stored is left as it is, so ingesting again changes
nothing, and concurrent ingests of one run store it once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from stackcheck.mining.envfacts import cell_of
from stackcheck.mining.ingest import JobRecord

__all__ = ["IngestResult", "MineStore", "default_store_url"]

_LOCK_ID = 7250121  # PostgreSQL advisory lock serializing mining ingests (the ledger uses 7250119)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS mine_runs (run TEXT PRIMARY KEY, source TEXT NOT NULL,"
    " ingested_at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS mine_cells (cell TEXT PRIMARY KEY, facts TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS mine_jobs (run TEXT NOT NULL, job TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " family TEXT NOT NULL, outcome TEXT NOT NULL, cell TEXT NOT NULL, lines INTEGER NOT NULL,"
    " source TEXT NOT NULL, PRIMARY KEY (run, job, attempt))",
    "CREATE INDEX IF NOT EXISTS mine_jobs_family ON mine_jobs (family, cell)",
    "CREATE TABLE IF NOT EXISTS mine_signatures (sig TEXT PRIMARY KEY, exception TEXT NOT NULL,"
    " template TEXT NOT NULL, frames TEXT NOT NULL, test TEXT NOT NULL, kind TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS mine_hits (run TEXT NOT NULL, job TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " sig TEXT NOT NULL, occurrences INTEGER NOT NULL, line INTEGER NOT NULL, example TEXT NOT NULL,"
    " PRIMARY KEY (run, job, attempt, sig))",
    "CREATE INDEX IF NOT EXISTS mine_hits_sig ON mine_hits (sig)",
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
MAX_TEXT = 1000


def _text(value: str, limit: int = MAX_TEXT) -> str:
    """What the index stores of a text: no control characters, no lone surrogates, bounded."""
    value = _CONTROL.sub(" ", value)[:limit]
    return value.encode("utf-8", errors="replace").decode("utf-8")


def default_store_url() -> str:
    """``$STACKCHECK_LEDGER`` when set, else the ledger's SQLite index (``<ledger>/ledger.sqlite``)."""
    from stackcheck.results.index import default_url
    from stackcheck.results.ledger import default_root

    return default_url(default_root())


@dataclass
class IngestResult:
    run: str
    stored: int  # jobs newly stored
    already: int  # jobs that were stored before (left as they are)
    failed: int  # of the stored, the failed ones
    signatures: int  # signature occurrences stored


class MineStore:
    """The mining tables of one database (a SQLite path or a ``postgresql://`` DSN)."""

    def __init__(self, url: str | None = None) -> None:
        from stackcheck.results.index import Index

        self.url = url or default_store_url()
        self.index = Index(self.url)
        self._ready = False

    def __enter__(self) -> MineStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.index.close()

    @property
    def name(self) -> str:
        from stackcheck.results.index import redact

        return redact(self.url)

    def _schema(self) -> None:
        if self._ready:
            return
        with self.index.transaction() as tx:
            if self.index.postgres:  # concurrent CREATE TABLE IF NOT EXISTS can collide
                tx.execute(f"SELECT pg_advisory_xact_lock({_LOCK_ID})")
            for statement in _SCHEMA:
                tx.execute(statement)
        self._ready = True

    # ----- writing ----------------------------------------------------------------------
    def ingest(self, records: Sequence[JobRecord], *, source: str, now: str) -> list[IngestResult]:
        """Store the records, one transaction per run."""
        self._schema()
        by_run: dict[str, list[JobRecord]] = {}
        for r in records:
            by_run.setdefault(r.run, []).append(r)
        return [self._ingest_run(run, jobs, source, now) for run, jobs in by_run.items()]

    def _ingest_run(self, run: str, jobs: list[JobRecord], source: str, now: str) -> IngestResult:
        result = IngestResult(run=run, stored=0, already=0, failed=0, signatures=0)
        with self.index.transaction() as tx:
            if self.index.postgres:
                tx.execute(f"SELECT pg_advisory_xact_lock({_LOCK_ID})")
            stored = {
                (row[0], int(row[1]))
                for row in tx.fetch("SELECT job, attempt FROM mine_jobs WHERE run = ?", (run,))
            }
            tx.execute(
                "INSERT INTO mine_runs (run, source, ingested_at) VALUES (?, ?, ?)"
                " ON CONFLICT (run) DO NOTHING",
                (_text(run, 512), _text(source), now),
            )
            for r in jobs:
                if (r.job, r.attempt) in stored:
                    result.already += 1
                    continue
                stored.add((r.job, r.attempt))
                self._insert_job(tx, r)
                result.stored += 1
                result.failed += r.outcome == "failed"
                result.signatures += len(r.failures)
        return result

    def _insert_job(self, tx, r: JobRecord) -> None:
        cell, facts = cell_of(r.facts)
        tx.execute(
            "INSERT INTO mine_cells (cell, facts) VALUES (?, ?) ON CONFLICT (cell) DO NOTHING",
            (cell, _text(facts, 1 << 20)),
        )
        key = (_text(r.run, 512), _text(r.job, 512), r.attempt)
        tx.execute(
            "INSERT INTO mine_jobs (run, job, attempt, family, outcome, cell, lines, source)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run, job, attempt) DO NOTHING",
            (*key, _text(r.family, 512), r.outcome, cell, r.lines, _text(r.source)),
        )
        for f in r.failures:
            sig = f.key
            tx.execute(
                "INSERT INTO mine_signatures (sig, exception, template, frames, test, kind)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (sig) DO NOTHING",
                (
                    sig,
                    _text(f.exception, 200),
                    _text(f.template),
                    _text("\n".join(f.frames)),
                    _text(f.test, 512),
                    f.kind,
                ),
            )
            tx.execute(
                "INSERT INTO mine_hits (run, job, attempt, sig, occurrences, line, example)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run, job, attempt, sig) DO NOTHING",
                (*key, sig, r.counts.get(sig, 1), f.line, _text(f.example)),
            )

    # ----- reading (set-based: every query aggregates in the database) -------------------
    def query(self, sql: str, params: Sequence = ()) -> list[tuple]:
        self._schema()
        return self.index.query(sql, params)

    def totals(self) -> dict[str, int]:
        rows = self.query("SELECT outcome, COUNT(*) FROM mine_jobs GROUP BY outcome")
        out = {"failed": 0, "passed": 0}
        out.update({str(o): int(n) for o, n in rows})
        out["runs"] = int(self.query("SELECT COUNT(*) FROM mine_runs")[0][0])
        return out

    def failing_signatures(self) -> list[dict]:
        """Every signature carried by at least one failed job, with its support."""
        rows = self.query(
            "SELECT s.sig, s.exception, s.template, s.frames, s.test, s.kind, COUNT(*) FROM mine_signatures s"
            " JOIN mine_hits h ON h.sig = s.sig"
            " JOIN mine_jobs j ON j.run = h.run AND j.job = h.job AND j.attempt = h.attempt"
            " WHERE j.outcome = 'failed' GROUP BY s.sig, s.exception, s.template, s.frames, s.test, s.kind"
            " ORDER BY COUNT(*) DESC, s.sig"
        )
        keys = ("sig", "exception", "template", "frames", "test", "kind", "support")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def set_groups(self, groups: Iterable[tuple[str, str]]) -> None:
        """Map signatures to groups for the queries below (a temporary table of this session)."""
        rows = list(groups)
        with self.index.transaction() as tx:
            tx.execute(
                "CREATE TEMP TABLE IF NOT EXISTS mine_groups (sig TEXT PRIMARY KEY, grp TEXT NOT NULL,"
                " kept INTEGER NOT NULL DEFAULT 0)"
            )
            tx.execute("DELETE FROM mine_groups")
            for i in range(0, len(rows), 400):
                chunk = rows[i : i + 400]
                marks = ", ".join("(?, ?)" for _ in chunk)
                tx.execute(
                    f"INSERT INTO mine_groups (sig, grp) VALUES {marks}", [v for pair in chunk for v in pair]
                )

    def keep_groups(self, kept: Iterable[str]) -> None:
        kept = list(kept)
        with self.index.transaction() as tx:
            tx.execute("UPDATE mine_groups SET kept = 0")
            for i in range(0, len(kept), 400):
                chunk = kept[i : i + 400]
                tx.execute(
                    f"UPDATE mine_groups SET kept = 1 WHERE grp IN ({', '.join('?' for _ in chunk)})", chunk
                )

    def group_cells(self) -> list[tuple]:
        """(group, family, cell, attempts, failures, false positives, passing jobs) for every
        group and every cell of the job families it failed in."""
        return self.query(
            "WITH fam AS (SELECT DISTINCT g.grp, j.family FROM mine_groups g"
            "  JOIN mine_hits h ON h.sig = g.sig"
            "  JOIN mine_jobs j ON j.run = h.run AND j.job = h.job AND j.attempt = h.attempt"
            "  WHERE j.outcome = 'failed'),"
            " hit AS (SELECT DISTINCT g.grp, h.run, h.job, h.attempt FROM mine_groups g"
            "  JOIN mine_hits h ON h.sig = g.sig)"
            " SELECT f.grp, j.family, j.cell, COUNT(*),"
            "  SUM(CASE WHEN x.grp IS NOT NULL AND j.outcome = 'failed' THEN 1 ELSE 0 END),"
            "  SUM(CASE WHEN x.grp IS NOT NULL AND j.outcome = 'passed' THEN 1 ELSE 0 END),"
            "  SUM(CASE WHEN j.outcome = 'passed' THEN 1 ELSE 0 END)"
            " FROM fam f JOIN mine_jobs j ON j.family = f.family"
            " LEFT JOIN hit x ON x.grp = f.grp AND x.run = j.run AND x.job = j.job AND x.attempt = j.attempt"
            " GROUP BY f.grp, j.family, j.cell ORDER BY f.grp, j.family, j.cell"
        )

    def group_examples(self, per_group: int = 3) -> list[tuple[str, str]]:
        """Up to ``per_group`` distinct example texts of each group, from failed jobs."""
        return self.query(
            "SELECT grp, example FROM (SELECT grp, example,"
            " ROW_NUMBER() OVER (PARTITION BY grp ORDER BY example) AS n"
            " FROM (SELECT DISTINCT g.grp, h.example FROM mine_groups g JOIN mine_hits h ON h.sig = g.sig"
            "  JOIN mine_jobs j ON j.run = h.run AND j.job = h.job AND j.attempt = h.attempt"
            "  WHERE j.outcome = 'failed') d) e WHERE n <= ? ORDER BY grp, example",
            (per_group,),
        )

    def passing_examples(self, limit: int = 2000) -> list[str]:
        """Texts of signatures seen in passing jobs (counter-examples for the rules' patterns)."""
        rows = self.query(
            "SELECT DISTINCT h.example FROM mine_hits h"
            " JOIN mine_jobs j ON j.run = h.run AND j.job = h.job AND j.attempt = h.attempt"
            " WHERE j.outcome = 'passed' ORDER BY h.example LIMIT ?",
            (limit,),
        )
        return [r[0] for r in rows]

    def explained_failed_jobs(self) -> int:
        """Failed jobs carrying a signature of a kept group."""
        rows = self.query(
            "SELECT COUNT(*) FROM (SELECT DISTINCT h.run, h.job, h.attempt FROM mine_hits h"
            " JOIN mine_groups g ON g.sig = h.sig AND g.kept = 1"
            " JOIN mine_jobs j ON j.run = h.run AND j.job = h.job AND j.attempt = h.attempt"
            " WHERE j.outcome = 'failed') x"
        )
        return int(rows[0][0])

    def cells(self) -> dict[str, dict[str, str]]:
        return {cell: json.loads(facts) for cell, facts in self.query("SELECT cell, facts FROM mine_cells")}


def utc_now() -> str:
    from stackcheck.results.ledger import utc_now as now

    return now()
