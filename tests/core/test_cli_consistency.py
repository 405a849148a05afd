"""What a new user trips over in the command line (issue 11, items 7 and 12): --skip with an
unknown ID, --json with --markdown, '-' for stdin wherever a file is read, and the profile
listing's header. Through the real entry point, in process."""

from __future__ import annotations

import io
import json
import sys

import pytest

from tests.factories import DATA, SNAPSHOTS

LAPTOP = str(SNAPSHOTS / "cpu-laptop.json")


# ---------------------------------------------------------------- item 7: --skip
@pytest.mark.parametrize(
    ("skip", "message"),
    [
        ("NOPE", "--skip: 'NOPE' is not a check ID or prefix; `stackcheck explain --list` lists them"),
        ("GPUU", "--skip: 'GPUU' is not a check ID or prefix; did you mean GPU, GPU004, GPU003?"),
        ("GPU01", "--skip: 'GPU01' is not a check ID or prefix; did you mean GPU001, GPU, GPU004?"),
        ("CUDA,KB999", "--skip: 'KB999' is not a check ID or prefix; did you mean KB319, KB309, KB269?"),
    ],
)
def test_an_unknown_skip_is_a_one_line_error(cli_main, skip, message):
    code, out, err = cli_main("preflight", "-p", "BASE-CPU", "--snapshot", LAPTOP, "--skip", skip)
    assert (code, out, err) == (2, "", f"stackcheck: error: {message}\n")


def test_known_ids_and_prefixes_are_accepted_in_any_case(cli_main):
    code, out, err = cli_main(
        "doctor", "--snapshot", LAPTOP, "--skip", "gpu,Cuda", "--skip", "iso001", "--json"
    )
    assert code == 0, err
    skipped = {c["id"] for c in json.loads(out)["checks"] if c["reason"] == "skipped by --skip"}
    assert skipped >= {"ISO001", "CUDA002", "CUDA003", "GPU004"} and "ISO002" not in skipped


# ---------------------------------------------------------------- item 12: --json with --markdown
@pytest.mark.parametrize(
    "argv",
    [
        ("preflight", "-p", "BASE-CPU", "--snapshot", LAPTOP),
        ("doctor", "--snapshot", LAPTOP),
        ("explain", "PKG001"),
    ],
)
def test_json_and_markdown_are_mutually_exclusive(cli_main, argv):
    code, out, err = cli_main(*argv, "--json", "--markdown")
    assert (code, out, err) == (
        2,
        "",
        "stackcheck: error: --json and --markdown cannot be combined: choose one output\n",
    )


# ---------------------------------------------------------------- item 12: '-' reads stdin
def test_memory_config_reads_stdin(cli_main):
    config = (DATA / "configs" / "Qwen2.5-0.5B.json").read_bytes()
    code, out, err = cli_main("memory", "--config", "-", "--json", stdin=config)
    assert code == 0, err
    from_file = cli_main("memory", "--config", str(DATA / "configs" / "Qwen2.5-0.5B.json"), "--json")[1]
    as_stdin, as_file = json.loads(out), json.loads(from_file)
    assert as_stdin["model"].pop("source") == "<stdin>"
    as_file["model"].pop("source")
    assert as_stdin == as_file


def test_stdin_errors_name_stdin(cli_main):
    code, out, err = cli_main("memory", "--config", "-", stdin=b"INFO: not json\n")
    assert (code, out) == (2, "")
    assert err.startswith("stackcheck: error: <stdin>: ")


def test_registry_and_result_files_read_stdin_too(cli_main, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # results opens the ledger of the working directory
    from stackcheck.catalog import load_catalog
    from stackcheck.catalog.export import export_registry
    from tests.results.conftest import full_draft

    registry = json.dumps(export_registry(load_catalog(None), ["BASE-CPU"])).encode()
    assert cli_main("profiles", "validate", "-", stdin=registry) == (0, "<stdin>: valid\n", "")
    code, out, err = cli_main("preflight", "--registry", "-", "--list-profiles", stdin=registry)
    assert (code, out.splitlines()[0]) == (0, "profiles from <stdin>:")
    assert cli_main("results", "validate", "-", stdin=json.dumps(full_draft()).encode()) == (
        0,
        "-: ok (draft)\n",
        "",
    )


def test_load_json_reads_dash_as_stdin(monkeypatch):
    from typing import Any

    from stackcheck.fileio import load_json

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"a": 1}')))
    assert load_json("-", Any, "thing") == {"a": 1}


# ---------------------------------------------------------------- item 12: the profile listing
def test_list_profiles_has_a_header_row(cli_main):
    code, out, err = cli_main("preflight", "--list-profiles")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "profiles from built-in:"
    assert lines[1].split() == ["ID", "CATEGORY", "SCOPE", "TITLE"]
    assert lines[1].index("CATEGORY") == lines[2].index("single-gpu")  # columns line up
    code, listed, _ = cli_main("profiles", "list")
    assert listed.splitlines()[1].split() == ["ID", "CATEGORY", "SCOPE", "TITLE"]
    assert listed.splitlines()[1:] == lines[1:]  # one table, two commands
