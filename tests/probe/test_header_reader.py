"""The METADATA header reader's shortcut (lines that cannot hold a wanted header are passed
over unsplit) gives exactly what looking at every line gives; files read with ``os.read``
come back whole, or cut at the limit, and a FIFO or directory is refused."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.probe import interpreter

EVERY_LINE = frozenset()  # no shortcut: every line is split and looked at

NAMES = ["Name", "Version", "Requires-Dist", "Requires-Python", "Provides-Extra", "Classifier", "Author"]
BREAKS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
STARTS = [" ", "\t", "\xa0", "\u3000", "\x1f", "\u2003", "", "-", ":", "n", "N", "V", "p", "R", "K", "é"]


def both(head: str) -> tuple[dict, dict]:
    return interpreter._parse_headers(head), interpreter._parse_headers(head, EVERY_LINE)


def test_every_first_character_of_the_basic_plane():
    for code in range(0x10000):
        c = chr(code)
        lines = [c + "ame: one", " folded", c + "equires-Dist: a", c, c + ": x", "\tmore"]
        lines += ["Version: 2", c + "ersion: 3", " v", c + "Name: n", " n2", c + "rovides-Extra: e"]
        fast, slow = both("\n".join(lines))
        assert fast == slow, repr(c)


line = st.builds(
    lambda start, name, case, pad, sep, value: start + getattr(name, case)() + pad + sep + value,
    st.sampled_from(STARTS),
    st.sampled_from(NAMES),
    st.sampled_from(["lower", "upper", "title", "strip"]),
    st.sampled_from(["", " ", "\t", "\xa0"]),
    st.sampled_from([":", "", " :", "::"]),
    st.text(max_size=12),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.one_of(line, st.text(max_size=20)), st.sampled_from(BREAKS)), max_size=25))
def test_shaped_header_blocks(rows):
    fast, slow = both("".join(text + brk for text, brk in rows))
    assert fast == slow


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text(head):
    fast, slow = both(head)
    assert fast == slow


def test_every_installed_distribution(monkeypatch):
    """Each METADATA on this interpreter's sys.path (hundreds in the test venv), read from
    disk: continuation lines, repeated fields and encodings as real projects write them."""
    paths = sorted(
        {
            p
            for entry in sys.path
            if entry and Path(entry).is_dir()
            for p in Path(entry).glob("*.dist-info/METADATA")
        }
    )
    assert len(paths) > 20
    fast = [interpreter._read_headers(str(p)) for p in paths]
    monkeypatch.setattr(
        interpreter, "_parse_headers", functools.partial(interpreter._parse_headers, skip=EVERY_LINE)
    )
    assert fast == [interpreter._read_headers(str(p)) for p in paths]
    assert sum(len(found["requires-dist"]) for found in fast) > 50


@pytest.mark.parametrize("size", [0, 1, 8191, 8192, 8193, 70_000, 200_000])
def test_files_are_read_whole_or_up_to_the_limit(tmp_path, size):
    path = tmp_path / "RECORD"
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path.write_bytes(data)
    assert interpreter._read_file(str(path)) == data
    assert interpreter._read_file(str(path), 4096) == data[:4096]
    assert interpreter._read_file(str(path), size + 1) == data
    head = b"Name: p\nVersion: 1\n\n" + data
    path.write_bytes(head)
    assert interpreter._read_headers(str(path)) == {
        "name": "p",
        "version": "1",
        "requires-dist": [],
        "provides-extra": [],
    }


def test_a_fifo_or_a_directory_is_an_os_error(tmp_path):
    os.mkfifo(tmp_path / "METADATA")
    for path in (tmp_path / "METADATA", tmp_path):
        with pytest.raises(OSError):
            interpreter._read_file(str(path))
        with pytest.raises(OSError):
            interpreter._read_headers(str(path))
