"""Reading an error text or a whole CI log line by line with bounded memory.

A 100 MB log must not be read into memory, a single 100 MB line must not either, and the
decorations CI systems add (ANSI colours, GitHub Actions timestamps, ``\\r`` progress bars)
must not hide the error text from the signatures.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial
from typing import BinaryIO

from stackcheck.errors import InputError

MAX_LINE_CHARS = (
    4096  # longer lines are cut: no error message needs more, a minified blob must not cost memory
)
_PROBE_BYTES = 8192  # how much of the start is inspected to tell text from binary

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Z0-9]|\x1b[=>]")
_GHA_TIMESTAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_line(raw: str) -> str:
    """One display line as a person would read it: no colour codes, no CI timestamp, and of
    a ``\\r``-overwritten progress line only the last visible state."""
    line = raw.rstrip("\r\n")
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "\r" in line:
        parts = [p for p in line.split("\r") if p.strip()]
        line = parts[-1] if parts else ""
    if line[:1].isdigit() or line[:1] == "\ufeff":
        line = _GHA_TIMESTAMP.sub("", line, count=1)
    if not line.isprintable() and _CONTROL.search(line):  # a printable line has none (fast test)
        line = _CONTROL.sub("", line)
    return line


def _mostly_undecodable(raw: bytes) -> bool:
    """More than a third of a sizeable line is not UTF-8: random bytes, not a log in some
    other encoding (a Latin-1 log still decodes mostly, its ASCII being ASCII)."""
    if len(raw) < 64:
        return False
    text = raw.decode("utf-8", errors="replace")
    return text.count("\ufffd") * 3 > len(text)


def iter_lines(stream: BinaryIO, source: str) -> Iterator[str]:
    """Cleaned lines of ``stream``; raises InputError for empty or binary input (NUL bytes or
    mostly non-UTF-8 lines in the first few KiB: an archive, an image, a model file — not a log)."""
    seen = 0
    while True:
        raw = stream.readline(MAX_LINE_CHARS)
        if not raw:
            if seen == 0:
                raise InputError(f"{source}: empty input, expected an error text, traceback or log")
            return
        if b"\x00" in raw or _mostly_undecodable(raw):
            raise InputError(f"{source}: binary data, expected an error text, traceback or log")
        seen += len(raw)
        if len(raw) >= MAX_LINE_CHARS and not raw.endswith(b"\n"):
            _skip_rest(stream)
        yield clean_line(raw.decode("utf-8", errors="replace"))
        if seen >= _PROBE_BYTES:
            break
    # past the probe: the same per line, with nothing left to count
    for raw in iter(partial(stream.readline, MAX_LINE_CHARS), b""):
        if len(raw) >= MAX_LINE_CHARS and not raw.endswith(b"\n"):
            _skip_rest(stream)
        yield clean_line(raw.decode("utf-8", errors="replace"))


def _skip_rest(stream: BinaryIO) -> None:
    """Skip the rest of an overlong line without holding it."""
    while True:
        rest = stream.readline(MAX_LINE_CHARS)
        if not rest or rest.endswith(b"\n"):
            return
