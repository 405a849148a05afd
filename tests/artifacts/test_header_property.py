"""Property: any bytes given as a safetensors file give a Header or a one-line InputError,
never another exception, and never a read past the header (hypothesis)."""

from __future__ import annotations

import json
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.artifacts.headers import parse_header, read_header
from stackcheck.errors import InputError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
tensor = st.fixed_dictionaries(
    {
        "dtype": st.sampled_from(["F16", "BF16", "F32", "I64", "X9", 3]),
        "shape": st.lists(st.integers(-2, 5), max_size=3) | json_values,
        "data_offsets": st.lists(st.integers(-2, 300), min_size=0, max_size=3) | json_values,
    }
)
headers = st.dictionaries(st.text(max_size=10), tensor | json_values, max_size=5)


def one_line(exc: InputError) -> bool:
    return "\n" not in str(exc) and bool(str(exc))


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=64))
def test_any_bytes(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("h") / "x.safetensors"
    path.write_bytes(raw)
    try:
        read_header(path)
    except InputError as exc:
        assert one_line(exc)


@settings(max_examples=300, deadline=None)
@given(doc=headers, data=st.integers(0, 400))
def test_any_json_header(doc, data):
    raw = json.dumps(doc).encode()
    try:
        h = parse_header(raw, "x.safetensors", 8 + len(raw) + data)
    except InputError as exc:
        assert one_line(exc)
        return
    for t in h.tensors.values():  # what was accepted is consistent
        assert t.begin <= t.end and all(d >= 0 for d in t.shape)
    assert h.data_bytes == data


def test_length_field_is_checked_before_reading(tmp_path):
    path = tmp_path / "x.safetensors"
    path.write_bytes(struct.pack("<Q", 2**63) + b"{}")
    try:
        read_header(path)
    except InputError as exc:
        assert "above the 100000000-byte limit" in str(exc)
    else:
        raise AssertionError("accepted a 2**63-byte header")
