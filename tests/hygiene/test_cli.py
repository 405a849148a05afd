"""`stackcheck hygiene` on the command line: exit codes, JSON, masking, bad input."""

from __future__ import annotations

import json


def test_secrets_are_masked_in_every_output(planted_repo, cli, secrets):
    text = cli("hygiene", str(planted_repo), "-v")
    as_json = cli("hygiene", str(planted_repo), "--json")
    assert text.returncode == 1 and as_json.returncode == 1
    for out in (text.stdout + text.stderr, as_json.stdout + as_json.stderr):
        for value in secrets.values():
            assert value not in out
    assert f"{secrets['hf'][:4]}...({len(secrets['hf'])} chars)" in text.stdout
    doc = json.loads(as_json.stdout)  # only JSON on stdout
    assert doc["kind"] == "hygiene" and doc["verdict"] == "blocked"
    masked = {c["evidence"]["masked"] for c in doc["checks"] if c["id"] in ("HYG001", "HYG005")}
    assert f"{secrets['notebook'][:4]}...({len(secrets['notebook'])} chars)" in masked


def test_warnings_only_exit_0_and_strict_exit_1(tmp_path, cli):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "w.safetensors").write_bytes(b"\0" * 3000)
    subprocess.run(["git", "-C", str(tmp_path), "add", "w.safetensors"], check=True)
    assert cli("hygiene", str(tmp_path), "--max-weight-size", "2KiB").returncode == 0
    assert cli("hygiene", str(tmp_path), "--max-weight-size", "2KiB", "--strict").returncode == 1
    assert cli("hygiene", str(tmp_path)).returncode == 0  # 3000 B is under the 10MiB default
    ok = json.loads(cli("hygiene", str(tmp_path), "--json").stdout)
    assert ok["verdict"] == "ok"


def test_bad_input_is_one_line_and_exit_2(planted_repo, tmp_path, cli):
    (planted_repo / ".stackcheck-ignore").write_text("*.pyc\nHYG002:\n")
    r = cli("hygiene", str(planted_repo))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and ".stackcheck-ignore: line 2" in r.stderr
    r = cli("hygiene", str(tmp_path / "nowhere"))
    assert r.returncode == 2 and "no such" in r.stderr
    r = cli("hygiene", str(tmp_path), "--max-weight-size", "lots")
    assert r.returncode == 2 and "--max-weight-size" in r.stderr
    (tmp_path / "ig").write_bytes(b"\xff\xfe\x00garbage")
    r = cli("hygiene", str(planted_repo), "--ignore-file", str(tmp_path / "ig"))
    assert r.returncode == 2 and "not UTF-8" in r.stderr and "Traceback" not in r.stderr
