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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO, overload

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
_NEAR_LINES = 16  # TextLines walks at most this many lines from a known one
_WINDOW = MAX_LINE_CHARS // 2  # a line longer than MAX_LINE_CHARS covers a whole aligned window


def clean_line(raw: str) -> str:
    """One display line as a person would read it: no colour codes, no CI timestamp, and of
    a ``\\r``-overwritten progress line only the last visible state."""
    line = raw.rstrip("\r\n")
    if "\r" in line:
        data = line.encode("utf-8", "surrogatepass")
        line = _last_state(data, 0, len(data))
    elif "\x1b" in line:
        line = _ANSI.sub("", line)
    return _undecorated(line)


def _last_state(data: bytes, start: int, end: int) -> str:
    """Of the line ``data[start:end]`` (UTF-8 with a ``\\r``), the last part between ``\\r``s that
    is not blank once its colour codes are removed: the last state of a progress bar. A colour
    code never holds a ``\\r``, so removing them from each part is removing them from the line;
    the parts are found from the end and only those looked at are decoded."""
    while True:
        cut = data.rfind(b"\r", start, end)
        part = data[max(cut + 1, start) : end].decode("utf-8", "surrogatepass")
        if "\x1b" in part:
            part = _ANSI.sub("", part)
        if part.strip():
            return part
        if cut == -1:
            return ""
        end = cut


def _undecorated(line: str) -> str:
    """``line`` without a CI timestamp at its start and control characters (clean_line's last steps)."""
    if line[:1].isdigit() or line[:1] == "\ufeff":
        line = _GHA_TIMESTAMP.sub("", line, count=1)
    if not line.isprintable() and _CONTROL.search(line):  # a printable line has none (fast test)
        line = _CONTROL.sub("", line)
    return line


def clean_chunk(raw: bytes) -> bytes:
    """``clean_line`` of every line of ``raw`` (whole lines, each ending with a newline, none
    longer than MAX_LINE_CHARS), as UTF-8, each line ending with a newline.

    The same steps in the same order, each over the whole chunk: invalid UTF-8 is replaced
    first, as decoding line by line replaces it (a newline always ends an invalid sequence);
    over valid UTF-8 the ASCII-only patterns and deletions act on bytes as on characters. A
    line with a ``\\r`` before its end (a progress bar) is cleaned on its own by clean_line
    first (what it gives has no colour code, control byte or ``\\r`` left for the later steps
    to change, and where it starts with a timestamp, the chunk is cleaned line by line); every
    other ``\\r`` stands right before a newline, where rstrip removes it, and no pattern can
    match across it, so it is deleted last with the control characters."""
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raw = raw.decode("utf-8", errors="replace").encode("utf-8")
    if b"\r" in raw and (progress := _progress_lines_cleaned(raw)) is not None:
        raw = progress
    elif b"\r" in raw:
        lines = [clean_line(line) for line in raw.decode("utf-8").split("\n")[:-1]]
        return "".join(line + "\n" for line in lines).encode("utf-8")
    if b"\x1b" in raw:
        raw = _ANSI_BYTES.sub(b"", raw)
    if b"Z " in raw:
        raw = _GHA_BYTES.sub(b"\n", raw)
        if first := _GHA_FIRST.match(raw):
            raw = raw[first.end() :]
    return raw.translate(None, _DELETED_BYTES)


def _progress_lines_cleaned(raw: bytes) -> bytes | None:
    """``raw`` with each line that holds a ``\\r`` before its end cleaned by clean_line; None
    where one of them then starts with a timestamp (the chunk's timestamp step would cut it)."""
    out: list[bytes] = []
    pos = 0
    for m in _PROGRESS_LINE.finditer(raw):
        start = raw.rfind(b"\n", pos, m.start()) + 1
        line = _undecorated(_last_state(raw, start, m.end()))  # clean_line of the line
        if _GHA_TIMESTAMP.match(line):
            return None
        out += (raw[pos:start], line.encode("utf-8"))
        pos = m.end()
    out.append(raw[pos:])
    return b"".join(out)


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
    lines: Sequence[str]
    text: bytes | None = None


class TextLines(Sequence[str]):
    """The lines of UTF-8 ``text`` (each ending with a newline), each decoded when it is asked
    for. Lines near those whose start is known (``starts``: line index → offset of its first
    byte) are found by a few searches for newlines; a line far from all of them has every line
    decoded once."""

    def __init__(self, text: bytes, count: int, starts: dict[int, int]) -> None:
        self._text, self._count = text, count
        self._starts = {0: 0, **starts}
        self._all: list[str] | None = None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        return iter(self.all())

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k):
        if isinstance(k, slice) or not 0 <= k < self._count:
            return self.all()[k]
        start = self._start(k)
        if start is None:
            return self.all()[k]
        end = self._text.find(b"\n", start)
        self._starts[k + 1] = end + 1
        return self._text[start:end].decode("utf-8")

    def all(self) -> list[str]:
        if self._all is None:
            self._all = self._text.decode("utf-8").split("\n")[:-1]
        return self._all

    def _start(self, k: int) -> int | None:
        text, starts = self._text, self._starts
        if k in starts:
            return starts[k]
        for d in range(1, _NEAR_LINES):
            if k - d in starts:  # walk forward from a known line
                pos = starts[k - d]
                for _ in range(d):
                    pos = text.find(b"\n", pos) + 1
                return pos
            if k + d in starts:  # walk back from a known line
                pos = starts[k + d] - 1
                for _ in range(d):
                    pos = text.rfind(b"\n", 0, pos)
                return pos + 1
        return None


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
        text = clean_chunk(_cut_long_lines(buf[: end + 1]))
        buf = buf[end + 1 :]
        yield Chunk(first, TextLines(text, whole, {}), text)
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
