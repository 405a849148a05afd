"""The ledger: write-once files, tamper evidence, corrupt files, decisions, assets, reindex;
every test runs over the SQLite index and the PostgreSQL index."""

from __future__ import annotations

import json

import msgspec
import pytest

from stackcheck.errors import InputError, Refused
from stackcheck.render.results import assets_markdown as markdown
from stackcheck.results.assets import asset_rows
from stackcheck.results.validation import validate_file
from tests.results.conftest import full_draft


def test_a_record_is_written_once_and_never_replaced(record_in, any_ledger):
    done = record_in(full_draft(), into=any_ledger)
    with pytest.raises(Refused, match="already in the ledger"):
        any_ledger.store(done.record)
    assert len(list(any_ledger.records_dir.glob("*.json"))) == 1
    assert [e.stored() for e in any_ledger.entries()] == [done.stored]


def test_a_record_whose_digest_does_not_match_is_not_stored(record_in, any_ledger):
    done = record_in(full_draft(), into=any_ledger)
    forged = msgspec.structs.replace(done.record, run_label="forged")
    with pytest.raises(Refused, match="digest does not match"):
        any_ledger.store(forged)


def test_an_edited_record_is_reported_as_tampered(record_in, any_ledger):
    done = record_in(full_draft(), into=any_ledger)
    path = done.stored.path
    data = json.loads(open(path).read())
    data["metrics"]["latency_p50_ms"]["value"] = 30.0  # a better number, after the fact
    open(path, "w").write(json.dumps(data))
    report = validate_file(path)
    assert not report.valid and report.problems[0].startswith("tampered: content hashes to")
    assert any_ledger.entries() == []  # skipped by listings
    assert any("tampered" in s for s in any_ledger.skipped)
    with pytest.raises(Refused, match="tampered"):
        any_ledger.get(done.stored.id)


def test_a_corrupt_record_is_reported_and_skipped_never_fatal(record_in, any_ledger):
    good = record_in(full_draft(), into=any_ledger)
    bad = record_in(full_draft(run_label="other"), into=any_ledger)
    open(bad.stored.path, "wb").write(b"\x00\xffnot json at all")
    assert [e.stored().id for e in any_ledger.entries()] == [good.stored.id]
    reports = {r.path: r for r in map(validate_file, any_ledger.files())}
    assert reports[bad.stored.path].unreadable and "malformed JSON" in reports[bad.stored.path].problems[0]
    assert reports[good.stored.path].valid
    with pytest.raises(InputError):
        any_ledger.get(bad.stored.id)
    assert any_ledger.reindex() == {"records": 1, "events": 0, "skipped": 1}


def test_get_by_prefix(record_in, any_ledger):
    done = record_in(full_draft(), into=any_ledger)
    assert any_ledger.get(done.stored.id[:6])[0].digest == done.record.digest
    with pytest.raises(InputError, match="not in the ledger"):
        any_ledger.get("ffff0000")
    with pytest.raises(InputError, match="expected at least 4 hex"):
        any_ledger.get("xyz")


def test_decisions_are_append_only_and_the_newest_is_current(record_in, any_ledger):
    a = record_in(full_draft(), into=any_ledger)
    record_in(
        full_draft(run_label="flash-attn", **{"backend.args.attn_implementation": "flash_attention_2"}),
        into=any_ledger,
    )
    with pytest.raises(Refused, match="no record with topic"):
        any_ledger.decide(a.record.topic, "never-ran", "ship it")
    first = any_ledger.decide(a.record.topic, "baseline-sdpa", "keep sdpa for now")
    second = any_ledger.decide(a.record.topic, "flash-attn", "ship flash-attn: 18% lower p50")
    assert any_ledger.current_decision(a.record.topic).digest == second.digest
    assert [e.digest for e in any_ledger.decisions(a.record.topic, "baseline-sdpa")] == [first.digest]
    rows = {r.run_label: r for r in asset_rows(any_ledger)}
    assert rows["flash-attn"].decision == "ship flash-attn: 18% lower p50"
    assert rows["baseline-sdpa"].decision == ""
    table = markdown(list(rows.values()))
    assert table.splitlines()[0] == "| RUN_LABEL | topic | result path | evidence level | current decision |"
    assert "| flash-attn | inference/qwen2.5-0.5b-latency | `" in table


def test_reindex_rebuilds_levels_flags_and_decisions_from_the_files(record_in, any_ledger, raw_log):
    a = record_in(full_draft(raw_log), into=any_ledger)
    any_ledger.promote(a.record, "measured")
    any_ledger.decide(a.record.topic, a.record.run_label, "baseline")
    record_in(
        full_draft(raw_log, run_label="slow", **{"metrics.latency_p50_ms.value": 80.0}),
        snapshot="vllm-011-h100",
        into=any_ledger,
    )
    before = [(e.stored(), len(e.flags)) for e in any_ledger.entries()]
    assert before[0][0].evidence == "measured" and before[0][1] == 1  # the slow rerun flagged it
    with any_ledger.index.transaction() as tx:
        tx.clear()
    assert any_ledger.entries() == []
    # 2 events (promotion, decision): the flag is derived from the two records, never a file of its own
    assert any_ledger.reindex() == {"records": 2, "events": 2, "skipped": 0}
    assert [(e.stored(), len(e.flags)) for e in any_ledger.entries()] == before
    assert any_ledger.current_decision(a.record.topic).text == "baseline"


def test_temp_files_of_unfinished_writes_are_never_listed(record_in, any_ledger):
    done = record_in(full_draft(), into=any_ledger)
    (any_ledger.records_dir / f".{done.stored.id}.json.abc.tmp").write_bytes(b'{"topic": "half')
    assert len(list(any_ledger.files())) == 1
    assert any_ledger.reindex()["skipped"] == 0


def test_a_copied_record_validates_and_a_renamed_ledger_file_does_not(record_in, ledger, tmp_path):
    done = record_in(full_draft(), into=ledger)
    copy = tmp_path / "shared-with-a-colleague.json"
    copy.write_bytes(open(done.stored.path, "rb").read())
    assert validate_file(copy).valid
    other = record_in(full_draft(run_label="other"), into=ledger)
    swapped = ledger.records_dir / (other.record.digest.partition(":")[2] + ".json")
    swapped.write_bytes(open(done.stored.path, "rb").read())  # another record's content under this name
    assert "file name does not match" in validate_file(swapped).problems[0]
