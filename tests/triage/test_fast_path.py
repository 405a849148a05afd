"""The fast path of triage gives what the plain line-by-line path gives: the same cleaned
lines, the same failure regions and the same findings, on generated logs with hits at block
boundaries (every BLOCK_LINES lines), in the first and the last line, CRLF line ends, overlong
lines and binary-looking bytes around the probe limit; and past the probe, where the input is
read and cleaned a chunk at a time and a chunk without signatures is gated by one keyword pass,
on logs of colour codes, progress bars, timestamps, control bytes, invalid UTF-8 and long lines
cut at chunk boundaries of every size."""

from __future__ import annotations

import io
from contextlib import contextmanager

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.errors import InputError
from stackcheck.models.rule import Rule
from stackcheck.triage import reader, regions, triage_text
from stackcheck.triage.reader import (
    _PROBE_BYTES,
    ALIGN_LINES,
    MAX_LINE_CHARS,
    Chunk,
    TextLines,
    _mostly_undecodable,
    clean_chunk,
    clean_line,
    iter_chunks,
    iter_lines,
)
from stackcheck.triage.regions import (
    BLOCK_LINES,
    RegionExtractor,
    error_lines,
    extract_regions,
    keyword_kinds,
)
from stackcheck.triage.signatures import SignatureIndex

HITS = [
    "Traceback (most recent call last):",
    '  File "train.py", line 9, in <module>',
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "ModuleNotFoundError: No module named 'flash_attn'",
    "ERROR: No matching distribution found for torch==9.9",
    "##[error]Process completed with exit code 1.",
    "\x1b[31mError\x1b[0m: boom",
    "2024-01-02T03:04:05.1234567Z RuntimeError: CUDA error: invalid device function",
    "NCCL WARN Call to connect returned Connection refused",
    "Collecting environment information...",
    "PyTorch version: 2.1.0+cu121",
    "The NVIDIA driver on your system is too old (found version 11040).",
    "Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1",
    "ImportError: libcudart.so.12: cannot open shared object",
    "During handling of the above exception, another exception occurred:",
]
QUIET = [
    "",
    "   ",
    "collecting ... ok",
    "2024-01-02T03:04:05.1Z step 3",
    "10%\r50%\r100% done",
    "\tat x.y(Z.java:1)",
]


def reference_lines(stream, source):
    """The cleaned lines, computed another way: the whole input split at once, each line cut
    where readline(MAX_LINE_CHARS) cuts it, the probe on the pieces of its first bytes."""
    data = stream.read()
    if not data:
        raise InputError(f"{source}: empty input, expected an error text, traceback or log")
    *whole, final = data.split(b"\n")
    pieces = [(line + b"\n")[:MAX_LINE_CHARS] for line in whole] + ([final[:MAX_LINE_CHARS]] if final else [])
    seen = 0
    for piece in pieces:
        if seen < _PROBE_BYTES and (b"\x00" in piece or _mostly_undecodable(piece)):
            raise InputError(f"{source}: binary data, expected an error text, traceback or log")
        seen += len(piece)
    return [clean_line(piece.decode("utf-8", errors="replace")) for piece in pieces]


def reference_feed_block(self, first_lineno, lines):
    """RegionExtractor.feed_block as it was: every line fed."""
    done = []
    for offset, (line, kind) in enumerate(zip(lines, self._triggers(lines))):
        done.extend(self.feed(first_lineno + offset, line, kind))
    return done


def reference_blocks(lines, size=BLOCK_LINES, first=1):
    block = []
    for line in lines:
        block.append(line)
        if len(block) == size:
            yield first, block
            first += size
            block = []
    if block:
        yield first, block


def reference_chunks(stream, source):
    """All lines in one chunk read line by line (no text: every block takes the plain path)."""
    yield Chunk(1, reference_lines(stream, source))


