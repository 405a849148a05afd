"""Reliability: many writers lose and duplicate nothing; a crash mid-write leaves no partial
record and an intact index (over SQLite and PostgreSQL)."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap

import msgspec
import pytest

from stackcheck.results.contract import ResultRecord
from stackcheck.results.ledger import Ledger
from stackcheck.results.recording import complete
from stackcheck.results.validation import validate_file, validate_ledger
from tests.results.conftest import full_draft, snapshot_path

PROCESSES, PER_PROCESS = 8, 50


def _completed(catalog, tmp_path, snapshot="h100-single", raw_log=None, **changes) -> ResultRecord:
    from stackcheck.environment import load_snapshot
    from stackcheck.results.recording import load_draft, preflight

    draft = load_draft(full_draft(raw_log, **changes))
    snap = load_snapshot(str(snapshot_path(snapshot)))
    return complete(draft, snap, preflight(draft.profile, snap, catalog=catalog), cwd=tmp_path)


def _writer(root, url, worker, shared_record, catalog, cwd, results):
    """One process: PER_PROCESS distinct records completed and stored (preflight judged
    once per process: it is the same snapshot and profile), then the one record every
    process tries to store."""
    from stackcheck.environment import load_snapshot
    from stackcheck.errors import Refused
    from stackcheck.results.recording import load_draft, preflight

    stored = refused = 0
    snap = load_snapshot(str(snapshot_path("h100-single")))
    profile = preflight("LAB-GPU", snap, catalog=catalog)
    with Ledger(root, url) as ledger:
        for i in range(PER_PROCESS):
            ledger.store(complete(load_draft(full_draft(run_label=f"w{worker}-{i}")), snap, profile, cwd=cwd))
            stored += 1
        try:
            ledger.store(msgspec.json.decode(shared_record, type=ResultRecord))
            stored += 1
        except Refused:
            refused += 1
    results.put((stored, refused))


@pytest.mark.slow
def test_many_processes_lose_nothing_and_duplicate_nothing(any_ledger, catalog, tmp_path):
    shared = msgspec.json.encode(_completed(catalog, tmp_path, run_label="everyone"))
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=_writer,
            args=(any_ledger.root, any_ledger.index.url, w, shared, catalog, tmp_path, results),
        )
        for w in range(PROCESSES)
    ]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    total = PROCESSES * PER_PROCESS + 1
    assert sum(s for s, _ in outcomes) == total
    assert sum(r for _, r in outcomes) == PROCESSES - 1  # the shared record: stored once, refused 7 times
    entries = any_ledger.entries()
    assert len(entries) == total
    assert len({e.record.digest for e in entries}) == total
    assert len(list(any_ledger.records_dir.glob("*.json"))) == total
    labels = {e.record.run_label for e in entries}
    assert labels == {f"w{w}-{i}" for w in range(PROCESSES) for i in range(PER_PROCESS)} | {"everyone"}
    assert not any(p.name.startswith(".") for p in any_ledger.records_dir.iterdir())
    assert all(r.valid for r in validate_ledger(any_ledger))
    prevs = [e.record.prev for e in entries]
    assert len(set(prevs)) == total and prevs.count("") == 1  # one linear chain: writers never fork it


CRASH = textwrap.dedent(
    """
    import os, sys, msgspec
    from stackcheck.results.contract import ResultRecord
    from stackcheck.results.ledger import Ledger
    from stackcheck.results import index
    root, url, record_file, where = sys.argv[1:5]
    def crash(*a, **k):
        os._exit(17)
    if where == "write":        # after the temp file's bytes, before its fsync
        os.fsync = crash
    elif where == "link":       # temp file complete, before it becomes the record
        os.link = crash
    elif where == "index":      # record file in place, inside the index transaction
        original = index._Tx.insert_record
        def insert_then_crash(self, row):
            original(self, row)
            crash()
        index._Tx.insert_record = insert_then_crash
    elif where == "committed":  # record and its row committed, nothing after (where flag events were written)
        Ledger._flags_raised_by = crash
    Ledger(root, url).store(msgspec.json.decode(open(record_file, "rb").read(), type=ResultRecord))
    """
)


@pytest.mark.parametrize("where", ["write", "link", "index"])
def test_a_crash_mid_write_leaves_no_partial_record_and_an_intact_index(
    any_ledger, catalog, tmp_path, where, record_in
):
    earlier = record_in(full_draft(run_label="earlier"), into=any_ledger)
    rec = _completed(catalog, tmp_path, run_label="crashing")
    record_file = tmp_path / "record.json"
    record_file.write_bytes(msgspec.json.encode(rec))
    proc = subprocess.run(
        [sys.executable, "-c", CRASH, str(any_ledger.root), any_ledger.index.url, str(record_file), where],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 17, proc.stderr
    # the index is intact and still lists exactly what was committed
    assert [e.stored().id for e in any_ledger.entries()] == [earlier.stored.id]
    if not any_ledger.index.postgres:
        assert any_ledger.index.query("PRAGMA integrity_check") == [("ok",)]
    files = sorted(p.name for p in any_ledger.records_dir.glob("*.json"))
    if where == "index":  # the whole file is there; reindex brings it in
        assert len(files) == 2
        assert any_ledger.reindex() == {"records": 2, "events": 0, "skipped": 0}
        assert {e.record.run_label for e in any_ledger.entries()} == {"earlier", "crashing"}
    else:  # no partial record: at most a hidden temp file that nothing lists
        assert files == [earlier.stored.path.rsplit("/", 1)[1]]
        assert all(validate_file(path).valid for path in any_ledger.files())
        assert any_ledger.store(rec)[0].id  # and the same record can still be stored afterwards
