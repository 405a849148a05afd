"""Colour, progress and shell completion (issue 11, item 13): colour only for people (a
terminal, or FORCE_COLOR), never in machine output; progress only on a terminal's stderr;
completion scripts from click."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

import pytest

from stackcheck.environment import load_snapshot
from stackcheck.judge import judge
from stackcheck.progress import Progress, reading, ticking
from stackcheck.render.text import report_text
from tests.factories import SNAPSHOTS, make_profile, run_cli

LAPTOP = str(SNAPSHOTS / "cpu-laptop.json")
RED, YELLOW, GREEN, DIM, RESET = "\x1b[31m", "\x1b[33m", "\x1b[32m", "\x1b[2m", "\x1b[0m"


def _report():
    profile = make_profile(requirements=["nonexistent-package>=1"], gpu={"min_count": 1})
    return judge(load_snapshot(LAPTOP), command="preflight", profile=profile)


def test_verdict_words_are_painted_only_when_asked():
    report = _report()
    plain = report_text(report, verbose=True)
    assert "\x1b[" not in plain
    painted = report_text(report, verbose=True, color=True)
    assert (
        painted.splitlines()[0]
        == f"preflight TEST-PROFILE: {RED}BLOCKED{RESET}  ({report.environment['python']})"
    )
    assert f"  {RED}BLOCKED{RESET} GPU001  GPU count" in painted.splitlines()
    assert any(line.startswith(f"  {GREEN}ok     {RESET} ") for line in painted.splitlines())
    assert any(line.startswith(f"  {DIM}skipped{RESET} ") for line in painted.splitlines())
    # nothing else changes: without the escapes it is the plain text
    for code in (RED, YELLOW, GREEN, DIM, RESET):
        painted = painted.replace(code, "")
    assert painted == plain


@pytest.fixture
def sc(capsys, monkeypatch):
    def run(*argv, env=None):
        for name in ("NO_COLOR", "FORCE_COLOR"):
            monkeypatch.delenv(name, raising=False)
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        return run_cli(capsys, *argv)

    return run


PREFLIGHT = ("preflight", "-p", "TRAIN-CUDA-MECHANISM", "--snapshot", LAPTOP)


@pytest.mark.parametrize(
    ("argv", "env", "painted"),
    [
        (PREFLIGHT, {}, False),  # stdout is not a terminal
        (PREFLIGHT, {"FORCE_COLOR": "1"}, True),
        (PREFLIGHT, {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        (PREFLIGHT, {"FORCE_COLOR": "1", "NO_COLOR": "0"}, False),  # any non-empty value
        (PREFLIGHT, {"FORCE_COLOR": "1", "NO_COLOR": ""}, True),
        (("--no-color", *PREFLIGHT), {"FORCE_COLOR": "1"}, False),
        ((*PREFLIGHT, "--json"), {"FORCE_COLOR": "1"}, False),
        ((*PREFLIGHT, "--markdown"), {"FORCE_COLOR": "1"}, False),
        (
            ("memory", "--config", str(SNAPSHOTS.parent / "configs" / "Qwen2.5-0.5B.json"), "--gpu", "H100"),
            {"FORCE_COLOR": "1"},
            True,
        ),
    ],
)
def test_colour_decision(sc, argv, env, painted):
    code, out, err = sc(*argv, env=env)
    assert code in (0, 1), err
    assert ("\x1b[" in out) is painted


def test_a_terminal_gets_colour_unless_no_color():
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}

    def on_a_terminal(*args, env):
        leader, follower = pty.openpty()
        done = subprocess.run(
            [sys.executable, "-m", "stackcheck", *args],
            stdout=follower,
            stderr=subprocess.PIPE,
            env={**base, **env},
            timeout=120,
        )
        os.close(follower)
        data = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        os.close(leader)
        return done.returncode, data.decode()

    code, out = on_a_terminal(*PREFLIGHT, env={})
    assert code == 1 and f"{RED}BLOCKED{RESET}" in out
    code, out = on_a_terminal(*PREFLIGHT, env={"NO_COLOR": "1"})
    assert code == 1 and "\x1b[" not in out and "BLOCKED" in out


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_writes_to_a_terminal_only_after_the_delay():
    term, clock = FakeTerminal(), Clock()
    with Progress("triage: reading ci.log", total=40 * 2**20, stream=term, clock=clock) as p:
        p.update(2**20)
        assert term.getvalue() == ""  # quick work shows nothing
        clock.now = 1.5
        p.update(12 * 2**20)
        assert term.getvalue() == "\rtriage: reading ci.log: 12.0 MiB / 40.0 MiB (30%)\x1b[K"
        clock.now = 1.55
        p.update(13 * 2**20)  # throttled
        assert term.getvalue().count("\r") == 1
    assert term.getvalue().endswith("\r\x1b[K")  # the line is cleared at the end


@pytest.mark.parametrize("stream", [io.StringIO(), FakeTerminal()])
def test_progress_is_silent_off_a_terminal_or_when_disabled(stream):
    clock = Clock()
    enabled = not isinstance(stream, FakeTerminal)  # the terminal case is disabled (--json)
    with Progress("x", total=10, stream=stream, clock=clock, enabled=enabled) as p:
        clock.now = 5.0
        p.update(5)
    assert stream.getvalue() == ""


def test_reading_counts_bytes_through_readline():
    term, clock = FakeTerminal(), Clock()
    clock.now = 10.0
    p = Progress("reading", total=None, stream=term, clock=clock)
    p.started = 0.0
    stream = reading(io.BytesIO(b"one\ntwo\nthree\n"), p)
    assert [stream.readline(4096) for _ in range(4)] == [b"one\n", b"two\n", b"three\n", b""]
    assert p.done == 14 and term.getvalue().startswith(
        "\rreading: 4 B"
    )  # first read, then every 256 KiB and at the end


def test_ticking_reports_elapsed_time_from_a_thread():
    term, calls = FakeTerminal(), iter([0.0])
    clock = lambda: next(calls, 3.0)  # noqa: E731  (started at 0, every later reading at 3 s)
    with ticking(
        "snapshot: importing torch in a child process", stream=term, clock=clock, delay=0.0, interval=0.01
    ) as t:
        assert t.wait_for_first_write(timeout=30)
    assert "\rsnapshot: importing torch in a child process… 3 s\x1b[K" in term.getvalue()
    assert term.getvalue().endswith("\r\x1b[K")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_clicks_script(sc, shell):
    code, out, err = sc("completion", shell)
    assert code == 0
    assert "_STACKCHECK_COMPLETE" in out and f"{shell}_complete" in out


def test_completion_completes_commands_and_options():
    env = {
        **os.environ,
        "_STACKCHECK_COMPLETE": "bash_complete",
        "COMP_WORDS": "stackcheck pre",
        "COMP_CWORD": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "stackcheck"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.stdout.split() == ["plain,preflight"]
    env.update(COMP_WORDS="stackcheck preflight --pro", COMP_CWORD="2")
    done = subprocess.run(
        [sys.executable, "-m", "stackcheck"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.stdout.split() == ["plain,--profile"]


@pytest.mark.parametrize("as_json", [False, True])
def test_triage_shows_progress_on_a_terminal_unless_json(sc, monkeypatch, tmp_path, as_json):
    import stackcheck.progress as progress

    term = FakeTerminal()

    class Immediate(progress.Progress):  # no delay, the terminal above
        def __init__(self, label, total=None, *, enabled=True, **kw):
            super().__init__(label, total, enabled=enabled, stream=term, delay=0.0, interval=0.0)

    monkeypatch.setattr(progress, "Progress", Immediate)
    log = tmp_path / "ci.log"
    log.write_text(
        "step 1\n" * 1000
        + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    code, out, err = sc("triage", str(log), "--no-env", *(["--json"] if as_json else []))
    assert code == 0, err
    shown = term.getvalue()
    if as_json:
        assert shown == ""
    else:
        size = log.stat().st_size
        assert shown.startswith(f"\rtriage: reading {log}: 7 B / {size / 1024:.1f} KiB (0%)\x1b[K")
        assert f"{size / 1024:.1f} KiB / {size / 1024:.1f} KiB (100%)" in shown and shown.endswith("\r\x1b[K")
