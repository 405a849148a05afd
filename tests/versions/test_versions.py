"""Property tests: stackcheck.versions agrees with packaging's own specifier semantics
(pre-releases admitted) on random specifier sets and a dense grid of versions."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackcheck import versions

# ----- strategies over a small component space, so the grid below covers it densely -----
_release = st.lists(st.integers(0, 3), min_size=1, max_size=3).map(lambda r: ".".join(map(str, r)))
_pre = st.sampled_from(["", "a0", "a1", "b1", "rc1", "rc2"])
_post = st.sampled_from(["", ".post0", ".post1", ".post2"])
_dev = st.sampled_from(["", ".dev0", ".dev1"])
_local = st.sampled_from(["", "+local", "+1"])
_epoch = st.sampled_from(["", "", "", "1!"])


@st.composite
def version_text(draw, local: bool = True) -> str:
    text = draw(_epoch) + draw(_release) + draw(_pre) + draw(_post) + draw(_dev)
    return text + (draw(_local) if local else "")


@st.composite
def specifier_text(draw) -> str:
    op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "~=", "==*", "!=*", "==="]))
    if op in ("==*", "!=*"):
        return f"{op[:2]}{draw(_epoch)}{draw(_release)}.*"
    if op == "~=":
        return (
            f"~={draw(_epoch)}{draw(_release)}.{draw(st.integers(0, 3))}{draw(_pre)}{draw(_post)}{draw(_dev)}"
        )
    if op == "===":
        return f"==={draw(st.one_of(version_text(), st.sampled_from(['1.0', '1', 'foo'])))}"
    return op + draw(version_text(local=op in ("==", "!=")))


@st.composite
def specifier_set(draw) -> SpecifierSet:
    parts = draw(st.lists(specifier_text(), min_size=0, max_size=3))
    try:
        return SpecifierSet(",".join(parts))
    except InvalidSpecifier:
        assume(False)


_BASES = ["0", "0.1", "1", "1.0.1", "1.1", "1.2", "2", "2.0.1", "2.1", "3", "3.3.3", "1!0", "1!1", "1!2.1"]
_SUFFIXES = [
    "",
    ".dev0",
    ".dev1",
    "a0",
    "a1",
    "a1.dev0",
    "b1",
    "rc1",
    "rc1.post1",
    "rc2",
    ".post0",
    ".post1",
    ".post1.dev0",
    ".post2",
    "+local",
    "+1",
    ".post1+local",
    "a1+1",
]
GRID = [Version(b + s) for b, s in itertools.product(_BASES, _SUFFIXES)]


def reference(spec: SpecifierSet, v: Version) -> bool:
    return spec.contains(v, prereleases=True)


@settings(max_examples=100, deadline=None)
@given(specifier_set(), version_text())
def test_contains_agrees_with_packaging(spec, v):
    v = Version(v)
    assert versions.contains(spec, v) is reference(spec, v)


@settings(max_examples=100, deadline=None)
@given(specifier_set(), st.lists(version_text(), max_size=20))
def test_interval_algebra_agrees_with_brute_force_on_the_grid(spec, sampled):
    assert [versions.contains(spec, v) for v in GRID] == [reference(spec, v) for v in GRID]
    described = versions.describe(spec)
    if versions.is_empty(spec):
        assert not any(reference(spec, v) for v in [*GRID, *map(Version, sampled)])
        assert described == "no version"
    else:
        assert described and described != "no version"


@settings(max_examples=100, deadline=None)
@given(specifier_set(), specifier_set(), version_text())
def test_intersect_agrees_with_combining_specifiers(a, b, v):
    both = versions.intersect(a, b)
    for candidate in [Version(v), *GRID[::7]]:
        assert versions.contains(both, candidate) is (reference(a, candidate) and reference(b, candidate))
    if versions.is_empty(both):
        assert not any(reference(a, g) and reference(b, g) for g in GRID)


@settings(max_examples=100, deadline=None)
@given(specifier_set(), specifier_set())
def test_subset_is_never_contradicted_by_a_grid_version(a, b):
    if versions.is_subset(a, b):
        assert all(reference(b, g) for g in GRID if reference(a, g))


@settings(max_examples=100, deadline=None)
@given(specifier_set())
def test_simplify_keeps_the_same_versions(spec):
    simple = versions.simplify(spec)
    assert [versions.contains(simple, g) for g in GRID] == [reference(spec, g) for g in GRID]


@pytest.mark.parametrize(
    ("spec", "empty"),
    [
        (">=2.6,<2.5", True),  # base torch>=2.6, child torch<2.5
        (">=3.13,<3.12", True),  # python >=3.13 with <3.12
        (">=2.6,<2.6", True),
        ("==2.8.0,!=2.8.0", True),
        ("==2.8.0,>=2.6,<3", False),
        (">2.6,<2.6.1", False),  # 2.6.0.1 exists
        (">1.0,<1.0.post1", True),  # >V excludes V's post releases, so nothing is left
        ("~=2.8,<2.8", True),
        ("==2.*,!=2.*", True),
        ("===1.0,===1.0.0", True),  # string equality: two spellings never match together
        ("", False),
    ],
)
def test_emptiness_examples(spec, empty):
    assert versions.is_empty(spec) is empty


def test_prerelease_policy_is_explicit():
    # pre-releases are versions like any other here (an installed rc is judged, not ignored) ...
    assert versions.contains(">=2.8", "2.9.0rc1")
    assert not versions.is_empty(">=2.6rc1,<2.6rc3")
    # ... but one can ask whether a final release can satisfy the range at all
    assert versions.is_empty(">=2.6rc1,<2.6rc3", prereleases=False)
    # PEP 440: <V never admits V's own pre-releases
    assert not versions.contains("<2.6", "2.6.0rc1")
    assert versions.is_empty(">=2.6.0rc1,<2.6")


def test_local_versions_follow_pep440():
    assert versions.contains("==2.8.0", "2.8.0+cu128")
    assert versions.contains("<=2.8.0", "2.8.0+cu128")
    assert not versions.contains(">2.8.0", "2.8.0+cu128")
    assert not versions.contains("==2.8.0+cpu", "2.8.0+cu128")


def test_describe_reads_lower_bounds_first():
    assert versions.describe("<3,>=2.8") == ">=2.8, <3"
    assert versions.describe("~=2.8") == ">=2.8, <3"
    assert versions.describe(">=2.6,<3,==2.8.0") == "==2.8.0"
    assert versions.describe("") == "any version"
    assert versions.describe(">=2.6,<2.5") == "no version"


def test_simplify_keeps_an_empty_range_as_written():
    assert str(versions.simplify(">=2.6,<2.5")) == "<2.5,>=2.6"
    assert str(versions.simplify("<3,>=2.6,==2.11.0")) == "==2.11.0"
