"""The dependency graph from the fact cache is the graph a build derives, and it is served only
under the key it was derived under: the distribution set, the marker environment, and the
code (stackcheck's version and the deriving modules)."""

from __future__ import annotations

import json

import msgspec
import pytest

import stackcheck
from stackcheck.deps import graph as G
from stackcheck.deps.graph import DepGraph
from tests.factories import SNAPSHOTS, dist, make_snapshot


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("STACKCHECK_NO_CACHE", raising=False)
    return tmp_path / "cache"


def facts(graph: DepGraph):
    return (
        graph.edges,
        graph.extras,
        graph.invalid,
        graph.problems(),
        graph.problems(include_extras=False),
        [graph.message(p) for p in graph.problems()],
        graph.roots(),
        graph.tree(),
        {k: graph.why(k) for k in graph.nodes},
    )


@pytest.mark.parametrize("path", sorted(SNAPSHOTS.glob("*.json")), ids=lambda p: p.stem)
def test_a_cached_graph_is_the_built_one(path):
    from stackcheck.environment import load_snapshot

    snap = load_snapshot(str(path))
    built = DepGraph(snap)
    stored = DepGraph(snap, cache=True)
    read = DepGraph(snap, cache=True)
    assert (built.from_cache, stored.from_cache, read.from_cache) == (False, False, True)
    assert facts(read) == facts(built) == facts(stored)


def poisoned(cache) -> dict:
    """The cached graph file with a requirement edited into a conflict (the key kept): a graph
    that is served from it says so, one that is derived again does not."""
    [path] = (cache / "facts").glob("depgraph-*.json")
    data = json.loads(path.read_text())
    row = data["entries"]["edges"]["alpha"][0]
    row[3], row[4] = "mismatch", "0.1"
    path.write_text(json.dumps(data))
    return data


def env_snapshot(python: str = "3.12.3", *extra):
    return make_snapshot(dist("alpha", "1.0", "beta>=2"), dist("beta", "2.0"), *extra, python=python)


def test_the_cache_is_used_while_the_key_holds(cache):
    assert DepGraph(env_snapshot(), cache=True).problems() == []
    poisoned(cache)
    [p] = DepGraph(env_snapshot(), cache=True).problems()
    assert (p.state, p.installed) == ("mismatch", "0.1")
    assert DepGraph(env_snapshot()).problems() == [], "without cache=True the file is never read"


@pytest.mark.parametrize("path", sorted(SNAPSHOTS.glob("*.json")), ids=lambda p: p.stem)
def test_without_a_cache_directory_no_key_is_derived_and_the_graph_is_the_built_one(path, cache, monkeypatch):
    from stackcheck.environment import load_snapshot

    snap = load_snapshot(str(path))
    built = DepGraph(snap)
    monkeypatch.setenv("STACKCHECK_NO_CACHE", "1")

    def no_key(snapshot):
        raise AssertionError("a graph key derived with no cache directory")

    monkeypatch.setattr(G, "graph_key", no_key)
    off = DepGraph(snap, cache=True)
    assert not off.from_cache and facts(off) == facts(built)
    assert {e.requirement: off.spec(e.requirement) for es in off.edges.values() for e in es} == {
        e.requirement: built.spec(e.requirement) for es in built.edges.values() for e in es
    }
    assert not cache.exists(), "nothing is kept"


def test_another_stackcheck_version_derives_again(cache, monkeypatch):
    DepGraph(env_snapshot(), cache=True)
    poisoned(cache)
    monkeypatch.setattr(stackcheck, "__version__", stackcheck.__version__ + ".post1")
    graph = DepGraph(env_snapshot(), cache=True)
    assert (graph.from_cache, graph.problems()) == (False, [])


def test_edited_deriving_code_derives_again(cache, monkeypatch):
    DepGraph(env_snapshot(), cache=True)
    poisoned(cache)
    stamp = G.code_stamp()
    import packaging

    assert [p for p, *_ in stamp] == [
        G.__file__,
        *(m.__file__ for m in (stackcheck.deps.index, stackcheck.requirements, stackcheck.versions)),
        packaging.__file__,
    ]
    monkeypatch.setattr(G, "code_stamp", lambda: [[stamp[0][0], stamp[0][1] + 1, stamp[0][2]], *stamp[1:]])
    graph = DepGraph(env_snapshot(), cache=True)
    assert (graph.from_cache, graph.problems()) == (False, [])


def test_another_marker_environment_derives_again(cache):
    """Same distributions, another Python: a marker may hold there that did not here."""
    marked = dist("gamma", "1.0", 'beta>=3; python_version >= "3.13"')
    DepGraph(env_snapshot("3.12.3", marked), cache=True)
    assert DepGraph(env_snapshot("3.12.3", marked), cache=True).from_cache
    [p] = DepGraph(env_snapshot("3.13.1", marked), cache=True).problems()
    assert (p.package, p.requirement, p.installed) == ("gamma", 'beta>=3; python_version >= "3.13"', "2.0")


