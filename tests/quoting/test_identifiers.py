"""One identifier rule wherever a name enters (profile IDs, kernel names, topics, run labels),
and hostile values refused at every entry point with one line naming the field, exit 2."""

from __future__ import annotations

import json
import re
import sys

import msgspec
import pytest

from stackcheck.catalog import load_catalog
from stackcheck.errors import InputError
from stackcheck.identifiers import NAME_CHARS, name_problem, printable, problem, require, shown, topic_problem
from tests.factories import SNAPSHOTS, run_cli
from tests.results.conftest import REGISTRY, full_draft, snapshot_path

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
HOSTILE_NAMES = [
    "r $(touch x)",
    "r `touch x`",
    "r;touch x",
    "it's",
    'a"b',
    "a b",
    "..",
    ".",
    "-rf",
    "_x",
    "a/b",
    "../x",
    "a\nb",
    "a\x1b[2Kb",
    "\r",
    "a\u202eb",
    "",
    "x" * 129,
    "a*",
    "~x",
    "a&&b",
    "a|b",
    "a>b",
    "a\\b",
    "é",
]
HOSTILE_TOPICS = [
    "",
    " ",
    "a//b",
    "/a",
    "a/",
    "../x",
    "a/../b",
    "a/.",
    "t/r $(touch x)",
    "a\nb",
    "a\x1b[2K",
    "x" * 257,
    "a/" + "b" * 129,
    "a b/c",
    "a/-rf",
]


def test_every_builtin_id_and_fixture_name_is_valid():
    catalog = load_catalog(None)
    ids = catalog.ids(include_bases=True)
    assert len(ids) >= 28 and all(name_problem(i) is None for i in ids)
    labels = [
        "baseline-sdpa",
        "rerun",
        "fa2-fp16",
        "8x",
        "w0-1",
        "flash-attn",
        "same-env",
        "python3",
        "labenv",
        "proj",
        "LAB-GPU",
        "INF-VLLM-011-CU128",
        "x" * 128,
    ]
    assert [n for n in labels if name_problem(n) is not None] == []
    assert topic_problem("inference/qwen2.5-0.5b-latency") is None and topic_problem("t") is None


@pytest.mark.parametrize("value", HOSTILE_NAMES)
def test_hostile_names_are_refused_with_a_one_line_reason(value):
    found = problem(value)
    assert found is not None and "\n" not in found and not CONTROL.search(found)
    with pytest.raises(InputError) as err:
        require(value, "--name")
    assert str(err.value) == f"--name: {found}"


def test_the_reasons_say_what_was_expected():
    assert problem("") == "must not be empty"
    assert problem("x" * 129) == "at most 128 characters, got 129"
    assert problem("..") == "must start with a letter or digit, got '..'"
    assert problem("-rf") == "must start with a letter or digit, got '-rf'"
    assert problem("r $(touch x)") == f"{NAME_CHARS}, got 'r $(touch x)'"
    assert problem("a\x1b[2Kb") == "must be one line without control characters, got 'a\\x1b[2Kb'"
    assert name_problem("bad id") == NAME_CHARS  # `profiles validate` names the ID itself
    assert (
        problem("a b", "topic")
        == "expected names of letters, digits, '.', '_' or '-' joined by '/', got 'a b'"
    )
    assert problem("a\nb", "text") == "must be one line without control characters, got 'a\\nb'"
    assert problem("ship sdpa; flash-attn gains <2%", "text") is None


@pytest.mark.parametrize("value", HOSTILE_TOPICS)
def test_hostile_topics_are_refused(value):
    assert problem(value, "topic") is not None


def test_printable_escapes_every_control_character_and_nothing_else():
    assert (
        printable("plain text, ünïcode ✓ and 'quotes' `ticks` $x")
        == "plain text, ünïcode ✓ and 'quotes' `ticks` $x"
    )
    assert (
        printable("a\nb\r\tc\x1b[2K\x00\x7f\x9b\u2028\u202e")
        == "a\\nb\\r\\tc\\x1b[2K\\x00\\x7f\\x9b\\u2028\\u202e"
    )


