"""What `stackcheck accept` tells a user while and before it runs: a line per step on stderr
when stderr is a terminal (nothing otherwise, nothing with --json), and a --repo that does
not exist is one line and exit 2 before anything runs."""

from __future__ import annotations

import json
import os
import pty
import re
import shlex
import subprocess
import sys

import pytest

from tests.factories import drain_pty

STEP = re.compile(r"\[(\d)/7\] (ACC00\d) (.+): (ok|warning|blocked|skipped)(?: \((\d+\.\d) s\))?")
ORDER = ["ACC001", "ACC002", "ACC003", "ACC004", "ACC006", "ACC005", "ACC007"]


def _env():
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _stackcheck(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", *args], capture_output=True, text=True, env=_env(), timeout=600
    )


def _run_with_tty_stderr(args, cwd) -> tuple[int, str, str]:
    """Run stackcheck with stderr on a pseudo-terminal; (exit code, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "stackcheck", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=_env(),
    )
    os.close(slave)
    terminal = drain_pty(master)
    out = proc.stdout.read().decode()
    proc.wait(timeout=600)
    os.close(master)
    return proc.returncode, out, terminal.decode().replace("\r\n", "\n")


@pytest.mark.slow
def test_progress_per_step_on_a_terminal(bare_python, tmp_path):
    code, out, err = _run_with_tty_stderr(
        ["accept", "--python", bare_python, "--out", str(tmp_path / "o"), "--repo", str(tmp_path)],
        cwd=tmp_path,
    )
    assert code == 1 and "report: " in out
    lines = err.splitlines()
    assert lines[0] == f"accept: 7 steps in {bare_python} (each child process up to 300 s)"
    steps = [STEP.fullmatch(line) for line in lines[1:]]
    assert all(steps) and len(steps) == 7, lines
    assert [int(m.group(1)) for m in steps] == list(range(1, 8))
    assert [m.group(2) for m in steps] == ORDER
    verdicts = {m.group(2): m.group(4) for m in steps}
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert verdicts == {c["id"]: c["verdict"] for c in report["checks"]}


@pytest.mark.slow
def test_no_progress_when_stderr_is_not_a_terminal_or_with_json(bare_python, tmp_path):
    plain = _stackcheck(
        "accept", "--python", bare_python, "--out", str(tmp_path / "a"), "--repo", str(tmp_path)
    )
    assert plain.returncode == 1 and plain.stderr == ""
    code, out, err = _run_with_tty_stderr(
        ["accept", "--python", bare_python, "--out", str(tmp_path / "b"), "--repo", str(tmp_path), "--json"],
        cwd=tmp_path,
    )
    assert code == 1 and json.loads(out)["kind"] == "accept" and err == ""


@pytest.mark.slow
def test_train_cpu_without_packages_fixes_in_one_command_and_skips_the_gpu_step(bare_python, tmp_path):
    r = _stackcheck(
        "accept",
        "--python",
        bare_python,
        "-p",
        "TRAIN-CPU",
        "--out",
        str(tmp_path / "o"),
        "--repo",
        str(tmp_path),
        "--json",
    )
    steps = {c["id"]: c for c in json.loads(r.stdout)["checks"]}
    assert steps["ACC004"]["observed"] == "torch and safetensors are not installed"
    assert (
        steps["ACC004"]["fix"]
        == f"{shlex.quote(bare_python)} -m pip install 'torch<3,>=2.6' 'safetensors>=0.4.3'"
    )
    assert (steps["ACC003"]["verdict"], steps["ACC003"]["reason"]) == (
        "skipped",
        "torch is not installed (ACC002 reports it) and profile TRAIN-CPU needs no GPU",
    )


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_repo_that_is_not_a_directory_is_one_line(tmp_path, kind):
    repo = tmp_path / "nope"
    if kind == "file":
        repo.write_text("")
    r = _stackcheck("accept", "--repo", str(repo), "--out", str(tmp_path / "o"))
    assert (r.returncode, r.stdout) == (2, "")
    what = "no such directory" if kind == "missing" else "not a directory"
    assert (
        r.stderr
        == f"stackcheck: error: --repo {repo}: {what} (expected the repository for the hygiene step)\n"
    )
    assert not (tmp_path / "o").exists()
