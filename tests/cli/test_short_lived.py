"""A bounded command run as the stackcheck program (``stackcheck.cli.short_lived``): the
collector runs in batches of ``GC_BATCH`` (never off), and the process ends without the
interpreter's teardown, its atexit handlers run, its output flushed and its exit code kept.
Other commands, and callers of ``main(argv)``, are left as they were.

Every run but the last two tests' is a real process: only there is main() the program itself."""

from __future__ import annotations

import gc
import os
import subprocess

import pytest

from stackcheck import cli
from tests.cli.test_startup import _comparable, _env, clicks

# a __del__ of an object in __main__'s globals runs only in the interpreter's teardown; an atexit
# handler runs either way: it reports the collector's settings as the command left them
PROBE = (
    "import atexit, gc, sys\n"
    "class Teardown:\n"
    "    def __del__(self):\n"
    "        sys.stderr.write('teardown ran\\n')\n"
    "witness = Teardown()\n"
    "atexit.register(lambda: sys.stderr.write(f'gc {gc.isenabled()} {gc.get_threshold()[0]}\\n'))\n"
    "sys.argv = ['stackcheck', *sys.argv[1:]]\n"
    "from stackcheck.cli import main\n"
    "main()\n"
)


PYTHON = clicks()[0]  # the console script's interpreter, as the reference runs (a report names it)


def probed(args, cwd, extra=None) -> subprocess.CompletedProcess:
    argv = [PYTHON, "-c", PROBE, *args]
    return subprocess.run(argv, env=_env(None, extra), capture_output=True, timeout=120, cwd=cwd)


def same(out: bytes) -> bytes:
    """``_comparable`` without the snapshot's clock reading (``launch.wall_clock_ns``) either."""
    import re

    return re.sub(rb'"wall_clock_ns": \d+', b'"wall_clock_ns": 0', _comparable(out))


@pytest.mark.parametrize(
    "args",
    [
        ["preflight", "-p", "TRAIN-CPU"],
        ["preflight", "--profile=BASE-CPU", "--json"],
        ["doctor"],
        ["doctor", "--json"],
        ["snapshot", "--json"],
        ["triage", "--no-env", "--json", "ERROR_LOG"],  # through click, marked by the command
    ],
)
def test_a_bounded_command_collects_in_batches_and_skips_the_teardown(tmp_path, args):
    log = tmp_path / "error.log"
    log.write_text("Traceback (most recent call last):\nRuntimeError: CUDA error: out of memory\n")
    args = [str(log) if a == "ERROR_LOG" else a for a in args]
    done = probed(args, tmp_path)
    reference = subprocess.run(clicks(*args), env=_env(None), capture_output=True, cwd=tmp_path, timeout=120)
    # the atexit handler ran, the collector was on with the batch threshold, no teardown ran
    assert done.stderr == f"gc True {cli.GC_BATCH}\n".encode()
    assert done.returncode == reference.returncode  # blocked / ok as through click
    assert same(done.stdout) == same(reference.stdout) != b""  # flushed, whole


@pytest.mark.parametrize(
    "args, code",
    [
        (["deps", "conflicts"], None),  # answered without click, not marked short-lived
        (["preflight", "-p", "TRAIN-CPU", "-v"], None),  # through click
        (["--version"], 0),
    ],
)
def test_other_commands_keep_the_collector_and_the_teardown(tmp_path, args, code):
    done = probed(args, tmp_path)
    lines = done.stderr.decode().splitlines()
    assert f"gc True {gc.get_threshold()[0]}" in lines and lines[-1] == "teardown ran"
    if code is not None:
        assert done.returncode == code
    else:
        assert (
            done.returncode == subprocess.run(clicks(*args), env=_env(None), capture_output=True).returncode
        )


@pytest.mark.parametrize("profile", ["bad/id", "NO-SUCH-PROFILE"])
def test_an_error_in_a_bounded_command_is_its_one_line_and_exit_2(tmp_path, profile):
    done = probed(["preflight", "-p", profile], tmp_path)
    message, tail = done.stderr.decode().splitlines()[0], done.stderr.decode().splitlines()[1:]
    assert done.returncode == 2 and message.startswith("stackcheck: error: ")
    assert tail == [f"gc True {cli.GC_BATCH}", "teardown ran"]  # marked, then left through sys.exit


def test_a_reader_that_went_away_is_no_error(tmp_path):
    read, write = os.pipe()
    os.close(read)  # gone before anything is written: writing the report meets EPIPE
    try:
        argv = [PYTHON, "-c", PROBE, "preflight", "-p", "TRAIN-CPU"]
        done = subprocess.run(
            argv, env=_env(None), stdout=write, stderr=subprocess.PIPE, timeout=120, cwd=tmp_path
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, b"")  # as before: main() leaves at once, silently


def test_short_lived_is_nothing_for_a_caller_of_main_argv(monkeypatch):
    before = gc.get_threshold()
    monkeypatch.setattr(cli, "STANDALONE", False)
    monkeypatch.setattr(cli, "SHORT_LIVED", False)
    cli.short_lived()
    assert (cli.SHORT_LIVED, gc.get_threshold(), gc.isenabled()) == (False, before, True)
    with pytest.raises(SystemExit) as left:
        cli.leave(3)
    assert left.value.code == 3


def test_main_argv_never_marks_the_process(monkeypatch, capsys):
    monkeypatch.setattr(cli, "SHORT_LIVED", False)
    before = gc.get_threshold()
    with pytest.raises(SystemExit) as left:
        cli.main(["--version"])
    assert left.value.code == 0 and capsys.readouterr().out.startswith("stackcheck, version ")
    assert (cli.STANDALONE, cli.SHORT_LIVED, gc.get_threshold()) == (False, False, before)


class _Stream:
    def __init__(self, error=None, closed=False):
        self.error, self.closed, self.flushed = error, closed, 0

    def flush(self):
        self.flushed += 1
        if self.error is not None:
            raise self.error


@pytest.mark.parametrize(
    "stdout, stderr, code",
    [
        (_Stream(), _Stream(), 3),  # the command's own code
        (_Stream(BrokenPipeError()), _Stream(), 0),  # a reader that went away: no error
        (_Stream(OSError(28, "No space left on device")), _Stream(), 120),  # as the interpreter's exit
        (_Stream(closed=True), _Stream(), 3),  # a closed stream is not flushed
    ],
)
def test_leave_runs_the_atexit_handlers_flushes_and_exits_at_once(monkeypatch, stdout, stderr, code):
    ran, left = [], []
    monkeypatch.setattr(cli, "SHORT_LIVED", True)
    monkeypatch.setattr("atexit._run_exitfuncs", lambda: ran.append(True))
    monkeypatch.setattr(os, "_exit", left.append)
    monkeypatch.setattr("sys.stdout", stdout)
    monkeypatch.setattr("sys.stderr", stderr)
    cli.leave(3)
    assert (ran, left) == ([True], [code])
    assert (stdout.flushed, stderr.flushed) == (0 if stdout.closed else 1, 1)
