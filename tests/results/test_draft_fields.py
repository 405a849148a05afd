"""What a new user trips over with results (issue 11, items 11 and 12): every missing draft
field reported at once, ``workload`` (with its kind) required instead of a silent default,
``-`` for stdin, and ``show`` / ``validate`` saying what they do not know."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from stackcheck.results.contract import Draft, missing_fields, required_fields
from tests.results.conftest import full_draft
from tests.results.test_cli import snap, write

NEEDS = "a result draft needs topic, run_label, model.id, backend.name, workload.kind, profile"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "results.md"


@pytest.fixture
def sc(cli_main, tmp_path, registry_file, monkeypatch):
    """sc("record", FILE, ...) → (exit code, stdout, stderr), with a throwaway ledger."""
    monkeypatch.chdir(tmp_path)
    extra = ["--ledger-dir", str(tmp_path / "ledger")]
    return lambda *args: cli_main(
        "results", *args, *extra, *(["--registry", str(registry_file)] if args[0] == "record" else [])
    )


def test_required_fields_come_from_the_contract():
    required = ["topic", "run_label", "model.id", "backend.name", "workload.kind", "profile"]
    assert required_fields(Draft) == required
    assert missing_fields({"model": {}, "workload": {"seed": 1}}, Draft) == required
    assert missing_fields(full_draft(), Draft) == []


def test_a_draft_without_workload_is_refused_not_read_as_inference(sc, tmp_path):
    draft = full_draft()
    del draft["workload"]
    code, out, err = sc("record", write(tmp_path, "d.json", draft), *snap())
    assert (code, out) == (2, "")
    assert (
        err == f"stackcheck: error: {tmp_path / 'd.json'}: missing required field workload.kind ({NEEDS})\n"
    )


def test_every_missing_field_is_reported_at_once(sc, tmp_path):
    draft = full_draft()
    del draft["topic"], draft["model"]["id"], draft["workload"]["kind"]
    code, out, err = sc("record", write(tmp_path, "d.json", draft), *snap())
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: {tmp_path / 'd.json'}: missing required fields topic, model.id, "
        f"workload.kind ({NEEDS})\n"
    )
    from stackcheck.results.validation import validate_file

    report = validate_file(tmp_path / "d.json")
    assert report.problems == [f"missing required fields topic, model.id, workload.kind ({NEEDS})"]


def test_the_docs_list_the_required_fields():
    text = DOCS.read_text()
    section = text[text.index("### Required fields") :]
    section = section[: section.index("\n#", 1)] if "\n#" in section[1:] else section
    listed = re.findall(r"^- `([a-z_.]+)`", section, re.M)
    assert listed == required_fields(Draft)


def test_record_reads_the_draft_from_stdin(sc, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(full_draft()).encode())))
    code, out, err = sc("record", "-", *snap(), "--json")
    assert code == 0, err
    assert json.loads(out)["evidence"] == "smoke"


def test_show_omits_what_was_not_recorded(sc, tmp_path):
    draft = full_draft()
    draft["workload"] = {"kind": "inference", "samples": 200}
    code, out, err = sc("record", write(tmp_path, "d.json", draft), *snap(), "--json")
    assert code == 0, err
    code, out, err = sc("show", json.loads(out)["id"])
    assert code == 0, err
    (line,) = [line for line in out.splitlines() if line.startswith("workload")]
    assert line == "workload   inference, samples 200 (not recorded: concurrency, tokens, seed)"
    assert "None" not in out


def test_validate_names_an_unreadable_file_without_an_unknown_kind(sc, tmp_path):
    path = tmp_path / "notes.json"
    path.write_text("INFO: the run went fine\n")
    code, out, err = sc("validate", str(path))
    assert code == 2
    assert out.splitlines() == [
        f"{path}: unreadable",
        "  not JSON: starts with 'INFO: the run…', expected a result record or draft",
    ]
