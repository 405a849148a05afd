"""Progress for work that can take more than a moment: one line on stderr, rewritten in place.

Only when stderr is a terminal and the command prints for people (callers pass
``enabled=not as_json``); nothing before ``delay`` seconds, so quick work never flashes a
line; at most one update per ``interval``; the line is cleared when the work ends, so the
output that follows starts on a clean line. Bytes as they are read (:func:`reading`, e.g. a
large ``triage`` log) or the elapsed time of one long step (:func:`ticking`, e.g. the child
process of ``snapshot --deep``).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import BinaryIO, TextIO

__all__ = ["Progress", "reading", "ticking"]

_CLEAR = "\x1b[K"  # erase to the end of the line


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or not a file
        return False


def _size(n: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


class Progress:
    """``with Progress("triage: reading ci.log", total=size) as p: p.update(done)``."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        delay: float = 1.0,
        interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.label, self.total = label, total
        self.stream = stream if stream is not None else sys.stderr
        self.on = enabled and _is_terminal(self.stream)
        self.delay, self.interval, self.clock = delay, interval, clock
        self.started = clock()
        self.done = 0
        self._shown_at: float | None = None

    def update(self, done: int) -> None:
        """``done`` units (bytes) of ``total`` so far."""
        self.done = done
        if not self.on:
            return
        now = self.clock()
        if now - self.started < self.delay or (
            self._shown_at is not None and now - self._shown_at < self.interval
        ):
            return
        text = _size(done)
        if self.total:
            text += f" / {_size(self.total)} ({min(100, done * 100 // self.total)}%)"
        self.write(f"{self.label}: {text}", now)

    def write(self, text: str, now: float | None = None) -> None:
        self.stream.write(f"\r{text}{_CLEAR}")
        self.stream.flush()
        self._shown_at = self.clock() if now is None else now

    def close(self) -> None:
        if self.on and self._shown_at is not None:
            self.stream.write(f"\r{_CLEAR}")
            self.stream.flush()
            self._shown_at = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Reading:
    """A binary stream whose reads report the bytes so far to a Progress (every ``step``
    bytes: a line-by-line reader must not pay a clock reading per line)."""

    def __init__(self, stream: BinaryIO, progress: Progress, step: int = 1 << 18):
        self._stream, self._progress, self._done, self._next, self._step = stream, progress, 0, 0, step

    def _count(self, data: bytes) -> bytes:
        self._done += len(data)
        if self._done >= self._next or not data:
            self._next = self._done + self._step
            self._progress.update(self._done)
        return data

    def readline(self, size: int = -1) -> bytes:
        return self._count(self._stream.readline(size))

    def read(self, size: int = -1) -> bytes:
        return self._count(self._stream.read(size))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def reading(stream: BinaryIO, progress: Progress) -> BinaryIO:
    """``stream`` as is when ``progress`` shows nothing (no cost), else counted as it is read."""
    return _Reading(stream, progress) if progress.on else stream  # type: ignore[return-value]


class _Ticker(Progress):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._stop = threading.Event()
        self._first = threading.Event()

    def run(self) -> None:
        while not self._stop.wait(self.interval):
            now = self.clock()
            if now - self.started >= self.delay:
                self.write(f"{self.label}… {int(now - self.started)} s", now)
                self._first.set()

    def wait_for_first_write(self, timeout: float) -> bool:
        return self._first.wait(timeout)


@contextmanager
def ticking(
    label: str,
    *,
    enabled: bool = True,
    stream: TextIO | None = None,
    delay: float = 1.0,
    interval: float = 0.5,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[_Ticker]:
    """The elapsed time of one long step, from a background thread (only on a terminal)."""
    ticker = _Ticker(label, enabled=enabled, stream=stream, delay=delay, interval=interval, clock=clock)
    thread = (
        threading.Thread(target=ticker.run, name="stackcheck-progress", daemon=True) if ticker.on else None
    )
    if thread is not None:
        thread.start()
    try:
        yield ticker
    finally:
        ticker._stop.set()
        if thread is not None:
            thread.join()
        ticker.close()
