"""A contract file read whole (snapshot, profile registry, record, lock, report) is bounded:
one larger than the limit is a one-line error found before it is read, for files, FIFOs and
standard input alike."""

from __future__ import annotations

import io
import os
import sys
import threading

import pytest

from stackcheck.errors import InputError
from stackcheck.fileio import MAX_INPUT_BYTES, read_bytes


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "snap.json"
    with open(big, "wb") as fh:
        fh.truncate(MAX_INPUT_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(InputError) as err:
        read_bytes(big, "snapshot")
    assert str(err.value) == (
        f"{big}: {MAX_INPUT_BYTES + 1} bytes, larger than the {MAX_INPUT_BYTES}-byte limit for a snapshot"
    )


def test_the_limit_is_exact(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(b"x" * 10)
    assert read_bytes(path, "record", limit=10) == b"x" * 10
    with pytest.raises(InputError, match=r"11 bytes, larger than the 10-byte limit for a record$"):
        path.write_bytes(b"x" * 11)
        read_bytes(path, "record", limit=10)


def test_a_fifo_without_a_size_is_cut_at_the_limit(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "wb") as fh:
            try:
                fh.write(b"y" * 64)
            except BrokenPipeError:
                pass

    t = threading.Thread(target=writer)
    t.start()
    try:
        with pytest.raises(InputError) as err:
            read_bytes(fifo, "lock", limit=16)
    finally:
        t.join(5)
    assert str(err.value) == f"{fifo}: more than the 16-byte limit for a lock"


def test_standard_input_is_cut_at_the_limit(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"z" * 32)))
    with pytest.raises(InputError) as err:
        read_bytes("-", "result draft", limit=8)
    assert str(err.value) == "<stdin>: more than the 8-byte limit for a result draft"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"z" * 8)))
    assert read_bytes("-", "result draft", limit=8) == b"z" * 8