@contextmanager
def line_by_line():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(RegionExtractor, "feed_block", reference_feed_block)
        mp.setattr(regions, "blocks", reference_blocks)
        mp.setattr("stackcheck.triage.diagnose.blocks", reference_blocks)
        mp.setattr("stackcheck.triage.diagnose.iter_chunks", reference_chunks)
        yield


@st.composite
def logs(draw):
    """A log of up to ~3 blocks: quiet filler with hits placed anywhere, often right at a
    block boundary, in the first or the last line."""
    n = draw(st.integers(1, 3 * BLOCK_LINES + 5))
    lines = [draw(st.sampled_from(QUIET)) for _ in range(min(n, 8))]
    lines = [lines[i % len(lines)] for i in range(n)]
    spots = draw(
        st.lists(
            st.one_of(
                st.sampled_from(
                    [0, n - 1, BLOCK_LINES - 1, BLOCK_LINES, 2 * BLOCK_LINES - 1, 2 * BLOCK_LINES]
                ),
                st.integers(0, n - 1),
            ),
            max_size=12,
        )
    )
    for spot in spots:
        if spot < n:
            lines[spot] = draw(st.sampled_from(HITS))
    if draw(st.booleans()):  # an overlong line somewhere
        lines[draw(st.integers(0, n - 1))] = "x" * draw(st.integers(MAX_LINE_CHARS - 2, MAX_LINE_CHARS + 50))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return end.join(lines) + draw(st.sampled_from(["", end]))


def regions_of(text, feed):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(RegionExtractor, "feed_block", feed)
        lines = reference_lines(io.BytesIO(text.encode() or b"\n"), "<t>")
        found = extract_regions(lines, also_trigger=lambda s: "driver" in s)
        return [(r.start, r.end, r.kind, r.lines, r.elided) for r in found]


def diagnosis_or_error(text):
    try:
        return msgspec.to_builtins(triage_text(text))
    except InputError as exc:
        return str(exc)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs())
def test_regions_and_findings_are_those_of_the_line_by_line_path(text):
    assert regions_of(text, RegionExtractor.feed_block) == regions_of(text, reference_feed_block)
    fast = diagnosis_or_error(text)
    with line_by_line():
        slow = diagnosis_or_error(text)
    assert fast == slow


BYTES = st.lists(
    st.one_of(
        st.sampled_from(
            [b"Error: x", b"\x1b[31mok", b"2024-01-02T03:04:05Z a", b"\xff\xfe" * 40, b"\x00", b"\r", b""]
        ),
        st.integers(MAX_LINE_CHARS - 2, MAX_LINE_CHARS + 2).map(lambda k: b"y" * k),
        st.integers(1, _PROBE_BYTES).map(lambda k: b"z" * k),
    ),
    max_size=12,
)


def lines_or_error(read, data):
    try:
        return list(read(io.BytesIO(data), "<t>"))
    except InputError as exc:
        return str(exc)


@settings(max_examples=300, deadline=None)
@given(BYTES, st.sampled_from([b"\n", b"\r\n"]), st.booleans())
def test_reader_gives_the_lines_and_errors_of_the_plain_loop(pieces, end, final):
    data = end.join(pieces) + (end if final else b"")
    assert lines_or_error(iter_lines, data) == lines_or_error(reference_lines, data)


def test_binary_data_just_before_the_probe_limit_is_refused_and_just_after_it_is_read():
    line = b"a" * 1023 + b"\n"  # 8 of them fill the probe exactly
    before = line * 7 + b"a" * 1022 + b"\n" + b"\x00\n"
    after = line * 8 + b"\x00\n"
    assert lines_or_error(iter_lines, before) == "<t>: binary data, expected an error text, traceback or log"
    assert lines_or_error(iter_lines, after) == ["a" * 1023] * 8 + [""]


def test_error_lines_are_the_lines_each_match_is_on():
    block = "\n".join(["ok", "Error: a", "FAILED x", "", "ok", "npm ERR! b", "fatal: c", "ok"])
    naive = {block.count("\n", 0, m.start()) for m in regions._error_regex().finditer(block)}
    assert error_lines(block) == naive == {1, 2, 5, 6}


