"""Output that cannot be written (stdout on a full disk: ``/dev/full``) is one line on stderr and
exit 120, the interpreter's own code for output it could not flush — never a traceback, on the
start-up path (``--version``, a command answered without click) and through click alike."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from stackcheck import cli

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
LINE = b"stackcheck: error: cannot write the output: No space left on device\n"


def _run(args, cwd):
    code = "import sys; sys.argv = ['stackcheck', *sys.argv[1:]]; from stackcheck.cli import main; main()"
    with open("/dev/full", "wb") as full:
        return subprocess.run(
            [sys.executable, "-c", code, *args], stdout=full, stderr=subprocess.PIPE, cwd=cwd, timeout=120
        )


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],  # answered by the start-up path before any command runs
        ["preflight", "-p", "BASE-CPU"],  # answered without click
        ["profiles", "list"],  # through click
        ["triage", "--no-env", "ERROR_LOG"],
    ],
)
def test_a_full_disk_is_one_line_and_exit_120(tmp_path, args):
    log = tmp_path / "error.log"
    log.write_text("RuntimeError: CUDA error: out of memory\n")
    done = _run([str(log) if a == "ERROR_LOG" else a for a in args], tmp_path)
    assert (done.returncode, done.stderr) == (120, LINE)


def test_only_output_write_failures_are_taken(monkeypatch):
    assert cli._cannot_write(OSError(28, "No space left on device"))
    assert cli._cannot_write(OSError(28, "No space left on device", "/data/report.json"))  # a file we write
    assert cli._cannot_write(OSError(5, "Input/output error"))
    assert not cli._cannot_write(OSError(13, "Permission denied"))
    assert not cli._cannot_write(FileNotFoundError(2, "No such file or directory", "x.log"))

    def fails():
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli, "_main", lambda argv: fails())
    with pytest.raises(PermissionError):  # not an output failure: not swallowed
        cli.main(["--version"])


def test_a_caller_of_main_argv_gets_the_line_and_system_exit_120(monkeypatch, capsys):
    def full():
        raise OSError(28, "No space left on device")

    ended = []
    monkeypatch.setattr(os, "_exit", ended.append)  # what would end the caller's own process
    monkeypatch.setattr(cli, "_main", lambda argv: full())
    with pytest.raises(SystemExit) as left:
        cli.main(["--version"])
    assert (left.value.code, ended) == (120, [])
    assert capsys.readouterr().err == LINE.decode()


def test_a_file_that_cannot_be_written_for_a_full_disk_is_named(tmp_path, monkeypatch, capsys):
    from stackcheck import fileio

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "checks.md"
    with pytest.raises(OSError) as raised:  # atomic_write names its target, leaves nothing behind
        fileio.atomic_write(target, "text")
    assert raised.value.filename == str(target) and os.listdir(tmp_path) == []
    with pytest.raises(SystemExit) as left:  # through the CLI: one line naming the file, exit 120
        cli.main(["explain", "--markdown", "-o", str(target)])
    assert left.value.code == 120 and os.listdir(tmp_path) == []
    assert capsys.readouterr().err == f"stackcheck: error: cannot write {target}: No space left on device\n"


def test_the_line_is_redacted(monkeypatch, capsys):
    token = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"

    def full():
        raise OSError(28, "No space left on device", f"/runs/{token}/report.json")

    monkeypatch.setattr(os, "_exit", lambda code: None)
    monkeypatch.setattr(cli, "_main", lambda argv: full())
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    err = capsys.readouterr().err
    assert token not in err and err.startswith("stackcheck: error: cannot write /runs/")
