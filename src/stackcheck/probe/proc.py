"""Bounded, sanitized child processes for probes.

Every subprocess a probe starts goes through :func:`run` (or :func:`start`): a hard timeout, no
stdin (or one write to it), and an environment without secrets or interpreter hooks
(PYTHONSTARTUP, PYTHONINSPECT …) that could change what the child does. PYTHONPATH is kept
on purpose: it is part of what we observe.
Bounded means: at most ``max_output`` bytes kept of each of stdout and stderr (the rest is
read and dropped, so the child never blocks on a full pipe), and on a timeout the child's
whole process group is killed, so grandchildren holding the pipes die with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable

import msgspec

from stackcheck.redaction import looks_secret

_DROP_EXACT = {"PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONBREAKPOINT", "PYTHONWARNINGS", "PYTHONDEVMODE"}


def sanitized_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """os.environ without secret-named variables (``looks_secret(name, strict=True)``) or
    interpreter hooks; ``extra`` is added as given."""
    env = {k: v for k, v in os.environ.items() if k not in _DROP_EXACT and not looks_secret(k, strict=True)}
    env["PYTHONIOENCODING"] = "utf-8"
    env["LC_ALL"] = env.get("LC_ALL", "C.UTF-8") or "C.UTF-8"
    if extra:
        env.update(extra)
    return env


MAX_OUTPUT_BYTES = 64 * 1024  # per stream: a version banner, a CSV of GPUs, a JSON line
LARGE_OUTPUT_BYTES = 64 * 1024 * 1024  # for listings (git ls-files) and the --python probe's JSON
_CHUNK = 65536
_POSIX = os.name == "posix"


class Completed(msgspec.Struct):  # not a dataclass: its making is ≈ 0.3 ms of a cold preflight
    returncode: int | None  # None on timeout or when the program could not start
    stdout: str
    stderr: str
    error: str | None = None  # "timeout after 5 s", "not found: nvcc" …
    truncated: bool = False  # stdout or stderr was longer than max_output and is cut there

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class _Capture(threading.Thread):
    """Reads one pipe to its end, keeping the first ``limit`` bytes."""

    def __init__(self, pipe, limit: int):
        super().__init__(daemon=True)
        self.pipe, self.limit = pipe, limit
        self.chunks: list[bytes] = []
        self.kept = 0
        self.dropped = 0
        self.start()

    def run(self) -> None:
        try:
            while chunk := self.pipe.read1(_CHUNK):
                room = self.limit - self.kept
                if room > 0:
                    self.chunks.append(chunk[:room])
                    self.kept += min(room, len(chunk))
                self.dropped += max(0, len(chunk) - max(room, 0))
        except (OSError, ValueError):  # the pipe was closed under us
            pass

    def text(self) -> str:
        data = b"".join(self.chunks).decode("utf-8", "replace")
        return data.replace("\r\n", "\n").replace("\r", "\n")  # what text=True gave


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the child's process group (it leads its own session, so its children are
    in it), then reap the child."""
    try:
        if _POSIX:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:  # the group is gone already
        pass
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        pass


def run(
    argv: list[str],
    timeout: float = 5.0,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    max_output: int = MAX_OUTPUT_BYTES,
    on_start: Callable[[], None] | None = None,
) -> Completed:
    """Run ``argv`` to completion or ``timeout``; see the module docstring for the bounds.
    ``on_start`` is called once the child runs, before it is waited for."""
    deadline = time.monotonic() + timeout
    child = _spawn(argv, subprocess.DEVNULL, env, cwd, max_output)
    if isinstance(child, Completed):
        return child
    if on_start is not None:
        on_start()
    return child.wait(deadline, timeout)


def start(
    argv: list[str],
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    max_output: int = MAX_OUTPUT_BYTES,
) -> Started | Completed:
    """Start ``argv`` now with a pipe for its stdin, for :meth:`Started.finish` to feed later
    (a child that gets ready while the caller waits on other work); the same bounds as
    :func:`run`, the timeout counted from ``finish``. A :class:`Completed` when it cannot start."""
    return _spawn(argv, subprocess.PIPE, env, cwd, max_output)


class Started:
    """A child process whose output is being read (at most ``max_output`` bytes kept)."""

    def __init__(self, proc: subprocess.Popen, max_output: int):
        self.proc = proc
        self.out, self.err = _Capture(proc.stdout, max_output), _Capture(proc.stderr, max_output)

    def finish(self, data: bytes, timeout: float) -> Completed:
        """Give the child ``data`` on its stdin (then end of file); wait for it as :func:`run` does."""
        deadline = time.monotonic() + timeout
        self.give(data)
        return self.wait(deadline, timeout)

    def give(self, data: bytes) -> None:
        """Write ``data`` to the child's stdin and close it (once; :meth:`wait` for its answer)."""
        try:
            if self.proc.stdin is not None and not self.proc.stdin.closed:
                self.proc.stdin.write(data)
                self.proc.stdin.close()
        except OSError:  # it has exited already: what it said tells why
            pass

    def cancel(self) -> None:
        """Kill the child (its process group) without giving it anything; nothing once it has
        been waited for (its pid may be another process's by then)."""
        if self.proc.returncode is None:
            _kill_group(self.proc)
        for pipe in (self.proc.stdin, self.out.pipe, self.err.pipe):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    def wait(self, deadline: float, timeout: float) -> Completed:
        proc, out, err = self.proc, self.out, self.err
        timed_out = False
        # The pipes close when the child exits (or later, when a grandchild holds them): a thread
        # join wakes at once, where Popen.wait(timeout) polls with sleeps of up to 50 ms.
        for capture in (out, err):
            capture.join(max(0.0, deadline - time.monotonic()))
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
        if timed_out or out.is_alive() or err.is_alive():
            _kill_group(proc)
            for capture in (out, err):
                capture.join(1.0)
        for capture in (out, err):
            if not capture.is_alive():  # a reader still blocked (a setsid'd grandchild) keeps its pipe
                capture.pipe.close()
        truncated = bool(out.dropped or err.dropped)
        if timed_out:
            return Completed(None, out.text(), err.text(), f"timeout after {timeout:g} s", truncated)
        return Completed(proc.returncode, out.text(), err.text(), None, truncated)


def _spawn(argv, stdin, env, cwd, max_output: int) -> Started | Completed:
    try:
        proc = subprocess.Popen(
            argv,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=sanitized_env() if env is None else env,
            cwd=cwd,
            start_new_session=_POSIX,
        )
    except FileNotFoundError:
        return Completed(None, "", "", f"not found: {argv[0]}")
    except OSError as exc:
        return Completed(None, "", "", f"cannot run {argv[0]}: {exc.strerror or exc}")
    return Started(proc, max_output)