def test_a_hit_in_the_first_and_in_the_last_line_of_a_long_log_open_regions():
    lines = ["step"] * (2 * BLOCK_LINES)
    lines[0] = "ERROR: first"
    lines[-1] = "ERROR: last"
    found = regions_of("\n".join(lines), RegionExtractor.feed_block)
    assert [(start, end, kind) for start, end, kind, _, _ in found] == [
        (1, 1 + 8, "error"),
        (2 * BLOCK_LINES - 3, 2 * BLOCK_LINES, "error"),
    ]


# ----- past the probe: chunks cleaned at once, chunks without signatures gated by keywords -----

PADDING = [f"step {i:04d}: " + "." * 26 for i in range(ALIGN_LINES)]  # 40 bytes each: the probe ends here
assert len("\n".join(PADDING)) >= _PROBE_BYTES

RAW_PIECES = [
    b"plain text",
    b"",
    b"   ",
    b"\x1b[31mError\x1b[0m: boom",
    b"\x1b[1m\x1b(B\x1b=x\x1b",  # a lone ESC at the end
    b"E\x1b[0mrror: joined by the colour code",
    b"10%\r50%\r100% done",
    b"   \r\x1b[0m",
    b"x\r\r",
    b"\r  \r",
    b"\x1b[0m2024-01-02T03:04:05.1234567Z after a colour code",
    b"2024-01-02T03:04:05Z 2024-01-02T03:04:05Z twice",
    b"\xef\xbb\xbf2024-01-02T03:04:05.1Z with a BOM",
    b"9%\r2024-01-02T03:04:05Z after a progress bar",
    b"9%\r2024-01-02T03:04:05Z 2024-01-02T03:04:05Z a timestamp left after a progress bar",
    b"\x01\x02ctrl\x7f\x0b\x0c\x1c",
    b"\x01 \x1c",
    b"caf\xc3\xa9 \xe2\x9d\x8c \xe2\x80\xa8 \xc2\xa0",
    b"bad \xff\xfe utf-8 \xe2\x82",
    b"\xe2\x01\x82\xac",  # a control byte inside an invalid sequence
    b"Traceback (most recent call last):",
    b"ValueError: x",
    b"ModuleNotFoundError: No module named 'flash_attn'",
    # progress lines whose parts are blank only as str.strip sees them, or hold colour codes
    # that a first removal joins, control bytes, a BOM and timestamps
    b"\xc2\xa0\r\x1c\x1d\rdone\r\xe2\x80\xa8\xe3\x80\x80\r\x85",
    b"ok\r\x1b\x1b[0m[31mred\r\x1f",
    b"a\r\x07\r\x0b",
    b"1\r\xef\xbb\xbf2024-01-02T03:04:05Z x\x01",
    b"\xe2\x80\x83\r2024-01-02T03:04:05.5Z \xc3\xa9t\xc3\xa9\r \t",
]


