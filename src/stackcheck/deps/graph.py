"""The requirement graph of an environment: who requires what, what is broken, and why a
package is there.

Nodes are the importable distributions (shadowed copies and dist-infos without METADATA are
left out, as ``pip`` leaves them out). Edges are the ``Requires-Dist`` entries whose marker
holds for the checked interpreter. Extras are propagated: when ``a`` requires ``b[x]``, the
requirements of ``b`` guarded by ``extra == "x"`` become edges too. ``pip check`` does not do
that, so every problem says whether it comes from an extra (``via_extra``); the problems with
``via_extra is None`` are exactly the ones ``pip check`` reports.
"""

from __future__ import annotations

import os
import re
from collections import deque
from functools import lru_cache

import msgspec

from stackcheck.cachedir import cache_root
from stackcheck.deps.index import DistIndex, marker_environment, parse_requirement, parse_version
from stackcheck.models.snapshot import Distribution, Snapshot, normalize_name


class Edge(msgspec.Struct, frozen=True, array_like=True):
    """One applicable requirement of ``source`` on project ``target`` (a row of the cached
    graph: msgspec decodes and checks it in one step)."""

    source: str  # normalized requirer
    target: str  # normalized required project
    requirement: str  # the Requires-Dist text
    state: str  # satisfied | missing | mismatch
    installed: str | None  # version of target, when installed
    via_extra: str | None  # the extra of ``source`` that brings this edge, None for a base requirement


class Problem(msgspec.Struct, frozen=True):
    """A broken requirement, worded as ``pip check`` words it."""

    package: str  # requirer, as its METADATA spells it
    version: str
    requirement: str
    name: str  # normalized required project
    state: str  # missing | mismatch
    installed: str | None
    via_extra: str | None

    def message(self, shown: str | None = None) -> str:
        """``shown``: the requirement as :func:`shown_requirement` words it, when known."""
        head = f"{self.package} {self.version}"
        if self.via_extra:
            head += f" (extra [{self.via_extra}])"
        if self.state == "missing":
            return f"{head} requires {self.name}, which is not installed."
        shown = shown if shown is not None else shown_requirement(self.requirement)
        return f"{head} has requirement {shown}, but you have {self.name} {self.installed}."


def shown_requirement(text: str) -> str:
    """A requirement as ``pip check`` prints it: the parsed, normalized form."""
    return str(parse_requirement(text) or text)


