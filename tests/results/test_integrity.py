"""Integrity of the ledger under hostile situations, each built by the test itself: a crash
between a rerun and its verdict, deleted / replaced / re-hashed files, one run recorded twice,
concurrent writers, values a backend cannot store, a symlinked or corrupt index, leftovers of
crashed writes. Over the SQLite index and the PostgreSQL index where the index matters."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from stackcheck.errors import InputError, Refused
from stackcheck.results.contract import Event, ResultRecord
from stackcheck.results.identity import content_digest
from stackcheck.results.ledger import Ledger
from stackcheck.results.validation import validate_file, validate_ledger
from tests.results.conftest import full_draft, snapshot_path
from tests.results.test_reliability import CRASH, _completed

SLOW = {"value": 60.0, "unit": "ms", "repetitions": [59.0, 60.0, 61.0]}
CLOSE = {"value": 42.5, "unit": "ms", "repetitions": [42.1, 42.5, 42.9]}
NOT_INDEXED = (
    "not in the index: left by an interrupted write or added by hand; "
    "`stackcheck results reindex` takes it in"
)
OLD_LEDGER = Path(__file__).parents[1] / "data" / "ledgers" / "v1.0"


def invalid(ledger) -> dict[str, list[str]]:
    """Path → problems of every file `results validate` reports as not valid."""
    return {r.path: r.problems for r in validate_ledger(ledger) if not r.valid}


def hex_of(record: ResultRecord) -> str:
    return record.digest.partition(":")[2]


def ledger_files(ledger) -> list[str]:
    """Every file under records/ and events/, hidden temp files included."""
    return sorted(
        str(p.relative_to(ledger.root))
        for d in (ledger.records_dir, ledger.events_dir)
        if d.is_dir()
        for p in d.iterdir()
    )


def crash_storing(ledger, record: ResultRecord, where: str, tmp_path) -> None:
    record_file = tmp_path / f"crashing-{where}.json"
    record_file.write_bytes(msgspec.json.encode(record))
    proc = subprocess.run(
        [sys.executable, "-c", CRASH, str(ledger.root), ledger.index.url, str(record_file), where],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 17, proc.stderr


# ----- 1. a rerun's tolerance verdict cannot be lost -----------------------------------------
def test_storing_a_rerun_writes_one_file_and_its_flag_is_derived_from_the_records(
    record_in, any_ledger, raw_log
):
    original = record_in(full_draft(raw_log, evidence="measured"), into=any_ledger)
    slow = record_in(
        full_draft(raw_log, run_label="slow", evidence="measured", **{"metrics.latency_p50_ms": SLOW}),
        snapshot="vllm-011-h100",
        into=any_ledger,
    )
    assert [f.record_id for f in slow.flags] == [hex_of(original.record)]
    assert ledger_files(any_ledger) == sorted(f"records/{hex_of(r.record)}.json" for r in (original, slow))
    flags = any_ledger.flags(original.record)
    assert [(f.record_id, f.proof) for f in flags] == [
        (hex_of(original.record), {"rerun": hex_of(slow.record)})
    ]
    assert (
        flags[0].text == f"rerun {hex_of(slow.record)[:16]} outside tolerance: "
        "latency_p50_ms: 41.2 → 60 (+45.6%, tolerance ±5.0%)"
    )
    assert any_ledger.flags(slow.record) == []  # only later runs flag earlier ones


@pytest.mark.parametrize("where", ["index", "committed"])
def test_a_crash_while_storing_a_rerun_loses_no_flag(
    record_in, any_ledger, catalog, tmp_path, raw_log, where
):
    original = record_in(full_draft(raw_log, evidence="measured"), into=any_ledger)
    record_in(
        full_draft(raw_log, run_label="close", evidence="measured", **{"metrics.latency_p50_ms": CLOSE}),
        snapshot="vllm-011-h100",
        into=any_ledger,
    )  # a valid reproduction
    slow = _completed(
        catalog,
        tmp_path,
        snapshot="multi-gpu-8xa100",
        raw_log=raw_log,
        run_label="slow",
        evidence="measured",
        **{"metrics.latency_p50_ms": SLOW},
    )
    crash_storing(any_ledger, slow, where, tmp_path)
    if where == "index":  # the file is there, its row never committed: validate says so, reindex takes it in
        ((path, problems),) = invalid(any_ledger).items()
        assert Path(path).parent == any_ledger.records_dir and problems == [NOT_INDEXED]
        assert any_ledger.reindex() == {"records": 3, "events": 0, "skipped": 0}
    assert invalid(any_ledger) == {}
    (flag,) = any_ledger.flags(original.record)
    assert flag.text.startswith("rerun ") and "latency_p50_ms: 41.2 → 60" in flag.text
    with pytest.raises(Refused) as refused:  # the flag is all that stands in the way: "close" reproduces it
        any_ledger.promote(original.record, "reproduced")
    assert str(refused.value).splitlines()[1:] == [f"  - flag: {flag.text}"]
    # and a rebuilt index recreates the verdict from the files
    with any_ledger.index.transaction() as tx:
        tx.clear()
    any_ledger.reindex()
    # the original and the close run (both earlier than the slow one) are flagged
    assert [len(e.flags) for e in any_ledger.entries()] == [1, 1, 0]


def test_storing_the_same_record_again_after_a_crash_completes_the_interrupted_write(
    record_in, any_ledger, catalog, tmp_path
):
    earlier = record_in(full_draft(run_label="earlier"), into=any_ledger)
    rec = _completed(catalog, tmp_path, run_label="crashing")
    crash_storing(any_ledger, rec, "index", tmp_path)  # its file is there, linked to the head; no row
    stored, _, again = any_ledger.store(rec)
    assert again.prev == earlier.record.digest and len(ledger_files(any_ledger)) == 2
    assert [e.stored().id for e in any_ledger.entries()] == [earlier.stored.id, stored.id]
    assert invalid(any_ledger) == {}


# ----- 2. the chain: deleted, replaced, re-hashed files ---------------------------------------
def _three_records_and_a_promotion(record_in, ledger, raw_log):
    a = record_in(full_draft(raw_log), into=ledger)
    b = record_in(full_draft(raw_log, run_label="b"), into=ledger)
    promotion = ledger.promote(b.record, "measured")
    c = record_in(full_draft(raw_log, run_label="c"), into=ledger)
    assert invalid(ledger) == {}
    return a, b, promotion, c


def test_every_file_names_its_predecessor_and_the_index_keeps_the_head(record_in, any_ledger, raw_log):
    a, b, promotion, c = _three_records_and_a_promotion(record_in, any_ledger, raw_log)
    assert [a.record.prev, b.record.prev, promotion.prev, c.record.prev] == [
        "",
        a.record.digest,
        b.record.digest,
        promotion.digest,
    ]
    assert any_ledger.index.head() == (hex_of(c.record), f"records/{hex_of(c.record)}.json")
    assert (
        json.loads((any_ledger.records_dir / f"{hex_of(c.record)}.json").read_text())["prev"]
        == promotion.digest
    )


@pytest.mark.parametrize("victim", ["a", "b", "promotion", "c"])
def test_a_deleted_file_is_named_by_validate_before_and_after_reindex(
    record_in, any_ledger, raw_log, results_cli, victim
):
    files = dict(
        zip(
            ["a", "b", "promotion", "c"],
            _three_records_and_a_promotion(record_in, any_ledger, raw_log),
            strict=True,
        )
    )
    gone = files[victim] if victim == "promotion" else files[victim].record
    sub = "events" if victim == "promotion" else "records"
    path = any_ledger.root / sub / f"{gone.digest.partition(':')[2]}.json"
    path.unlink()
    found = invalid(any_ledger)
    promotion_path = str(any_ledger.events_dir / f"{files['promotion'].digest.partition(':')[2]}.json")
    assert sorted(found) == sorted([str(path), *([promotion_path] if victim == "b" else [])])
    assert "missing: the index lists it but the file is gone (deleted or replaced)" in found[str(path)]
    if victim == "b":  # the promotion of the deleted record says so too
        assert found[promotion_path] == [f"record_id: no record {gone.digest[7:23]} in the ledger"]
    code, out, _ = results_cli("validate", ledger_dir=any_ledger.root, ledger=any_ledger.index.url)
    assert code == 1 and f"{path}: invalid" in out
    # reindex cannot make it go away: the successor (or the head) still names it
    assert any_ledger.reindex()["skipped"] == 0
    assert len(any_ledger.notes) == 1 and gone.digest.partition(":")[2] in any_ledger.notes[0]
    problems = invalid(any_ledger).pop(
        str(path) if victim == "c" else any_ledger._guess_path(gone.digest[7:])
    )
    if victim == "c":
        assert problems == [
            f"missing: the index's chain head {gone.digest[7:23]} names it (the newest files were removed)"
        ]
    else:
        successor = {"a": files["b"].record, "b": files["promotion"], "promotion": files["c"].record}[victim]
        where = "events" if successor is files["promotion"] else "records"
        successor_path = any_ledger.root / where / f"{successor.digest.partition(':')[2]}.json"
        assert problems == [
            f"missing: {successor_path} names it as its predecessor (a deleted, replaced or re-hashed file)"
        ]
    assert results_cli("validate", ledger_dir=any_ledger.root, ledger=any_ledger.index.url)[0] == 1


@pytest.mark.parametrize("victim", ["a", "c"])
def test_a_record_edited_rehashed_and_renamed_is_detected(record_in, any_ledger, raw_log, victim):
    files = dict(
        zip(
            ["a", "b", "promotion", "c"],
            _three_records_and_a_promotion(record_in, any_ledger, raw_log),
            strict=True,
        )
    )
    original = files[victim].record
    forged = msgspec.structs.replace(
        original,
        metrics={"latency_p50_ms": msgspec.structs.replace(original.metrics["latency_p50_ms"], value=30.0)},
    )  # a better number, after the fact
    forged.digest = content_digest(forged)
    old_path = any_ledger.records_dir / f"{hex_of(original)}.json"
    new_path = any_ledger.records_dir / f"{hex_of(forged)}.json"
    new_path.write_bytes(msgspec.json.format(msgspec.json.encode(forged), indent=1))
    old_path.unlink()
    assert validate_file(new_path).valid  # the file alone is flawless
    found = invalid(any_ledger)
    assert set(found) == {str(old_path), str(new_path)}
    assert found[str(new_path)] == [NOT_INDEXED]
    any_ledger.reindex()  # even an index rebuilt from the forged files keeps the evidence
    if victim == "a":  # its successor names it
        b_path = any_ledger.records_dir / f"{hex_of(files['b'].record)}.json"
        assert invalid(any_ledger) == {
            any_ledger._guess_path(hex_of(original)): [
                f"missing: {b_path} names it as its predecessor (a deleted, replaced or re-hashed file)"
            ]
        }
    else:  # the newest file: the head names it
        assert invalid(any_ledger) == {
            str(old_path): [
                f"missing: the index's chain head {hex_of(original)[:16]} names it "
                "(the newest files were removed)"
            ]
        }


def test_a_tampered_event_is_invalid(record_in, any_ledger, raw_log, results_cli):
    a = record_in(full_draft(raw_log), into=any_ledger)
    decision = any_ledger.decide(a.record.topic, a.record.run_label, "keep sdpa")
    path = any_ledger.events_dir / f"{decision.digest.partition(':')[2]}.json"
    data = json.loads(path.read_text())
    data["text"] = "ship flash-attn"
    path.write_text(json.dumps(data))
    edited = content_digest(msgspec.json.decode(path.read_bytes(), type=Event))
    assert validate_file(path).problems == [
        f"tampered: content hashes to {edited[7:23]}, the file says {decision.digest[7:23]}"
    ]
    code, out, _ = results_cli("validate", ledger_dir=any_ledger.root, ledger=any_ledger.index.url)
    assert code == 1 and f"{path}: invalid (event)\n  tampered: content hashes to" in out


def test_an_event_about_a_record_that_is_not_there_is_invalid(record_in, any_ledger, raw_log):
    a = record_in(full_draft(raw_log), into=any_ledger)
    event = any_ledger.append(
        "promotion", topic=a.record.topic, run_label="x", record_id="f" * 64, level="measured"
    )
    path = str(any_ledger.events_dir / f"{event.digest.partition(':')[2]}.json")
    assert invalid(any_ledger) == {path: [f"record_id: no record {'f' * 16} in the ledger"]}


def test_the_chain_is_evidence_not_a_signature(record_in, any_ledger, raw_log):
    """What it cannot detect: rewriting the newest file and the head together."""
    a = record_in(full_draft(raw_log), into=any_ledger)
    b = record_in(full_draft(raw_log, run_label="b"), into=any_ledger)
    forged = msgspec.structs.replace(b.record, run_label="forged")
    forged.digest = content_digest(forged)
    (any_ledger.records_dir / f"{hex_of(b.record)}.json").unlink()
    (any_ledger.records_dir / f"{hex_of(forged)}.json").write_bytes(msgspec.json.encode(forged))
    with any_ledger.index.transaction() as tx:
        tx.set_head(hex_of(forged), f"records/{hex_of(forged)}.json")
    any_ledger.reindex()
    assert invalid(any_ledger) == {}
    assert {e.record.run_label for e in any_ledger.entries()} == {a.record.run_label, "forged"}


def test_a_ledger_written_before_the_chain_still_validates_and_reads(tmp_path, record_in, raw_log):
    root = tmp_path / "old"
    shutil.copytree(OLD_LEDGER, root)
    with Ledger(root) as old:
        assert invalid(old) == {}
        entries = {e.record.run_label: e for e in old.entries()}
        assert {k: (e.level, len(e.flags)) for k, e in entries.items()} == {
            "baseline-sdpa": ("reproduced", 1),
            "rerun": ("measured", 1),
            "slow": ("measured", 0),
        }
        assert all(e.flags[0].digest for e in entries.values() if e.flags)  # the flag events written then
        assert old.current_decision("inference/qwen2.5-0.5b-latency").text == "keep sdpa"
        with pytest.raises(Refused, match="already in the ledger"):
            old.store(entries["slow"].record)
        new = record_in(full_draft(raw_log, run_label="new"), into=old)
        assert new.record.prev == "" and invalid(old) == {}
        assert old.reindex() == {"records": 4, "events": 4, "skipped": 0} and invalid(old) == {}
        gone = root / "records" / f"{hex_of(entries['rerun'].record)}.json"
        gone.unlink()  # a file from before the chain: the index still knows it
        assert invalid(old)[str(gone)] == [
            "missing: the index lists it but the file is gone (deleted or replaced)"
        ]


OLD_RECORDS_TABLE = (  # the records table as the version before the chain created it
    "CREATE TABLE records (id TEXT PRIMARY KEY, topic TEXT NOT NULL, run_label TEXT NOT NULL,"
    " identity_key TEXT NOT NULL, evidence TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,"
    " snapshot_digest TEXT NOT NULL, path TEXT NOT NULL)"
)


def test_an_index_written_before_the_chain_gains_its_new_column(any_ledger, record_in, tmp_path):
    if any_ledger.index.postgres:
        import psycopg

        with psycopg.connect(any_ledger.index.url, autocommit=True) as conn:
            conn.execute(OLD_RECORDS_TABLE)
    else:
        any_ledger.root.mkdir(parents=True)
        with sqlite3.connect(any_ledger.index.url) as conn:
            conn.execute(OLD_RECORDS_TABLE)
    root = tmp_path / "old-files"
    shutil.copytree(OLD_LEDGER, root)
    (root / "ledger.sqlite").unlink()
    with Ledger(root, any_ledger.index.url) as old:
        assert old.reindex() == {"records": 3, "events": 4, "skipped": 0}
        assert invalid(old) == {}
        new = record_in(full_draft(run_label="new"), into=old)
        assert new.record.prev.startswith("sha256:") and invalid(old) == {}
        with pytest.raises(Refused, match="already in the ledger"):
            old.store(new.record)


# ----- 3. a reproduction comes from a distinct run ---------------------------------------------
def _recaptured(tmp_path, seconds: int, **git) -> Path:
    """The h100-single snapshot taken again ``seconds`` later (and after ``git`` changes to
    its checkout): only tool.captured_at (and those git fields) differ."""
    data = json.loads(snapshot_path("h100-single").read_text())
    stamp = data["tool"]["captured_at"]  # 2026-11-20T18:22:07Z
    data["tool"]["captured_at"] = stamp[:17] + f"{(int(stamp[17:19]) + seconds) % 60:02d}" + stamp[19:]
    assert data["tool"]["captured_at"] != stamp
    data["git"].update(git)
    path = tmp_path / f"h100-single-again-{seconds}.json"
    path.write_text(json.dumps(data))
    return path


def test_the_same_draft_recorded_twice_in_one_environment_is_no_reproduction(
    record_in, ledger, raw_log, tmp_path
):
    draft = full_draft(raw_log, evidence="measured")
    first = record_in(draft, into=ledger)
    second = record_in(draft, snapshot=_recaptured(tmp_path, 40), into=ledger)
    assert second.record.snapshot_digest != first.record.snapshot_digest
    with pytest.raises(Refused) as refused:
        ledger.promote(first.record, "reproduced")
    assert str(refused.value).splitlines()[1:] == [
        "  - reproduced: an independent run with the same identity key from another environment snapshot, "
        "at least measured, within tolerance",
        f"  - reproduced: {hex_of(second.record)[:16]} is not an independent run: its environment snapshot "
        "differs only in tool.captured_at (how, when or in which checkout it was taken): the same "
        "environment, where a rerun shows repeatability, not reproduction",
    ]
    # a commit in between changes the checkout, not the environment
    after_commit = _recaptured(tmp_path, 80, commit="c" * 40, dirty=True)
    with pytest.raises(
        Refused, match=re.escape("differs only in tool.captured_at, git.commit, git.dirty (how")
    ):
        record_in(full_draft(raw_log, evidence="reproduced"), snapshot=after_commit, into=ledger)
    # a run from another environment still reproduces it
    other = record_in(draft, snapshot="vllm-011-h100", into=ledger)
    assert ledger.promote(first.record, "reproduced").proof["reproduced_by"] == hex_of(other.record)[:16]


# ----- 4. concurrent writers wait, within a bound ------------------------------------------------
def test_a_locked_index_is_retried_with_backoff(record_in, ledger, monkeypatch):
    from stackcheck.results.index import Index

    original, attempts = Index._begin, []

    def locked_twice(self, conn):
        attempts.append(1)
        if len(attempts) <= 2:
            raise sqlite3.OperationalError("database is locked")
        original(self, conn)

    record_in(full_draft(run_label="first"), into=ledger)  # schema created
    monkeypatch.setattr(Index, "_begin", locked_twice)
    done = record_in(full_draft(), into=ledger)
    assert len(attempts) == 3
    entries = ledger.entries()
    assert [e.record.run_label for e in entries] == ["first", "baseline-sdpa"]
    assert entries[1].record.digest == done.record.digest
    assert ledger_files(ledger) == sorted(f"records/{hex_of(e.record)}.json" for e in entries)


def _hold_write_lock(url, locked, release):
    conn = sqlite3.connect(url, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    locked.set()
    release.wait(120)
    conn.execute("ROLLBACK")


def test_a_writer_that_cannot_get_the_lock_in_time_writes_nothing(record_in, ledger, raw_log):
    record_in(full_draft(raw_log, run_label="first"), into=ledger)
    ctx = multiprocessing.get_context("fork")
    locked, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_write_lock, args=(ledger.index.url, locked, release))
    holder.start()
    try:
        assert locked.wait(60)
        before = ledger_files(ledger)
        with Ledger(ledger.root) as other:
            other.index.lock_timeout = 0.2
            with pytest.raises(
                InputError, match="the index stayed locked by other writers for 0.2 s; nothing was stored"
            ):
                record_in(full_draft(raw_log), into=other)
        assert ledger_files(ledger) == before
    finally:
        release.set()
        holder.join(60)
    assert record_in(full_draft(raw_log), into=ledger).stored.id


def _recorder(root, url, worker, n, registry, cwd, results):
    """One process recording like the CLI does: a fresh ledger (connection) per record."""
    from stackcheck.catalog import load_catalog
    from stackcheck.results import record

    catalog = load_catalog(str(registry))
    for i in range(n):
        with Ledger(root, url) as ledger:
            record(
                full_draft(run_label=f"p{worker}-{i}"),
                snapshot=snapshot_path("h100-single"),
                ledger=ledger,
                catalog=catalog,
                cwd=cwd,
            )
    results.put(worker)


@pytest.mark.slow
def test_several_processes_recording_at_once_all_succeed_in_one_linear_chain(
    any_ledger, registry_file, tmp_path
):
    workers, per_worker = 6, 8
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=_recorder,
            args=(any_ledger.root, any_ledger.index.url, w, per_worker, registry_file, tmp_path, results),
        )
        for w in range(workers)
    ]
    for p in procs:  # started together on a ledger whose index does not exist yet
        p.start()
    assert sorted(results.get(timeout=240) for _ in procs) == list(range(workers))
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    entries = any_ledger.entries()
    assert len(entries) == workers * per_worker == len(ledger_files(any_ledger))
    assert invalid(any_ledger) == {}
    prevs = [e.record.prev for e in entries]
    assert len(set(prevs)) == len(prevs) and prevs.count("") == 1  # one chain, no fork


# ----- 5. what a backend cannot store is refused before anything is written --------------------
@pytest.mark.parametrize(
    ("field", "value", "refused", "message"),
    [
        (
            "topic",
            "inference/\x00qwen",
            "draft: topic: must be one line without control characters, got 'inference/\\x00qwen'",
            "topic: control character U+0000 (NUL) at position 10; the index stores printable text only",
        ),
        (
            "topic",
            "t" * 1_000_000,
            "draft: topic: at most 256 characters, got 1000000",
            "topic: 1000000 bytes, the index stores at most 512",
        ),
        (
            "run_label",
            "base\x1bline",
            "draft: run_label: must be one line without control characters, got 'base\\x1bline'",
            "run_label: control character U+001B at position 4; the index stores printable text only",
        ),
        (
            "run_label",
            "base\ud800line",
            "draft: run_label: expected letters, digits, '.', '_' or '-' (no spaces), got 'base\\ud800line'",
            "run_label: not valid Unicode text (a lone surrogate at position 4)",
        ),
    ],
)
def test_unstorable_values_are_refused_before_anything_is_written(
    record_in, any_ledger, field, value, refused, message
):
    # the draft is refused first by the identifier rule (stackcheck.identifiers) ...
    with pytest.raises(InputError) as err:
        record_in(full_draft(**{field: value}), into=any_ledger)
    assert str(err.value) == refused
    assert ledger_files(any_ledger) == [] and any_ledger.index.records() == []
    # ... and a record built past it (library use) by the ledger, identically on both backends
    good = record_in(full_draft(), into=any_ledger).record
    before = ledger_files(any_ledger)
    bad = msgspec.structs.replace(good, **{field: value}, prev="")  # refused before its digest is checked
    with pytest.raises(InputError) as err:
        any_ledger.store(bad)
    assert str(err.value) == message
    assert ledger_files(any_ledger) == before
    with pytest.raises(InputError, match=re.escape(message.split(" at ")[0].split(";")[0])):
        any_ledger.decide(value if field == "topic" else "t", value if field == "run_label" else "r", "x")


def test_an_unstorable_decision_is_refused_before_anything_is_written(record_in, any_ledger):
    a = record_in(full_draft(), into=any_ledger)
    for text, message in (
        ("ship\x00it", "text: control character U+0000 (NUL) at position 4"),
        ("x" * 20000, "text: 20000 bytes, the index stores at most 16384"),
    ):
        with pytest.raises(InputError, match=re.escape(message)):
            any_ledger.decide(a.record.topic, a.record.run_label, text)
    assert any_ledger.decide(a.record.topic, a.record.run_label, "ship it\nbecause: it is faster").text
    assert len(ledger_files(any_ledger)) == 2


def test_an_unstorable_record_on_disk_never_breaks_reindex(record_in, any_ledger):
    good = record_in(full_draft(), into=any_ledger)
    bad = msgspec.structs.replace(good.record, topic="inference/\x00qwen", prev="")
    bad.digest = content_digest(bad)
    bad_path = any_ledger.records_dir / f"{hex_of(bad)}.json"
    bad_path.write_bytes(msgspec.json.encode(bad))  # a hand-made file: record() would refuse it
    assert validate_file(bad_path).problems == [
        "topic: must be one line without control characters, got 'inference/\\x00qwen'"
    ]
    assert any_ledger.reindex() == {"records": 1, "events": 0, "skipped": 1}
    assert any_ledger.skipped == [
        f"{bad_path}: cannot be indexed: topic: control character U+0000 (NUL) at position 10; "
        "the index stores printable text only"
    ]
    assert [e.record.digest for e in any_ledger.entries()] == [good.record.digest]


def test_unstorable_input_is_one_line_and_exit_2_from_the_cli(results_cli, tmp_path):
    draft = tmp_path / "d.json"
    draft.write_text(json.dumps(full_draft(topic="inference/\u0000qwen")))
    code, out, err = results_cli(
        "record", str(draft), "--snapshot", str(snapshot_path("h100-single")), ledger_dir=tmp_path / "l"
    )
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: {draft}: topic: must be one line without control characters, "
        "got 'inference/\\x00qwen'\n"
    )
    assert not (tmp_path / "l" / "records").exists()


# ----- 6. the index is only opened in the ledger directory, and checked before a write ---------
@pytest.mark.parametrize("name", ["ledger.sqlite", "ledger.sqlite-wal"])
def test_a_symlinked_index_is_refused_and_nothing_is_created_outside(results_cli, tmp_path, name):
    root = tmp_path / "l"
    root.mkdir()
    outside = tmp_path / "outside" / "elsewhere.sqlite"
    (root / name).symlink_to(outside)  # dangling
    draft = tmp_path / "d.json"
    draft.write_text(json.dumps(full_draft()))
    code, _, err = results_cli(
        "record", str(draft), "--snapshot", str(snapshot_path("h100-single")), ledger_dir=root
    )
    assert code == 2
    assert err == (
        f"stackcheck: error: {root / name}: is a symbolic link; the index is opened only as a regular file "
        "in the ledger directory\n"
    )
    assert not outside.parent.exists() and not (root / "records").exists()


def test_a_symlinked_records_directory_is_refused(record_in, ledger, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ledger.root.mkdir(parents=True)
    ledger.records_dir.symlink_to(elsewhere)
    with pytest.raises(InputError, match="records: is a symbolic link; ledger files are written only inside"):
        record_in(full_draft(), into=ledger)
    assert list(elsewhere.iterdir()) == []


def test_a_corrupt_index_refuses_before_the_record_is_written(results_cli, tmp_path):
    root = tmp_path / "l"
    root.mkdir()
    (root / "ledger.sqlite").write_bytes(b"this is not a database" * 100)
    draft = tmp_path / "d.json"
    draft.write_text(json.dumps(full_draft()))
    code, out, err = results_cli(
        "record", str(draft), "--snapshot", str(snapshot_path("h100-single")), ledger_dir=root
    )
    assert (code, out) == (2, "")
    assert err.startswith(
        f"stackcheck: error: {root / 'ledger.sqlite'}: not a usable SQLite index (file is not a database)"
    )
    assert len(err.splitlines()) == 1 and not (root / "records").exists()


def test_an_index_that_fails_after_the_file_is_written_leaves_nothing_behind(record_in, ledger):
    record_in(full_draft(run_label="first"), into=ledger)
    before = ledger_files(ledger)
    ledger.index.query(
        "CREATE TRIGGER refuse BEFORE INSERT ON records BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
    )
    with pytest.raises(InputError, match="not a usable SQLite index \\(disk says no\\)"):
        record_in(full_draft(), into=ledger)
    assert ledger_files(ledger) == before and invalid(ledger) == {}


def test_a_commit_that_fails_leaves_nothing_behind(record_in, ledger, monkeypatch):
    from stackcheck.results.index import Index

    record_in(full_draft(run_label="first"), into=ledger)
    before = ledger_files(ledger)

    def disk_full(self, conn):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Index, "_commit", disk_full)
    with pytest.raises(InputError, match=re.escape("not a usable SQLite index (database or disk is full)")):
        record_in(full_draft(), into=ledger)
    with pytest.raises(InputError, match=re.escape("not a usable SQLite index (database or disk is full)")):
        ledger.decide("inference/qwen2.5-0.5b-latency", "first", "keep")
    monkeypatch.undo()
    assert ledger_files(ledger) == before and invalid(ledger) == {}


# ----- 7. leftovers of crashed writes are reported and cleaned ----------------------------------
def test_stale_temp_files_are_reported_by_validate_and_removed_by_reindex(record_in, ledger, results_cli):
    record_in(full_draft(), into=ledger)
    ledger.events_dir.mkdir()
    stale = [ledger.records_dir / ".abc.json.x1.tmp", ledger.events_dir / ".def.json.x2.tmp"]
    young = ledger.records_dir / ".ghi.json.x3.tmp"  # a write in progress
    for path in (*stale, young):
        path.write_bytes(b'{"topic": "half')
    two_hours_ago = time.time() - 7200
    for path in stale:
        os.utime(path, (two_hours_ago, two_hours_ago))
    found = invalid(ledger)
    assert found == {
        str(p): [
            "stale temp file of an interrupted write (older than 60 min); "
            "`stackcheck results reindex` removes it"
        ]
        for p in stale
    }
    code, out, _ = results_cli("validate", ledger_dir=ledger.root)
    assert code == 1 and f"{stale[0]}: invalid (temp)" in out
    code, _, err = results_cli("reindex", ledger_dir=ledger.root)
    assert code == 0 and err.splitlines() == [f"stackcheck: removed stale temp file {p}" for p in stale]
    assert not any(p.exists() for p in stale) and young.exists()
    assert results_cli("validate", ledger_dir=ledger.root)[0] == 0


# ----- the PostgreSQL tests run in CI ------------------------------------------------------------
def test_postgresql_tests_fail_in_ci_without_a_server_and_skip_elsewhere(monkeypatch):
    from tests.results.conftest import postgres_dsn

    monkeypatch.delenv("STACKCHECK_TEST_POSTGRES_DSN", raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true but STACKCHECK_TEST_POSTGRES_DSN is not set"):
        postgres_dsn()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="STACKCHECK_TEST_POSTGRES_DSN is not set"):
        postgres_dsn()
    monkeypatch.setenv("STACKCHECK_TEST_POSTGRES_DSN", "postgresql://x@127.0.0.1:1/y")
    assert postgres_dsn() == "postgresql://x@127.0.0.1:1/y"
