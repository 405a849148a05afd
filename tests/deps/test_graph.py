"""The requirement graph on hand-made snapshots: extras, markers, why-paths, trees, cycles."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.deps.graph import DepGraph
from tests.factories import dist, make_snapshot


def graph(*dists, **kw) -> DepGraph:
    return DepGraph(make_snapshot(*dists, **kw))


def test_markers_are_evaluated_for_the_checked_interpreter():
    g = graph(
        dist(
            "app",
            "1.0",
            "old-backport; python_version < '3.9'",
            "winonly; sys_platform == 'win32'",
            "linuxonly>=2; platform_system == 'Linux'",
        ),
        dist("linuxonly", "1.0"),
        python="3.12.3",
    )
    assert [(p.name, p.state) for p in g.problems()] == [("linuxonly", "mismatch")]
    assert [
        (p.name, p.state)
        for p in graph(dist("app", "1.0", "old-backport; python_version < '3.9'"), python="3.8.10").problems()
    ] == [("old-backport", "missing")]


def test_extras_propagate_through_chains_of_extras():
    g = graph(
        dist("top", "1", "mid[gpu]"),
        dist("mid", "1", "low[fast]; extra == 'gpu'", "unused; extra == 'docs'"),
        dist("low", "1", "accel>=2; extra == 'fast'"),
        dist("accel", "1"),
    )
    (p,) = g.problems()
    assert (p.package, p.name, p.state, p.via_extra) == ("low", "accel", "mismatch", "fast")
    assert g.problems(include_extras=False) == []
    assert (
        p.message() == 'low 1 (extra [fast]) has requirement accel>=2; extra == "fast", but you have accel 1.'
    )


def test_why_gives_shortest_paths_from_roots():
    g = graph(
        dist("app", "1", "web", "db", requested=True),
        dist("web", "1", "util"),
        dist("db", "1", "orm"),
        dist("orm", "1", "util"),
        dist("util", "1"),
        dist("tool", "1", "util", requested=True),
    )
    assert g.roots() == ["app", "tool"]
    assert g.why("util") == [["tool", "util"], ["app", "web", "util"], ["app", "db", "orm", "util"]]
    assert g.why("app") == [["app"]]
    assert g.chain("orm") == ["app", "db", "orm"]


def test_cycles_terminate_and_are_marked_in_the_tree():
    g = graph(dist("a", "1", "b"), dist("b", "1", "c"), dist("c", "1", "b"), dist("entry", "1", "a"))
    assert g.why("c") == [["entry", "a", "b", "c"]]
    (tree,) = g.tree(["entry"])
    b = tree["requires"][0]["requires"][0]
    assert b["name"] == "b" and b["requires"][0]["requires"][0] == {
        "name": "b",
        "version": "1",
        "required": "any",
        "state": "satisfied",
        "cycle": True,
    }


def test_tree_marks_repeats_and_problems():
    g = graph(dist("app", "1", "lib>=2", "util", "gone"), dist("lib", "1", "util"), dist("util", "1"))
    (tree,) = g.tree()
    kids = {k["name"]: k for k in tree["requires"]}
    assert kids["lib"]["state"] == "mismatch" and kids["gone"]["state"] == "missing"
    assert kids["util"].get("repeated") or kids["lib"]["requires"][0].get("repeated")


def test_shadowed_copies_and_broken_metadata_are_not_nodes():
    g = graph(
        dist("app", "1", "lib>=2", "ghost"),
        dist("lib", "2.0", location="/ros"),
        dist("lib", "1.0", shadowed=True),
        dist("ghost", "1", problems=["missing METADATA"]),
    )
    assert [(p.name, p.state) for p in g.problems()] == [("ghost", "missing")]


def test_invalid_requirements_are_collected_not_fatal():
    g = graph(dist("app", "1", "this is not a requirement", "ok-dep"), dist("ok-dep", "1"))
    assert g.invalid == [("app", "this is not a requirement")]
    assert g.problems() == []


names = st.sampled_from(["a", "b", "c", "d", "e"])
requirement = st.builds(
    lambda n, spec, extra, marker: f"{n}{extra}{spec}{marker}",
    names,
    st.sampled_from(["", ">=1", "<2", "==1.0", "!=1.5"]),
    st.sampled_from(["", "[x]"]),
    st.sampled_from(["", "; extra == 'x'", "; python_version > '3'"]),
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        names,
        st.tuples(st.sampled_from(["1.0", "1.5", "2.0"]), st.lists(requirement, max_size=4)),
        max_size=5,
    )
)
def test_any_graph_answers_without_crashing(spec):
    g = graph(*(dist(n, v, *reqs) for n, (v, reqs) in spec.items()))
    base = g.problems(include_extras=False)
    full = g.problems()
    assert set(base) <= set(full)
    assert all(p.via_extra for p in set(full) - set(base))
    for name in spec:
        for path in g.why(name):
            assert path[-1] == name and path[0] in g.roots() and len(set(path)) == len(path)
    assert {t["name"] for t in g.tree()} == set(g.roots())
