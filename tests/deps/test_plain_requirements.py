"""``requirements.parse_requirement`` reads the commonest Requires-Dist (``name`` or
``name>=1.0,<2``: no space, extra, URL or marker) without packaging's tokenizer (issue 13); what
it makes is packaging's own ``Requirement(text)`` in every field, in its string and in what it
contains, and a text it may not read that way goes to packaging, invalid ones included."""

from __future__ import annotations

import importlib.metadata

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from stackcheck import versions
from stackcheck.requirements import _PLAIN, packaging_requirement, parse_requirement

NAMES = st.sampled_from(
    ["numpy", "Foo_Bar.baz", "a", "x-1", "9lives", "-bad", "bad-", "zope.interface", "a__b"]
)
OPS = st.sampled_from(["==", "!=", "<=", ">=", "<", ">", "~=", "===", "=", "=<", "~"])
VERSIONS = st.lists(
    st.sampled_from(
        [
            "1",
            "0",
            "2",
            ".",
            "*",
            "+",
            "!",
            "_",
            "-",
            "a",
            "b",
            "rc",
            "post",
            "dev",
            "v",
            "local",
            "9" * 40,
            " ",
            "9" * (versions.MAX_VERSION_CHARS + 1),
        ]
    ),
    min_size=1,
    max_size=7,
).map("".join)
TEXTS = st.one_of(
    st.builds(
        lambda name, specs: name + ",".join(op + v for op, v in specs),
        NAMES,
        st.lists(st.tuples(OPS, VERSIONS), max_size=3),
    ),
    st.builds(
        lambda a, b: a + b,
        NAMES,
        st.sampled_from([" >=1.0", "[x]>=1", ">=1.0; python_version<'3'", "@ https://h/x.whl", "(>=1)"]),
    ),
)
PROBES = [Version(v) for v in ("0", "0.9", "1", "1.0.post1", "1.5rc1", "2", "2.0.0", "10")]


def assert_same(text: str) -> None:
    got, expected = parse_requirement(text), packaging_requirement(text)  # packaging's parser alone
    if expected is None:
        assert got is None
        return
    assert got is not None and got == expected
    assert (got.name, got.url, got.extras, got.marker) == (
        expected.name,
        expected.url,
        expected.extras,
        expected.marker,
    )
    assert str(got) == str(expected) and str(got.specifier) == str(expected.specifier)
    assert [str(s) for s in got.specifier] == [str(s) for s in expected.specifier]
    assert [got.specifier.contains(v, prereleases=True) for v in PROBES] == [
        expected.specifier.contains(v, prereleases=True) for v in PROBES
    ]


@settings(max_examples=1500, deadline=None)
@given(TEXTS)
def test_any_text_is_what_packaging_makes_of_it(text):
    parse_requirement.cache_clear()
    assert_same(text)


def test_every_requires_dist_here_is_what_packaging_makes_of_it():
    texts = [r for d in importlib.metadata.distributions() for r in d.requires or []]
    plain = [t for t in texts if _PLAIN.fullmatch(t)]
    assert len(plain) > 100  # the shape read without the tokenizer is the common one
    parse_requirement.cache_clear()
    for text in texts:
        assert_same(text)


def test_a_packaging_whose_requirement_holds_more_fields_is_asked_itself(monkeypatch):
    from packaging.requirements import Requirement

    from stackcheck import requirements

    requirements._fields_known.cache_clear()
    assert requirements._fields_known(Requirement) and requirements._plain_requirement("numpy>=1.0")
    monkeypatch.setattr(Requirement, "__slots__", (*requirements._FIELDS, "provenance"), raising=False)
    requirements._fields_known.cache_clear()
    try:
        assert requirements._plain_requirement("numpy>=1.0") is None  # never half-built
        assert str(requirements.packaging_requirement("numpy>=1.0")) == "numpy>=1.0"
    finally:
        monkeypatch.undo()
        requirements._fields_known.cache_clear()