# ----- the entry points ----------------------------------------------------------------------


@pytest.fixture
def sc(capsys, monkeypatch, tmp_path):
    """sc(*argv) → (exit code, stdout, stderr) of the CLI in this process."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter-path"))

    return lambda *argv: run_cli(capsys, *argv)


def refused(sc, *argv, field: str):
    code, out, err = sc(*argv)
    assert code == 2 and out == "", (argv, code, out, err)
    (line,) = err.splitlines()
    assert (
        line.startswith(f"stackcheck: error: {field}: ")
        and not CONTROL.search(line)
        and "Traceback" not in err
    ), line
    return line


SNAP = str(SNAPSHOTS / "cpu-laptop.json")


@pytest.mark.parametrize("value", ["r $(touch x)", "..", "-rf", "a\x1b[2Kb", "a\nb", "x" * 129])
def test_profile_option_refuses_what_profiles_validate_refuses(sc, value, tmp_path):
    refused(sc, "preflight", "-p", value, "--snapshot", SNAP, field="--profile")
    refused(sc, "accept", "-p", value, "--out", str(tmp_path / "out"), field="--profile")
    refused(sc, "kernel", "check", "-p", value, field="--profile")
    assert not (tmp_path / "out").exists() and not (tmp_path / "x").exists()
    with pytest.raises(InputError, match="^profile ID: "):
        load_catalog(None).get(value)


@pytest.mark.parametrize("value", ["..", ".", "../../outside", "a/b", "-rf", "x\x1b[2K", "r $(touch x)"])
def test_kernel_names_never_leave_the_kernels_directory(sc, value, tmp_path):
    data = tmp_path / "data"
    refused(
        sc,
        "kernel",
        "register",
        "--name",
        value,
        "--python",
        sys.executable,
        "--data-dir",
        str(data),
        field="--name",
    )
    assert not data.exists() and not list(tmp_path.rglob("kernel.json"))
    refused(sc, "kernel", "check", "--", value, field="NAME")
    refused(sc, "doctor", "--kernel", value, field="--kernel")


def test_kernel_display_name_is_one_line(sc, tmp_path):
    refused(
        sc,
        "kernel",
        "register",
        "--name",
        "ok",
        "--display-name",
        "Py\n[forged]",
        "--python",
        sys.executable,
        "--data-dir",
        str(tmp_path / "data"),
        field="--display-name",
    )
    assert not (tmp_path / "data").exists()


@pytest.fixture
def registry_file(tmp_path):
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(REGISTRY))
    return path


def test_results_refuse_hostile_topics_labels_and_profiles(sc, tmp_path, registry_file):
    ledger = ["--ledger-dir", str(tmp_path / "ledger")]
    for topic, label, field in (
        ("t/r $(touch x)", "ok", "TOPIC"),
        ("t", "r $(touch x)", "RUN_LABEL"),
        ("../x", "ok", "TOPIC"),
        ("t", "a\x1b[2K", "RUN_LABEL"),
    ):
        refused(sc, "results", "decide", topic, label, "--decision", "ship", *ledger, field=field)
    refused(sc, "results", "decide", "t", "ok", "--decision", "ship\n  - forged", *ledger, field="--decision")
    refused(sc, "results", "list", "--topic", "a b", *ledger, field="--topic")
    refused(sc, "results", "assets", "--topic", "a\nb", *ledger, field="--topic")
    for field, value in (
        ("run_label", "r $(touch x)"),
        ("run_label", "r\n touch x"),
        ("topic", "t/`touch x`"),
        ("profile", "LAB-GPU;touch x"),
        ("run_label", ".."),
    ):
        draft = tmp_path / f"{field}.json"
        draft.write_text(json.dumps(full_draft(**{field: value})))
        line = refused(
            sc,
            "results",
            "record",
            str(draft),
            "--snapshot",
            str(snapshot_path("h100-single")),
            "--registry",
            str(registry_file),
            *ledger,
            field=f"{draft}: {field}",
        )
        assert shown(value) in line
    assert not (tmp_path / "ledger" / "records").exists() or not list(
        (tmp_path / "ledger" / "records").iterdir()
    )
    assert not (tmp_path / "x").exists()


def test_registry_ids_are_checked_when_loaded_and_validated(sc, tmp_path):
    registry = tmp_path / "registry.json"
    registry.write_text(
        json.dumps(
            {
                "include_builtin": False,
                "profiles": [
                    {"id": "GOOD"},
                    {"id": "r $(touch x)"},
                    {"id": "evil\n  GOOD.id: forged"},
                    {"id": ".."},
                ],
            }
        )
    )
    refused(
        sc,
        "preflight",
        "--registry",
        str(registry),
        "-p",
        "GOOD",
        "--snapshot",
        SNAP,
        field=f"{registry}: profiles[1].id",
    )
    refused(sc, "profiles", "list", "--registry", str(registry), field=f"{registry}: profiles[1].id")
    code, out, err = sc("profiles", "validate", str(registry))
    assert code == 1 and not CONTROL.search(out.replace("\n", ""))
    assert out.splitlines() == [
        f"{registry}: r $(touch x).id: {NAME_CHARS}",
        f"{registry}: evil\\n  GOOD.id: forged.id: must be one line without control characters, "
        "got 'evil\\n  GOOD.id: forged'",
        f"{registry}: ...id: must start with a letter or digit, got '..'",
    ]


def test_results_list_escapes_what_a_hand_written_record_holds(sc, tmp_path, registry_file):
    """A record written by hand (the ledger itself refuses to store or index such a label)
    never reaches the terminal raw: every listing prints one escaped line per fact."""
    from stackcheck.results.contract import Draft
    from stackcheck.results.identity import content_digest
    from stackcheck.results.ledger import Ledger
    from stackcheck.results.recording import complete
    from stackcheck.results.recording import preflight as profile_ref

    snap = __import__("stackcheck.environment", fromlist=["x"]).load_snapshot(
        str(snapshot_path("h100-single"))
    )
    catalog = load_catalog(str(registry_file))
    label = "r\x1b[2K\r\nabcdef  2026-01-01T00:00:00  delivery   ok     t  forged"
    draft = msgspec.convert(full_draft(notes="n\x1b]0;title\x07"), Draft)
    rec = complete(draft, snap, profile_ref("LAB-GPU", snap, catalog=catalog), cwd=tmp_path)
    with Ledger(tmp_path / "ledger") as ledger:
        stored, _, rec = ledger.store(rec)
        with pytest.raises(InputError, match="run_label: control character U[+]001B"):
            ledger.decide(rec.topic, label, "ship it")
    forged = msgspec.structs.replace(rec, run_label=label, prev="")
    forged.digest = content_digest(forged)
    path = tmp_path / "ledger" / "records" / f"{forged.digest.split(':')[1]}.json"
    path.write_bytes(msgspec.json.encode(forged))
    ledger_dir = ["--ledger-dir", str(tmp_path / "ledger")]
    code, out, err = sc("results", "list", *ledger_dir)
    assert code == 0 and not CONTROL.search((out + err).replace("\n", ""))
    (line,) = out.splitlines()
    assert line.endswith(f"inference/qwen2.5-0.5b-latency  {rec.run_label}")
    code, out, _ = sc("results", "show", stored.id, *ledger_dir)
    assert code == 0 and not CONTROL.search(out.replace("\n", ""))
    code, out, err = sc("results", "validate", *ledger_dir)
    assert code == 1 and not CONTROL.search(out.replace("\n", ""))
    assert f"  run_label: must be one line, got {shown(label)}" in out.splitlines()
