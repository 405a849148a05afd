"""ISO001's shortcut (no project name twice: no grouping, ordering or merging of copies) gives
the verdict the full path gives; and ``normalize_name`` remembers names within its bound."""

from __future__ import annotations

import pytest

from stackcheck.judge import judge
from stackcheck.models import snapshot as S
from tests.factories import dist, make_snapshot

SITE = "/env/lib/python3.12/site-packages"


def iso001(snapshot) -> list[tuple[str, str, str]]:
    return [
        (c.verdict, c.subject, c.observed)
        for c in judge(snapshot, command="doctor").checks
        if c.id == "ISO001"
    ]


def test_distinct_names_take_the_shortcut():
    snap = make_snapshot(dist("Alpha_One", "1.0"), dist("beta", "2.0"), dist("gamma.x", "3.0"))
    assert iso001(snap) == [("ok", None, "3 projects, one copy each")]


@pytest.mark.parametrize(
    "dists, expected",
    [
        # a .dist-info and an .egg-info of one install: one copy, through the full path
        (
            [
                dist("six", "1.16.0", metadata_dir=f"{SITE}/six-1.16.0.dist-info"),
                dist("Six", "1.16.0", metadata_dir=f"{SITE}/six-1.16.0.egg-info"),
                dist("wheel", "0.43.0"),
            ],
            [("ok", None, "2 projects, one copy each")],
        ),
        # the same name spelled two ways in two directories: two copies
        (
            [dist("Foo_Bar", "1.0"), dist("foo-bar", "2.0", location="/usr/lib/python3/dist-packages")],
            [("blocked", "foo-bar")],
        ),
    ],
    ids=["one-install", "two-copies"],
)
def test_a_name_twice_takes_the_full_path(dists, expected):
    found = iso001(make_snapshot(*dists))
    assert [f[: len(e)] for f, e in zip(found, expected)] == expected and len(found) == len(expected)


def test_normalize_name_remembers_within_its_bound(monkeypatch):
    monkeypatch.setattr(S, "_NORMALIZED", {})
    monkeypatch.setattr(S, "_NAMES_KEPT", 3)
    names = ["Foo_Bar", "foo.bar", "Z.Σ", "a__b", "A-B", "Foo_Bar"]
    assert [S.normalize_name(n) for n in names] == ["foo-bar", "foo-bar", "z-ς", "a-b", "a-b", "foo-bar"]
    assert S._NORMALIZED == {"Foo_Bar": "foo-bar", "foo.bar": "foo-bar", "Z.Σ": "z-ς"}
    assert [S.normalize_name(n) for n in names] == ["foo-bar", "foo-bar", "z-ς", "a-b", "a-b", "foo-bar"]
