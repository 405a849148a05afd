"""`stackcheck triage` end to end: JSON contract, human output, environment sources, exit codes
and one-line errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import SNAPSHOTS, TRIAGE_DATA

STACKCHECK = [sys.executable, "-m", "stackcheck", "triage"]


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*STACKCHECK, *args], input=stdin, capture_output=True, timeout=120)


def test_json_contract_best_match_first():
    p = run(
        str(TRIAGE_DATA / "oom-fragmentation.txt"),
        "--json",
        "--snapshot",
        str(SNAPSHOTS / "h100-single.json"),
    )
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert {"matches", "failure_region", "environment_source"} <= d.keys()
    best = d["matches"][0]
    assert {"rule_id", "category", "title", "confidence", "evidence", "fix"} <= best.keys()
    assert best["rule_id"] == "KB102" and best["category"] == "cuda-oom"
    assert "expandable_segments:True" in best["fix"]
    assert d["environment_source"] == f"snapshot {SNAPSHOTS / 'h100-single.json'}"
    assert "CUDA out of memory" in d["failure_region"]


def test_human_output_from_stdin():
    p = run("-", "--no-env", stdin=(TRIAGE_DATA / "nccl-watchdog-pg-guid.txt").read_bytes())
    assert p.returncode == 0
    out = p.stdout.decode()
    assert out.startswith("triage of <stdin>:") and "1. KB109" in out and "fix:" in out
    assert "Failure region (lines" in out


def test_no_match_says_so_and_shows_the_region():
    p = run(str(TRIAGE_DATA / "conda-packages-not-found.txt"), "--no-env")
    assert p.returncode == 0
    out = p.stdout.decode()
    assert "No known cause matched" in out and "PackagesNotFoundError" in out
    d = json.loads(run(str(TRIAGE_DATA / "conda-packages-not-found.txt"), "--no-env", "--json").stdout)
    assert d["matches"] == [] and d["failure_region_kind"] == "error"


def test_collect_env_block_in_the_input_wins_over_a_given_snapshot():
    p = run(
        str(TRIAGE_DATA / "driver-too-old-torch13-issue.txt"),
        "--json",
        "--snapshot",
        str(SNAPSHOTS / "h200-drv580-cu130.json"),
    )
    d = json.loads(p.stdout)
    assert d["environment_source"].startswith("collect_env block in the input")
    best = d["matches"][0]
    assert best["rule_id"] == "KB003" and best["environment"] == "agrees"
    assert any("410.48" in e for e in best["evidence"])


def test_from_collect_env_file_is_an_environment_source(tmp_path):
    env_file = tmp_path / "env.txt"
    lines = (TRIAGE_DATA / "driver-too-old-torch13-issue.txt").read_text().splitlines()
    env_file.write_text("\n".join(lines[lines.index("```") + 1 :]))
    p = run(str(TRIAGE_DATA / "libcudart-10-mmcv.txt"), "--json", "--from-collect-env", str(env_file))
    d = json.loads(p.stdout)
    assert d["environment_source"] == f"collect_env {env_file}"


def test_top_limits_the_matches():
    d = json.loads(run(str(TRIAGE_DATA / "libcudart-10-mmcv.txt"), "--no-env", "--json", "--top", "1").stdout)
    assert [m["rule_id"] for m in d["matches"]] == ["KB103"]


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["missing.log"], None, "missing.log: cannot read the error text"),
        (["-"], b"", "<stdin>: empty input"),
        (["-"], b"\n  \n\n", "only blank lines"),
        (["-"], b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary data"),
        ([str(TRIAGE_DATA / "oom-legacy-wording.txt"), "--snapshot", "nope.json"], None, "nope.json"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, stdin, message):
    p = run(*args, "--no-env" if "--snapshot" not in args else "--json", stdin=stdin)
    assert p.returncode == 2
    err = p.stderr.decode()
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    assert p.stdout == b""


def test_usage_errors_exit_2():
    p = run(
        str(TRIAGE_DATA / "oom-legacy-wording.txt"),
        "--no-env",
        "--snapshot",
        str(SNAPSHOTS / "h100-single.json"),
    )
    assert p.returncode == 2 and b"--no-env cannot be combined" in p.stderr
