"""models.snapshot.normalize_name answers without importing packaging (the snapshot's start-up
path): it must be packaging's canonicalize_name exactly, for any text."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from stackcheck.models.snapshot import normalize_name

NAMEISH = st.text(alphabet=st.sampled_from("aZ09-_.~ İßΣǅ\u212a\t"), max_size=24)


@settings(max_examples=600)
@given(st.one_of(NAMEISH, st.text(max_size=24)))
@example("Foo_Bar.baz")
@example("--a__b..c--")
@example("İstanbul")  # lowercases to two code points
@example("Z.Σ")  # a final sigma: "." is case-ignorable, "-" is not (lower before replacing)
@example("")
def test_normalize_name_is_canonicalize_name(name):
    assert normalize_name(name) == canonicalize_name(name)


def test_normalize_name_examples():
    assert [normalize_name(n) for n in ("Foo_Bar.baz", "oslo.concurrency", "A-_.-B", "torch")] == [
        "foo-bar-baz",
        "oslo-concurrency",
        "a-b",
        "torch",
    ]