class DepGraph:
    """Requirement graph of one snapshot, built once and queried by checks and ``deps``.

    With ``cache``, the edges come from the fact cache (:mod:`stackcheck.factcache`) when they
    were derived from the same distribution set, marker environment and code (see
    :func:`graph_key`), and are stored there after a build: a warm run parses no requirement."""

    def __init__(self, snapshot: Snapshot, index: DistIndex | None = None, *, cache: bool = False):
        self.index = index or DistIndex(snapshot)
        self.nodes: dict[str, Distribution] = {
            key: dist
            for key, dist in self.index.by_name.items()
            if not any(
                p.startswith("missing METADATA") or p.startswith("missing PKG-INFO") for p in dist.problems
            )
        }
        self.extras: dict[str, set[str]] = {key: set() for key in self.nodes}
        self.edges: dict[str, list[Edge]] = {}
        self.invalid: list[tuple[str, str]] = []  # (requirer, unparsable Requires-Dist)
        self._marker_cache: dict[tuple[str, str], bool] = {}
        self._specs: dict[str, str] = {}  # requirement text → its shown specifier (cached facts)
        self._shown: dict[str, str] = {}  # requirement text → pip's wording of it (cached facts)
        # no cache directory (STACKCHECK_NO_CACHE, --no-cache): no key to derive, nothing to keep
        root = cache_root() if cache else None
        # derived once: the miss that builds stores under the key it looked for
        where = (root, _cache_name(snapshot), graph_key(snapshot)) if root is not None else None
        self.from_cache = where is not None and self._load(*where)  # read, not derived
        if not self.from_cache:
            self._build()
            if where is not None:
                self._store(*where)
        self.requirers: dict[str, list[Edge]] = {}
        for edges in self.edges.values():
            for e in edges:
                self.requirers.setdefault(e.target, []).append(e)

    # ----- construction -----
    def _build(self) -> None:
        # A worklist to a fixed point: a node is (re)read when the extras asked of it grow,
        # since its edges depend only on its own extras. Real environments settle after
        # re-reading a handful of nodes.
        pending = deque(self.nodes)
        queued = set(self.nodes)
        while pending:
            key = pending.popleft()
            queued.discard(key)
            edges = []
            for edge, extras in self._applicable(key):
                edges.append(edge)
                wanted = self.extras.get(edge.target)
                if wanted is not None and not extras <= wanted:
                    wanted |= extras
                    if edge.target not in queued:
                        pending.append(edge.target)
                        queued.add(edge.target)
            self.edges[key] = edges

    def _applicable(self, key: str):
        dist = self.nodes[key]
        active = tuple(sorted(normalize_name(e) for e in self.extras[key]))
        for text in dist.requires:
            gate = extra_gate(text)
            if gate is not None and gate not in active:
                continue  # needs an extra nobody asks for: no need to parse it
            req = parse_requirement(text)
            if req is None:
                if (key, text) not in self.invalid:
                    self.invalid.append((key, text))
                continue
            via = None
            if req.marker is not None and not self._holds(req, text, ""):
                via = next((e for e in active if self._holds(req, text, e)), None)
                if via is None:
                    continue
            target = normalize_name(req.name)
            dep = self.nodes.get(target)
            if dep is None:
                state, installed = "missing", None
            else:
                version = parse_version(dep.version)
                fits = not req.specifier or (
                    version is not None and req.specifier.contains(version, prereleases=True)
                )
                state, installed = ("satisfied" if fits else "mismatch"), dep.version
            yield Edge(key, target, text, state, installed, via), set(req.extras)

    # ----- the fact cache -----
    def _load(self, root: str, name: str, key: str) -> bool:
        """The edges, extras and invalid requirements from the fact cache; False (nothing
        changed) when there are none for this key or they are not what a build writes."""
        from stackcheck import factcache

        facts = factcache.load(root, name, key, _GraphFacts)
        if facts is None or list(facts.edges) != list(self.nodes) or not set(self.nodes) <= set(facts.extras):
            return False
        for key, edges in facts.edges.items():
            for e in edges:
                if e.source != key or e.state not in _STATES or e.requirement not in facts.specs:
                    return False
        self.edges, self.invalid, self._specs = facts.edges, facts.invalid, facts.specs
        self._shown = facts.shown
        self.extras = {key: set(facts.extras[key]) for key in self.nodes}
        return True

    def _store(self, root: str, name: str, key: str) -> None:
        from stackcheck import factcache

        facts = _GraphFacts(
            edges=self.edges,
            extras={key: sorted(extras) for key, extras in self.extras.items()},
            invalid=self.invalid,
            specs={e.requirement: self.spec(e.requirement) for edges in self.edges.values() for e in edges},
            shown={
                e.requirement: self.shown(e.requirement)
                for edges in self.edges.values()
                for e in edges
                if e.state == "mismatch"
            },
        )
        factcache.store(root, name, key, msgspec.to_builtins(facts))

    def spec(self, requirement: str) -> str:
        """How ``deps tree`` shows a requirement: ``[extras] specifier`` or ``any``."""
        found = self._specs.get(requirement)
        if found is None:
            found = self._specs[requirement] = _spec_of(requirement)
        return found

    def shown(self, requirement: str) -> str:
        """How ``pip check`` words a requirement (:func:`shown_requirement`), kept with the graph."""
        found = self._shown.get(requirement)
        if found is None:
            found = self._shown[requirement] = shown_requirement(requirement)
        return found

    def message(self, problem: Problem) -> str:
        """:meth:`Problem.message` with the requirement's wording from the graph's facts (a
        warm run parses no requirement)."""
        return problem.message(self.shown(problem.requirement) if problem.state == "mismatch" else None)

    def _holds(self, req, text: str, extra: str) -> bool:
        key = (text, extra)
        if key not in self._marker_cache:
            self._marker_cache[key] = self.index.marker_applies(req, (extra,) if extra else ())
        return self._marker_cache[key]

    # ----- queries -----
    def problems(self, *, include_extras: bool = True) -> list[Problem]:
        """Every missing or mismatched requirement, sorted like ``pip check`` sorts them."""
        out = []
        for key, edges in self.edges.items():
            dist = self.nodes[key]
            for e in edges:
                if e.state == "satisfied" or (e.via_extra and not include_extras):
                    continue
                out.append(
                    Problem(
                        dist.name, dist.version, e.requirement, e.target, e.state, e.installed, e.via_extra
                    )
                )
        return sorted(out, key=lambda p: (p.state != "missing", normalize_name(p.package), p.requirement))

    def roots(self) -> list[str]:
        """What the user installed: REQUESTED distributions, plus those nothing requires."""
        return sorted(k for k, d in self.nodes.items() if d.requested or k not in self.requirers)

    def why(self, name: str, limit: int = 20) -> list[list[str]]:
        """Shortest requirement paths from a root to ``name`` (root first), at most ``limit``."""
        target = normalize_name(name)
        roots = set(self.roots())
        paths: list[list[str]] = [[target]] if target in roots else []
        queue = deque([[target]])
        budget = 20000  # path expansions; real graphs finish far below this
        while queue and len(paths) < limit and budget:
            budget -= 1
            path = queue.popleft()
            for source in sorted({e.source for e in self.requirers.get(path[0], ())}):
                if source in path:
                    continue  # a requirement cycle
                longer = [source, *path]
                if source in roots:
                    paths.append(longer)
                    if len(paths) >= limit:
                        break
                else:
                    queue.append(longer)
        return paths

    def chain(self, name: str) -> list[str]:
        """One shortest path from a root down to ``name`` (just ``[name]`` for a root)."""
        paths = self.why(name, limit=1)
        return paths[0] if paths else [normalize_name(name)]

    def tree(self, roots: list[str] | None = None) -> list[dict]:
        """Nested requirement trees; a subtree shown once is referenced, not repeated."""
        shown: set[str] = set()

        def node(key: str, edge: Edge | None, stack: tuple[str, ...]) -> dict:
            dist = self.nodes.get(key)
            item: dict = {"name": dist.name if dist else key, "version": dist.version if dist else None}
            if edge is not None:
                item["required"] = self.spec(edge.requirement)
                item["state"] = edge.state
                if edge.via_extra:
                    item["via_extra"] = edge.via_extra
            if dist is None:
                return item
            if key in stack:
                item["cycle"] = True
                return item
            if key in shown:
                item["repeated"] = True
                return item
            shown.add(key)
            item["requires"] = [
                node(e.target, e, stack + (key,))
                for e in sorted(self.edges.get(key, ()), key=lambda e: e.target)
            ]
            return item

        keys = [normalize_name(r) for r in roots] if roots else self.roots()
        return [node(k, None, ()) for k in keys]