@pytest.mark.parametrize(
    "change",
    [
        lambda d: setattr(d[1], "version", "2.0.1"),
        lambda d: d[0].requires.append("delta"),
        lambda d: setattr(d[1], "shadowed", True),
        lambda d: d[1].problems.append("missing METADATA"),
        lambda d: d.append(dist("delta", "1.0")),
        lambda d: d.pop(1),
    ],
    ids=["version", "requirement", "shadowed", "problems", "added", "removed"],
)
def test_any_change_to_the_distribution_set_derives_again(cache, change):
    DepGraph(env_snapshot(), cache=True)
    poisoned(cache)
    snap = env_snapshot()
    change(snap.packages.distributions)
    graph = DepGraph(snap, cache=True)
    assert not graph.from_cache
    assert facts(graph) == facts(DepGraph(msgspec.convert(msgspec.to_builtins(snap), type(snap))))


@pytest.mark.parametrize(
    "edit",
    [
        lambda e: e["edges"].__setitem__("alpha", [["alpha", "beta", "beta>=2", "broken", None, None]]),
        lambda e: e["edges"].__setitem__("alpha", [["alpha", "beta", "beta>=2"]]),
        lambda e: e["edges"].__setitem__("alpha", [["alpha", 1, "beta>=2", "satisfied", "2.0", None]]),
        lambda e: e["edges"].__setitem__("alpha", [["beta", "beta", "beta>=2", "satisfied", "2.0", None]]),
        lambda e: e["edges"].__setitem__("alpha", [["alpha", "beta", "beta>=9", "satisfied", "2.0", None]]),
        lambda e: e["edges"].pop("beta"),
        lambda e: e.pop("extras"),
        lambda e: e["extras"].pop("alpha"),
        lambda e: e.__setitem__("invalid", [["x"]]),
        lambda e: e.__setitem__("edges", []),
        lambda e: e.pop("specs"),
        lambda e: e.pop("shown"),
        lambda e: e.__setitem__("shown", {"beta>=2": 2}),
    ],
    ids=[
        "state",
        "short-row",
        "target-type",
        "other-source",
        "no-spec",
        "node-missing",
        "no-extras",
        "extras-of-a-node",
        "invalid-shape",
        "edges-list",
        "no-specs",
        "no-shown",
        "shown-type",
    ],
)
def test_a_cached_graph_of_another_shape_is_derived_again(cache, edit):
    DepGraph(env_snapshot(), cache=True)
    [path] = (cache / "facts").glob("depgraph-*.json")
    data = json.loads(path.read_text())
    edit(data["entries"])
    path.write_text(json.dumps(data))
    graph = DepGraph(env_snapshot(), cache=True)
    assert not graph.from_cache and facts(graph) == facts(DepGraph(env_snapshot()))


def test_a_warm_graph_words_its_conflicts_from_the_cache_and_imports_no_packaging(cache, tmp_path):
    """pip's wording of a mismatched requirement is kept with the graph: a warm ``deps`` run
    prints it without parsing a requirement (and without importing packaging at all)."""
    import subprocess
    import sys

    snap = make_snapshot(dist("alpha", "1.0", "Beta >= 3"), dist("beta", "2.0"))
    built = DepGraph(snap)
    [problem] = built.problems()
    expected = "alpha 1.0 has requirement Beta>=3, but you have beta 2.0."
    assert built.message(problem) == problem.message() == expected
    DepGraph(snap, cache=True)
    [path] = (cache / "facts").glob("depgraph-*.json")
    data = json.loads(path.read_text())
    assert data["entries"]["shown"] == {"Beta >= 3": "Beta>=3"}
    data["entries"]["shown"]["Beta >= 3"] = "Beta>=3 (from the cache)"
    path.write_text(json.dumps(data))
    read = DepGraph(snap, cache=True)
    assert read.from_cache and read.message(read.problems()[0]) == expected.replace(
        "3,", "3 (from the cache),"
    )
    snapshot_file = tmp_path / "snap.json"
    snapshot_file.write_bytes(msgspec.json.encode(snap))
    code = (
        "import sys\nfrom stackcheck.environment import load_snapshot\n"
        "from stackcheck.deps.graph import DepGraph\n"
        f"g = DepGraph(load_snapshot({str(snapshot_file)!r}), cache=True)\n"
        "print(g.from_cache, [g.message(p) for p in g.problems()], g.tree()[0]['requires'][0]['required'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('packaging') or m == 'stackcheck.versions'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.splitlines() == [
        "True ['alpha 1.0 has requirement Beta>=3 (from the cache), but you have beta 2.0.'] >=3",
        "[]",
    ]
