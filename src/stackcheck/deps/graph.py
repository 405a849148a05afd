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

import re
from collections import deque
from dataclasses import dataclass
from functools import lru_cache

from stackcheck.deps.index import DistIndex, parse_requirement, parse_version
from stackcheck.models.snapshot import Distribution, Snapshot, normalize_name


@dataclass(frozen=True)
class Edge:
    """One applicable requirement of ``source`` on project ``target``."""

    source: str  # normalized requirer
    target: str  # normalized required project
    requirement: str  # the Requires-Dist text
    state: str  # satisfied | missing | mismatch
    installed: str | None  # version of target, when installed
    via_extra: str | None  # the extra of ``source`` that brings this edge, None for a base requirement


@dataclass(frozen=True)
class Problem:
    """A broken requirement, worded as ``pip check`` words it."""

    package: str  # requirer, as its METADATA spells it
    version: str
    requirement: str
    name: str  # normalized required project
    state: str  # missing | mismatch
    installed: str | None
    via_extra: str | None

    def message(self) -> str:
        head = f"{self.package} {self.version}"
        if self.via_extra:
            head += f" (extra [{self.via_extra}])"
        if self.state == "missing":
            return f"{head} requires {self.name}, which is not installed."
        req = parse_requirement(self.requirement)  # pip prints the parsed, normalized form
        return f"{head} has requirement {req or self.requirement}, but you have {self.name} {self.installed}."


class DepGraph:
    """Requirement graph of one snapshot, built once and queried by checks and ``deps``."""

    def __init__(self, snapshot: Snapshot, index: DistIndex | None = None):
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
        self._build()
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
                item["required"] = _spec_of(edge.requirement)
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


_OR = re.compile(r"\bor\b")
_EXTRA_CLAUSE = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


@lru_cache(maxsize=8192)
def extra_gate(text: str) -> str | None:
    """The extra a requirement is conditional on when its marker is a conjunction holding one
    ``extra == "x"`` clause — most Requires-Dist of big projects (transformers has hundreds).
    Such a requirement is skipped unparsed unless someone asks for that extra."""
    _, semi, marker = text.partition(";")
    if not semi or "extra" not in marker or _OR.search(marker):
        return None
    found = _EXTRA_CLAUSE.findall(marker)
    return normalize_name(found[0]) if len(found) == 1 else None


def _spec_of(text: str) -> str:
    req = parse_requirement(text)
    if req is None:
        return text
    spec = str(req.specifier) or "any"
    return f"[{','.join(sorted(req.extras))}] {spec}" if req.extras else spec
