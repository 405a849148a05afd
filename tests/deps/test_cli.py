"""`stackcheck deps` and `stackcheck doctor` as a user runs them: output, JSON, exit codes."""

from __future__ import annotations

import json
import subprocess

import msgspec
import pytest
from click.testing import CliRunner

from stackcheck.cli import cli
from stackcheck.models.snapshot import Snapshot
from tests.factories import SNAPSHOTS, dist, make_snapshot

ROS = str(SNAPSHOTS / "ros-polluted.json")


@pytest.fixture
def broken(tmp_path):
    snap = make_snapshot(
        dist("app", "1.0", "lib>=2", "util[fast]", requested=True),
        dist("lib", "1.5", "util"),
        dist("util", "1.0", "speedup; extra == 'fast'"),
        dist("tool", "0.1", "util", requested=True),
    )
    path = tmp_path / "snap.json"
    path.write_bytes(msgspec.json.encode(snap))
    return str(path)


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_conflicts_text_and_exit_code(broken):
    r = run("deps", "conflicts", "--snapshot", broken)
    assert r.exit_code == 1
    assert r.output.splitlines() == [
        "util 1.0 (extra [fast]) requires speedup, which is not installed.  (required by app)",
        "app 1.0 has requirement lib>=2, but you have lib 1.5.",
    ]
    assert run("deps", "conflicts", "--snapshot", broken, "--no-extras").output.splitlines() == [
        "app 1.0 has requirement lib>=2, but you have lib 1.5."
    ]


def test_conflicts_json(broken):
    r = run("deps", "conflicts", "--snapshot", broken, "--json")
    doc = json.loads(r.output)
    assert doc["distributions"] == 4
    assert [(c["package"], c["state"], c["via_extra"], c["required_by"]) for c in doc["conflicts"]] == [
        ("util", "missing", "fast", ["app"]),
        ("app", "mismatch", None, []),
    ]


def test_clean_environment_conflicts_exit_zero():
    r = run("deps", "conflicts", "--snapshot", str(SNAPSHOTS / "cpu-laptop.json"))
    assert r.exit_code == 0 and r.output.startswith("No broken requirements found")


def test_why(broken):
    r = run("deps", "why", "util", "--snapshot", broken)
    assert r.exit_code == 0
    assert r.output.splitlines() == [
        "util 1.0",
        "  app 1.0 -> util 1.0",
        "  tool 0.1 -> util 1.0",
        "  app 1.0 -> lib 1.5 -> util 1.0",
        "required directly by:",
        "  app 1.0: util[fast]",
        "  lib 1.5: util",
        "  tool 0.1: util",
    ]
    doc = json.loads(run("deps", "why", "lib", "--snapshot", broken, "--json").output)
    assert doc["paths"] == [["app", "lib"]] and doc["requested"] is False


def test_why_unknown_package_is_a_usage_error(broken):
    r = run("deps", "why", "nope", "--snapshot", broken)
    # an InputError: stackcheck's main() prints it as one line and exits 2
    assert type(r.exception).__name__ == "InputError" and r.output == ""
    assert str(r.exception) == "nope: not installed in /env/bin/python"


def test_tree(broken):
    r = run("deps", "tree", "--snapshot", broken)
    assert r.exit_code == 0
    assert r.output.splitlines() == [
        "app 1.0",
        "  - lib [required: >=2, installed: 1.5 CONFLICT]",
        "    - util [required: any, installed: 1.0]",
        "      - speedup [required: any, installed: - MISSING] (extra fast)",
        "  - util [required: [fast] any, installed: 1.0] (see above)",
        "tool 0.1",
        "  - util [required: any, installed: 1.0] (see above)",
    ]
    depth = run("deps", "tree", "app", "--depth", "1", "--snapshot", broken).output.splitlines()
    assert depth == [
        "app 1.0",
        "  - lib [required: >=2, installed: 1.5 CONFLICT]",
        "  - util [required: [fast] any, installed: 1.0] (see above)",
    ]
    doc = json.loads(run("deps", "tree", "tool", "--snapshot", broken, "--json").output)
    assert doc["tree"][0]["requires"][0]["name"] == "util"


@pytest.fixture
def main(capsys):
    """The real entry point in-process: exit code, stdout, stderr."""
    from stackcheck.cli import main as entry

    def call(*args):
        with pytest.raises(SystemExit) as stop:
            entry(list(args))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, stop.value.code, out, err)

    return call


def test_doctor_json_is_the_only_thing_on_stdout(main):
    done = main("doctor", "--snapshot", ROS, "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["kind"] == "doctor" and report["verdict"] == "blocked"
    iso = [c for c in report["checks"] if c["id"] == "ISO001"][0]
    assert iso["observed"] and iso["expected"] and iso["fix"]


def test_doctor_strict_counts_warnings(tmp_path, main):
    snap = load_and_keep_warnings_only(tmp_path)
    assert main("doctor", "--snapshot", snap).returncode == 0
    assert main("doctor", "--snapshot", snap, "--strict").returncode == 1


def load_and_keep_warnings_only(tmp_path) -> str:
    """The ROS snapshot without its blocking faults: PYTHONPATH and the ROS copy removed."""
    snap = msgspec.json.decode(open(ROS, "rb").read(), type=Snapshot)
    snap.python.pythonpath = []
    snap.python.sys_path = [p for p in snap.python.sys_path if "/opt/ros/" not in p]
    snap.packages.distributions = [d for d in snap.packages.distributions if "/opt/ros/" not in d.location]
    for d in snap.packages.distributions:
        d.shadowed = False
    path = tmp_path / "warn.json"
    path.write_bytes(msgspec.json.encode(snap))
    return str(path)


@pytest.mark.parametrize(
    "content", [b"", b'{"python": ', b"\x00\xff garbage", b'{"packages": {"distributions": 3}}']
)
@pytest.mark.parametrize("command", [["doctor"], ["deps", "conflicts"], ["deps", "tree"]])
def test_bad_snapshot_is_one_line_and_exit_2(tmp_path, content, command, main):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    done = main(*command, "--snapshot", str(bad))
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1 and str(bad) in done.stderr
