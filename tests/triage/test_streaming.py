"""A large log is streamed: bounded memory, the failure at its end still found."""

from __future__ import annotations

import io
import tracemalloc

from stackcheck.triage import triage_stream
from stackcheck.triage.diagnose import loaded_signatures

from .conftest import TRIAGE_DATA

NOISE = (
    b"2023-10-04T12:34:56.1234567Z   Downloading packaging-23.1-py3-none-any.whl (48 kB)\n"
    b"\x1b[32mcollecting\x1b[0m step 17/42: compiling extension module tables.utilsextension ...\n"
    b"WARNING: the script f2py is installed in '/home/runner/.local/bin' which is not on PATH.\n"
)


class GeneratedLog(io.RawIOBase):
    """``size`` bytes of CI noise, then ``tail``: produced on demand, never held whole."""

    noise = NOISE

    def __init__(self, size: int, tail: bytes) -> None:
        self.remaining, self.tail, self.pos = size, tail, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.remaining > 0:
            noise = self.noise
            chunk = (noise * (len(buffer) // len(noise) + 1))[: min(len(buffer), self.remaining)]
            self.remaining -= len(chunk)
        else:
            chunk, self.tail = self.tail[: len(buffer)], self.tail[len(buffer) :]
        buffer[: len(chunk)] = chunk
        return len(chunk)


def triaged_with_peak(log: GeneratedLog, source: str):
    """The diagnosis of ``log`` and the peak of memory allocated while it streamed by."""
    stream = io.BufferedReader(log, buffer_size=1 << 16)
    loaded_signatures()  # compiled before, not counted
    tracemalloc.start()
    try:
        d = triage_stream(stream, source=source)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert d.matches and d.matches[0].rule_id == "KB102"
    return d, peak


def test_large_log_streams_with_bounded_memory():
    tail = (TRIAGE_DATA / "oom-fragmentation.txt").read_bytes() + NOISE * 50
    d, peak = triaged_with_peak(GeneratedLog(16 * 2**20, tail), "generated.log")
    assert d.lines_read > 150_000
    assert d.matches[0].line > 150_000  # found at the end, reported with its real line number
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.1f} MiB for a 16 MiB log"


class LongLines(GeneratedLog):
    noise = b"y" * 10_000 + b"\n"  # cut at 4096 characters; far fewer than a block of them per read


def test_a_log_of_long_lines_streams_with_bounded_memory():
    tail = (TRIAGE_DATA / "oom-fragmentation.txt").read_bytes()
    d, peak = triaged_with_peak(LongLines(16 * 2**20, tail), "long.log")
    assert d.lines_read > 1000
    assert peak < 9 * 2**20, f"peak {peak / 2**20:.1f} MiB for a log of 10 kB lines"  # 10.6 uncut