@st.composite
def bulk_logs(draw):
    """Bytes that reach the bulk reader: the padding, then up to ~3 blocks of raw pieces with
    CRLF or LF ends (some with extra \\r), long lines around the cut, with or without a final newline."""
    n = draw(st.integers(1, 3 * ALIGN_LINES + 20))
    pool = draw(st.lists(st.sampled_from(RAW_PIECES), min_size=1, max_size=8))
    body = [pool[i % len(pool)] for i in range(n)]
    for _ in range(draw(st.integers(0, 6))):
        spot = draw(st.integers(0, n - 1))
        body[spot] = draw(
            st.one_of(
                st.sampled_from(RAW_PIECES),
                st.integers(MAX_LINE_CHARS - 3, MAX_LINE_CHARS + 3).map(lambda k: b"y" * k),
                st.integers(MAX_LINE_CHARS - 3, MAX_LINE_CHARS + 3).map(lambda k: b"\xc3\xa9" * (k // 2)),
                st.integers(MAX_LINE_CHARS, 3 * MAX_LINE_CHARS).map(lambda k: b"9%\r" * (k // 3)),
            )
        )
    ends = draw(st.lists(st.sampled_from([b"\n", b"\r\n", b"\r\r\n"]), min_size=1, max_size=3))
    data = b"\n".join(line.encode() for line in PADDING) + b"\n"
    data += b"".join(line + ends[i % len(ends)] for i, line in enumerate(body))
    return data if draw(st.booleans()) else data.rstrip(b"\n")


CHUNK_SIZES = st.sampled_from([1, 300, 5000, reader.CHUNK_BYTES])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bulk_logs(), CHUNK_SIZES)
def test_the_bulk_reader_gives_the_lines_of_the_plain_loop_at_every_chunk_size(data, size):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "CHUNK_BYTES", size)
        chunks = list(iter_chunks(io.BytesIO(data), "<t>"))
    assert [line for chunk in chunks for line in chunk.lines] == reference_lines(io.BytesIO(data), "<t>")
    for chunk, following in zip(chunks, chunks[1:]):
        assert (chunk.first - 1) % ALIGN_LINES == 0 and len(chunk.lines) % ALIGN_LINES == 0
        assert following.first == chunk.first + len(chunk.lines)
    bulk = [chunk for chunk in chunks if chunk.text is not None]
    for chunk in bulk:
        assert chunk.text == "".join(line + "\n" for line in chunk.lines).encode()
    assert bool(bulk) == (data.count(b"\n") >= 2 * ALIGN_LINES)  # the bulk reader did read


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(RAW_PIECES), max_size=40), st.sampled_from([b"\n", b"\r\n"]))
def test_a_chunk_is_cleaned_as_its_lines_are(pieces, end):
    raw = b"".join(piece + end for piece in pieces)
    lines = [clean_line(piece.decode("utf-8", errors="replace")) for piece in pieces]
    assert clean_chunk(raw) == "".join(line + "\n" for line in lines).encode()


def last_state_by_split(line: str) -> str:
    """What clean_line keeps of a line with a \\r: the last part of it that is not blank (as it
    was written, splitting the line into all its parts)."""
    return next((part for part in reversed(line.split("\r")) if part.strip()), "")


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(["\r", " ", "\t", "\u3000", "x", "10%", "\x1b[0m", "\x08", "\n"]), max_size=12)
)
def test_the_last_state_of_a_progress_line_is_the_last_part_that_is_not_blank(parts):
    line = "".join(parts)
    plain = line.rstrip("\r\n")
    plain = reader._ANSI.sub("", plain) if "\x1b" in plain else plain
    expected = last_state_by_split(plain) if "\r" in plain else plain
    assert clean_line(line) == reader._CONTROL.sub("", expected)


def test_the_last_state_is_found_from_the_end_past_blank_parts():
    assert clean_line("10%\r \r\t\r") == "10%"
    assert clean_line(" \r\r ") == ""
    assert clean_line("a\r\rb ") == "b "
    assert clean_line("a\rb\r  \n") == "b"


