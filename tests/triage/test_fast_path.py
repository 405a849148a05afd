"""The fast path of triage gives what the plain line-by-line path gives: the same cleaned
lines, the same failure regions and the same findings, on generated logs with hits at block
boundaries (every BLOCK_LINES lines), in the first and the last line, CRLF line ends, overlong
lines and binary-looking bytes around the probe limit."""

from __future__ import annotations

import io
from contextlib import contextmanager

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.errors import InputError
from stackcheck.triage import regions, triage_text
from stackcheck.triage.reader import _PROBE_BYTES, MAX_LINE_CHARS, _mostly_undecodable, clean_line, iter_lines
from stackcheck.triage.regions import BLOCK_LINES, RegionExtractor, error_lines, extract_regions

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


def reference_blocks(lines, size=BLOCK_LINES):
    block, first = [], 1
    for line in lines:
        block.append(line)
        if len(block) == size:
            yield first, block
            first += size
            block = []
    if block:
        yield first, block


@contextmanager
def line_by_line():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(RegionExtractor, "feed_block", reference_feed_block)
        mp.setattr(regions, "blocks", reference_blocks)
        mp.setattr("stackcheck.triage.diagnose.blocks", reference_blocks)
        mp.setattr("stackcheck.triage.diagnose.iter_lines", reference_lines)
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
