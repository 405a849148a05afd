"""normalize_name is PEP 503's normalization, the same answer as packaging's canonicalize_name
(which it no longer imports), for any text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from stackcheck.models.snapshot import normalize_name


@given(st.text(alphabet=st.sampled_from(list("aZz09_-.ßİ Ω")), max_size=16) | st.text(max_size=10))
def test_same_as_packaging(name):
    assert normalize_name(name) == canonicalize_name(name)


def test_examples():
    assert [normalize_name(n) for n in ("Foo_Bar.baz", "A--_.b", "torch", "-x-")] == [
        "foo-bar-baz",
        "a-b",
        "torch",
        "-x-",
    ]
