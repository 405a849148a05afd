"""Reading an error text or a whole CI log line by line with bounded memory.

A 100 MB log must not be read into memory, a single 100 MB line must not either, and the
decorations CI systems add (ANSI colours, GitHub Actions timestamps, ``\\r`` progress bars)
must not hide the error text from the signatures.

Past the first few KiB (read line by line, to tell text from binary), the input is read in
chunks of whole blocks of :data:`ALIGN_LINES` lines and cleaned a chunk at a time with a few
passes over bytes (:func:`clean_chunk`): the lines come out exactly as :func:`clean_line` makes
them, and the cleaned chunk's bytes let the caller scan a megabyte at once.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from stackcheck.errors import InputError

MAX_LINE_CHARS = (
    4096  # longer lines are cut: no error message needs more, a minified blob must not cost memory
)
_PROBE_BYTES = 8192  # how much of the start is inspected to tell text from binary
CHUNK_BYTES = 1 << 17  # read at once past the probe (a chunk stays in the CPU's caches)
ALIGN_LINES = 256  # a chunk holds whole blocks of this many lines (regions.BLOCK_LINES)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Z0-9]|\x1b[=>]")
# ASCII digits: a timestamp GitHub Actions writes (also what clean_chunk can find in bytes)
_GHA_TIMESTAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ", re.ASCII)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# the same three over bytes of UTF-8: none of them can match a line break or a non-ASCII byte
_ANSI_BYTES = re.compile(rb"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()][A-Z0-9]|[=>])")
_GHA_BYTES = re.compile(
    rb"\n(?:\xef\xbb\xbf)?[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?Z "
)
_GHA_FIRST = re.compile(_GHA_BYTES.pattern.removeprefix(rb"\n"))
# _CONTROL's characters, and \r: what is left of it after _PROGRESS_LINE stands before a newline
_DELETED_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, 0x0D])
_PROGRESS_LINE = re.compile(rb"\r[^\r\n][^\n]*")  # a \r inside a line, and the rest of that line
_MAX_HELD = ALIGN_LINES * (MAX_LINE_CHARS + 1)  # whole lines held past this are cut at once
_WINDOW = MAX_LINE_CHARS // 2  # a line longer than MAX_LINE_CHARS covers a whole aligned window


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


def clean_chunk(raw: bytes) -> tuple[list[str], bytes]:
    """``clean_line`` of every line of ``raw`` (whole lines, each ending with a newline, none
    longer than MAX_LINE_CHARS), and those lines as UTF-8, each ending with a newline.

    The same steps in the same order, each over the whole chunk: invalid UTF-8 is replaced
    first, as decoding line by line replaces it (a newline always ends an invalid sequence);
    over valid UTF-8 the ASCII-only patterns and deletions act on bytes as on characters. A
    line with a ``\\r`` before its end (a progress bar) is cleaned on its own by clean_line;
    every other ``\\r`` stands right before a newline, where rstrip removes it, and no pattern
    can match across it, so it is deleted last with the control characters."""
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raw = raw.decode("utf-8", errors="replace").encode("utf-8")
    progress = list(_PROGRESS_LINE.finditer(raw)) if b"\r" in raw else []
    text = raw
    if b"\x1b" in text:
        text = _ANSI_BYTES.sub(b"", text)
    if b"Z " in text:
        text = _GHA_BYTES.sub(b"\n", text)
        if first := _GHA_FIRST.match(text):
            text = text[first.end() :]
    text = text.translate(None, _DELETED_BYTES)
    lines = text.decode("utf-8").split("\n")
    lines.pop()
    if not progress:
        return lines, text
    line, counted = 0, 0
    for m in progress:
        start = raw.rfind(b"\n", counted, m.start()) + 1
        line += raw.count(b"\n", counted, start)
        counted = start
        lines[line] = clean_line(raw[start : m.end()].decode("utf-8"))
    return lines, "\n".join([*lines, ""]).encode("utf-8")


def _cut_long_lines(raw: bytes) -> bytes:
    """``raw`` (whole lines) with every line longer than MAX_LINE_CHARS cut there, as reading
    it with ``readline(MAX_LINE_CHARS)`` cuts it (the rest of the line is dropped)."""
    out: list[bytes] = []
    pos = 0
    for window in range(0, len(raw), _WINDOW):
        if window < pos or raw.find(b"\n", window, window + _WINDOW) != -1:
            continue
        start = raw.rfind(b"\n", 0, window) + 1
        end = raw.find(b"\n", window)
        if end - start > MAX_LINE_CHARS:
            out += (raw[pos : start + MAX_LINE_CHARS],)
            pos = end
    if not out:
        return raw
    out.append(raw[pos:])
    return b"".join(out)


def _mostly_undecodable(raw: bytes) -> bool:
    """More than a third of a sizeable line is not UTF-8: random bytes, not a log in some
    other encoding (a Latin-1 log still decodes mostly, its ASCII being ASCII)."""
    if len(raw) < 64:
        return False
    text = raw.decode("utf-8", errors="replace")
    return text.count("\ufffd") * 3 > len(text)


@dataclass
class Chunk:
    """Consecutive cleaned lines; ``text`` is them as UTF-8, each ending with a newline, where
    the chunk was read in bulk (None where it was read line by line)."""

    first: int  # line number of its first line
    lines: list[str]
    text: bytes | None = None


def iter_lines(stream: BinaryIO, source: str) -> Iterator[str]:
    """Cleaned lines of ``stream``; raises InputError for empty or binary input (NUL bytes or
    mostly non-UTF-8 lines in the first few KiB: an archive, an image, a model file — not a log)."""
    for chunk in iter_chunks(stream, source):
        yield from chunk.lines


def iter_chunks(stream: BinaryIO, source: str) -> Iterator[Chunk]:
    """The cleaned lines of ``stream`` (see :func:`iter_lines`) in chunks; every chunk but the
    last holds a multiple of ALIGN_LINES lines, so blocks of ALIGN_LINES lines never straddle two."""
    seen, first = 0, 1
    pending: list[str] = []
    while True:  # the start, line by line, up to a block boundary past the probe
        raw = stream.readline(MAX_LINE_CHARS)
        if not raw:
            if seen == 0:
                raise InputError(f"{source}: empty input, expected an error text, traceback or log")
            if pending:
                yield Chunk(first, pending)
            return
        if seen < _PROBE_BYTES and (b"\x00" in raw or _mostly_undecodable(raw)):
            raise InputError(f"{source}: binary data, expected an error text, traceback or log")
        seen += len(raw)
        pending.append(_line(stream, raw))
        if len(pending) == ALIGN_LINES:
            yield Chunk(first, pending)
            first, pending = first + ALIGN_LINES, []
            if seen >= _PROBE_BYTES:
                break
    yield from _bulk_chunks(stream, first)


def _bulk_chunks(stream: BinaryIO, first: int) -> Iterator[Chunk]:
    buf, skipping = b"", False
    while data := stream.read(CHUNK_BYTES):
        if skipping:  # the rest of an overlong line, up to its newline
            end = data.find(b"\n")
            data, skipping = (b"", True) if end == -1 else (data[end + 1 :], False)
        buf += data
        last = buf.rfind(b"\n") + 1
        if len(buf) - last > MAX_LINE_CHARS:  # an unfinished overlong line: keep only what is read of it
            buf, skipping = buf[: last + MAX_LINE_CHARS] + b"\n", True
        elif last > _MAX_HELD:  # few lines but long ones: cut them now, so memory stays bounded
            buf = _cut_long_lines(buf[:last]) + buf[last:]
        count = buf.count(b"\n")
        whole = count - count % ALIGN_LINES
        if not whole:
            continue
        end = len(buf)
        for _ in range(count - whole + 1):
            end = buf.rfind(b"\n", 0, end)
        lines, text = clean_chunk(_cut_long_lines(buf[: end + 1]))
        buf = buf[end + 1 :]
        yield Chunk(first, lines, text)
        first += whole
    if buf:  # the last lines, fewer than a block
        tail = io.BytesIO(buf)
        lines = [_line(tail, raw) for raw in iter(lambda: tail.readline(MAX_LINE_CHARS), b"")]
        yield Chunk(first, lines)


def _line(stream: BinaryIO, raw: bytes) -> str:
    """The cleaned line of what ``readline(MAX_LINE_CHARS)`` gave; the rest of an overlong line
    is skipped."""
    if len(raw) >= MAX_LINE_CHARS and not raw.endswith(b"\n"):
        _skip_rest(stream)
    return clean_line(raw.decode("utf-8", errors="replace"))


def _skip_rest(stream: BinaryIO) -> None:
    """Skip the rest of an overlong line without holding it."""
    while True:
        rest = stream.readline(MAX_LINE_CHARS)
        if not rest or rest.endswith(b"\n"):
            return
