"""``--snapshot FILE`` takes only a stackcheck snapshot: any other JSON object (an empty one,
a model's config.json, an accept or preflight report, a profile registry, a result record …)
is one line on stderr naming the file and what it looks like instead, exit 2, for every
command that reads a snapshot (they all load it through ``environment.load_snapshot``)."""

from __future__ import annotations

import json
import subprocess

import msgspec
import pytest

from stackcheck.environment import load_snapshot
from stackcheck.errors import InputError
from stackcheck.models.finding import CheckResult, Report
from tests.factories import SNAPSHOTS, make_snapshot
from tests.results.conftest import full_draft

LAPTOP = SNAPSHOTS / "cpu-laptop.json"
MAKE_ONE = "(make one with `stackcheck snapshot -o snapshot.json`)"


def _report(kind: str) -> bytes:
    ok = CheckResult(id="PY001", title="Python version", verdict="ok")
    return msgspec.json.encode(Report(kind=kind, profile="BASE-CPU", checks=[ok]))


def _record() -> bytes:
    snap = json.loads(LAPTOP.read_bytes())
    return json.dumps(
        {
            "schema_version": "1.0",
            "topic": "t",
            "run_label": "r",
            "created_at": "x",
            "snapshot": snap,
            "snapshot_digest": "sha256:0",
        }
    ).encode()


# content → what the one line says the file is
NOT_SNAPSHOTS = {
    "empty-object": (b"{}", "an empty JSON object, not a snapshot"),
    "model-config": (
        json.dumps(
            {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64}
        ).encode(),
        "a model config (config.json), not a snapshot",
    ),
    "accept-report": (_report("accept"), "a stackcheck accept report, not a snapshot"),
    "preflight-report": (_report("preflight"), "a stackcheck preflight report, not a snapshot"),
    "doctor-report": (_report("doctor"), "a stackcheck doctor report, not a snapshot"),
    "registry": (
        json.dumps({"schema_version": "1.0", "profiles": [{"id": "P"}]}).encode(),
        "a stackcheck profile registry, not a snapshot",
    ),
    "record": (_record(), 'a stackcheck result record (its environment is under "snapshot"), not a snapshot'),
    "kernelspec": (
        json.dumps({"argv": ["python", "-m", "ipykernel"], "display_name": "P"}).encode(),
        "a Jupyter kernelspec (kernel.json), not a snapshot",
    ),
    "notebook": (
        json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {}}).encode(),
        "a Jupyter notebook, not a snapshot",
    ),
    "other-object": (
        json.dumps({"name": "x", "version": "1"}).encode(),
        (
            "a JSON object without a snapshot's schema_version, tool, python and packages "
            "(its keys: name, version), not a snapshot"
        ),
    ),
    "half-snapshot": (
        json.dumps({"schema_version": "1.0", "python": {"version": "3.12.3"}}).encode(),
        "a JSON object without a snapshot's tool and packages, not a snapshot",
    ),
}


@pytest.mark.parametrize("case", sorted(NOT_SNAPSHOTS))
def test_load_snapshot_names_what_the_file_is(tmp_path, case):
    content, what = NOT_SNAPSHOTS[case]
    path = tmp_path / "given.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as err:
        load_snapshot(str(path))
    assert str(err.value) == f"{path}: this is {what} {MAKE_ONE}"


def test_newer_schema_major_is_refused_by_name(tmp_path):
    data = json.loads(LAPTOP.read_bytes())
    data["schema_version"] = "2.0"
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        load_snapshot(str(path))
    assert str(err.value) == (
        f"{path}: schema_version: snapshot schema 2.0 is newer than this stackcheck "
        "reads (1.x); upgrade stackcheck"
    )


def test_real_snapshots_still_load(tmp_path):
    for path in sorted(SNAPSHOTS.glob("*.json")):
        assert load_snapshot(str(path)).schema_version == "1.0"
    made = tmp_path / "made.json"
    made.write_bytes(msgspec.json.encode(make_snapshot()))
    assert load_snapshot(str(made)).python.version == "3.12.3"


@pytest.fixture
def main(capsys):
    from stackcheck.cli import main as entry

    def call(*args):
        capsys.readouterr()
        with pytest.raises(SystemExit) as stop:
            entry(list(args))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, stop.value.code, out, err)

    return call


def _commands(tmp_path, snap):
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps(full_draft(profile="BASE-CPU")))
    text = tmp_path / "err.txt"
    text.write_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    return {
        "preflight": ["preflight", "-p", "BASE-CPU", "--snapshot", snap],
        "doctor": ["doctor", "--snapshot", snap],
        "record": ["results", "record", str(draft), "--snapshot", snap, "--ledger-dir", str(tmp_path / "l")],
        "triage": ["triage", str(text), "--snapshot", snap],
        "snapshot": ["snapshot", "--snapshot", snap],
        "deps": ["deps", "conflicts", "--snapshot", snap],
    }


@pytest.mark.parametrize("command", ["preflight", "doctor", "record", "triage", "snapshot", "deps"])
@pytest.mark.parametrize("case", ["empty-object", "accept-report", "model-config"])
def test_every_command_refuses_what_is_not_a_snapshot(tmp_path, main, command, case):
    path = tmp_path / "e.json"
    path.write_bytes(NOT_SNAPSHOTS[case][0])
    done = main(*_commands(tmp_path, str(path))[command])
    assert done.returncode == 2, done
    assert done.stdout == ""
    assert done.stderr == f"stackcheck: error: {path}: this is {NOT_SNAPSHOTS[case][1]} {MAKE_ONE}\n"
    assert not (tmp_path / "l" / "records").exists()  # nothing recorded from a non-snapshot