def graph_key(snapshot: Snapshot) -> str:
    """The fingerprint a graph is derived under: every distribution's name, version,
    Requires-Dist, shadowing and problems (in sys.path order), the marker environment of the
    checked interpreter, and the deriving code (stackcheck's version and the stat of the
    modules that build the graph and of packaging's, so an edited checkout or an upgraded
    packaging never reads an older graph)."""
    from stackcheck import __version__, factcache

    dists = [(d.name, d.version, d.requires, d.shadowed, d.problems) for d in snapshot.packages.distributions]
    env = sorted(marker_environment(snapshot).items())
    return factcache.digest(__version__, code_stamp(), env, msgspec.json.encode(dists))


@lru_cache(maxsize=1)
def code_stamp() -> list:
    """The stat of the modules that derive the graph (found, never imported): part of the
    graph key here and of the code check of ``deps``' stored answers (cli/answers.py)."""
    from importlib.util import find_spec

    import stackcheck.deps.index as index_module
    import stackcheck.requirements as requirements_module

    # found, not imported (a warm run loads no packaging): an upgrade rewrites its __init__.py
    found = [find_spec(name) for name in ("stackcheck.versions", "packaging")]
    ours = (__file__, index_module.__file__, requirements_module.__file__)
    out: list = []
    for path in (*ours, *(spec.origin if spec else None for spec in found)):
        try:
            st = os.stat(path or "")
            out.append([path, st.st_mtime_ns, st.st_size])
        except OSError:
            out.append([path])
    return out


_STATES = frozenset({"satisfied", "missing", "mismatch"})


class _GraphFacts(msgspec.Struct):
    """What the fact cache keeps of a graph: what a build derives from the distributions."""

    edges: dict[str, list[Edge]]
    extras: dict[str, list[str]]
    invalid: list[tuple[str, str]]
    specs: dict[str, str]  # requirement text → how ``deps tree`` shows it
    shown: dict[str, str]  # requirement text of a mismatch → how ``pip check`` words it


def _cache_name(snapshot: Snapshot) -> str:
    """One graph file per checked interpreter (a changed environment overwrites its own)."""
    from stackcheck import factcache

    where = factcache.digest(snapshot.python.executable, snapshot.python.prefix)[:20]
    return f"facts/depgraph-{where}.json"


_OR = re.compile(r"\bor\b")
_EXTRA_CLAUSE = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


@lru_cache(maxsize=8192)
def extra_gate(text: str) -> str | None:
    """The extra a requirement is conditional on when its marker is a conjunction holding one
    ``extra == "x"`` clause — most Requires-Dist of big projects (transformers has hundreds).
    Such a requirement is skipped unparsed unless someone asks for that extra."""
    _, semi, marker = text.partition(";")
    if not semi or "extra" not in marker or ("or" in marker and _OR.search(marker)):  # a substring test first
        return None
    found = _EXTRA_CLAUSE.findall(marker)
    return normalize_name(found[0]) if len(found) == 1 else None


def _spec_of(text: str) -> str:
    req = parse_requirement(text)
    if req is None:
        return text
    spec = str(req.specifier) or "any"
    return f"[{','.join(sorted(req.extras))}] {spec}" if req.extras else spec