def test_clean_line_edge_cases_that_the_chunk_cleaner_must_follow():
    assert clean_line("   \r\x1b[0m") == ""  # the \r that a colour code hid is a progress bar's
    assert clean_line("   \r\n") == "   "  # a line end's \r is not
    assert clean_line("2024-01-02T03:04:05Z 2024-01-02T03:04:05Z twice") == "2024-01-02T03:04:05Z twice"
    assert clean_line("\x1b[0m2024-01-02T03:04:05Z a") == "a"
    # a progress line whose last state starts with a timestamp: the chunk is cleaned line by line
    raw = b"9%\r2024-01-02T03:04:05Z 2024-01-02T03:04:05Z a\r\n2024-01-02T03:04:05Z b\n\x1b[1mc\n"
    assert clean_chunk(raw) == b"2024-01-02T03:04:05Z a\nb\nc\n"
    spliced = b" 2024-01-02T03:04:05Z 2024-01-02T03:04:05Z a\nb\nc\n"  # no timestamp at its start
    assert clean_chunk(raw.replace(b"9%\r", b"9%\r ")) == spliced
    assert (
        clean_line("\u0662\u0660\u0662\u0664-01-02T03:04:05Z a")
        == "\u0662\u0660\u0662\u0664-01-02T03:04:05Z a"
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(HITS + QUIET), min_size=1, max_size=BLOCK_LINES))
def test_keyword_kinds_are_the_triggers_of_a_block_without_signatures(lines):
    text = "".join(line + "\n" for line in lines).encode()
    expected = {i: kind for i, kind in enumerate(RegionExtractor()._triggers(lines)) if kind is not None}
    kinds, starts = keyword_kinds(text)
    assert kinds == expected and list(starts) == list(kinds)
    assert all(text[starts[i] :].startswith(lines[i].encode() + b"\n") for i in kinds)
    lazy = TextLines(text, len(lines), starts)  # each line found from those starts, in any order
    assert [lazy[i] for i in reversed(range(len(lines)))] == lines[::-1] and list(lazy) == lines


def test_a_block_signature_anchored_at_the_text_end_still_opens_the_gate_of_its_chunk():
    index = SignatureIndex([Rule(id="KB197", title="t", category="other", signatures=["requires torch$"])])
    block = "a\nthis requires torch"
    assert index.occurs_in(block) and [hit.start for hit in index.search(block)] == [7]
    assert index.occurs_in((block + "\nnext line\n").encode())  # the chunk around the block
    assert index.search(block + "\nnext line") == []  # the signature as written decides


@contextmanager
def short_whole_text():
    """Inputs past 2,000 characters are not matched as a whole (as past 256 KiB), so that the
    generated logs reach the keyword gate, which waits for that."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("stackcheck.triage.diagnose.WHOLE_TEXT_LIMIT", 2000)
        yield


def gated_diagnosis(text, size):
    """The diagnosis, and how many chunks took the keyword pass."""
    gated = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "CHUNK_BYTES", size)
        mp.setattr(
            "stackcheck.triage.diagnose.keyword_kinds", lambda *a: gated.append(1) or keyword_kinds(*a)
        )
        return diagnosis_or_error(text), len(gated)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs(), st.sampled_from([1, 2000, reader.CHUNK_BYTES]), st.booleans())
def test_findings_past_the_probe_are_those_of_the_line_by_line_path(text, size, short):
    text = "\n".join(PADDING) + "\n" + text
    with short_whole_text() if short else contextmanager(lambda: (yield))():
        fast, _ = gated_diagnosis(text, size)
        with line_by_line():
            slow = diagnosis_or_error(text)
    assert fast == slow


def test_a_long_log_goes_through_the_keyword_gate_with_the_same_findings():
    body = ["collecting ... ok"] * (4 * ALIGN_LINES)
    body[5:8] = ["Traceback (most recent call last):", '  File "t.py", line 1', "ValueError: x"]
    body[ALIGN_LINES - 1] = "##[error]Process completed with exit code 1."  # the last line of a chunk
    body[2 * ALIGN_LINES + 3] = "ERROR: No matching distribution found for torch==9.9"  # a signature
    text = "\n".join(PADDING + body)
    with short_whole_text():
        fast, gated = gated_diagnosis(text, 1)
        with line_by_line():
            slow = diagnosis_or_error(text)
    assert fast == slow
    # chunks of lines 257-512 and 513-768; 769-1024 holds a signature, the last lines have no newline
    assert gated == 2
    assert fast["regions_found"] == 3 and fast["matches"][0]["rule_id"] == slow["matches"][0]["rule_id"]
