"""What ``deps conflicts`` and ``deps tree`` print, without importing click: the click commands
(:mod:`stackcheck.cli.deps`) and the start-up path (:func:`stackcheck.cli.startup.deps`, for
the plain arguments) both run these, so the two print the same bytes and exit alike."""

from __future__ import annotations

from stackcheck.cli.output import echo_text, emit_json


def graph_of(source):
    """(snapshot, requirement graph) of ``source`` (None: this environment), the graph from
    the fact cache when it was derived from the same distributions. The platform section is
    probed (under a millisecond): markers on ``platform_release`` hold as pip evaluates them,
    and the graph's key is the one ``preflight`` and ``doctor`` store it under, so either
    warms the other."""
    from stackcheck.deps.graph import DepGraph
    from stackcheck.environment import obtain

    snapshot = obtain(source, sections=("platform",))
    if snapshot.packages.status != "ok":
        from stackcheck.errors import InputError

        where = source.value if source is not None else None
        raise InputError(f"{where or 'this environment'}: no package list to build the graph from")
    return snapshot, DepGraph(snapshot, cache=True)


def conflicts(source, *, no_extras: bool = False, as_json: bool = False) -> int:
    """Print the missing and conflicting requirements; the exit code (1 when there are any)."""
    snapshot, graph = graph_of(source)
    problems = graph.problems(include_extras=not no_extras)
    if as_json:
        emit_json(
            {
                "python": snapshot.python.executable,
                "distributions": len(graph.nodes),
                "conflicts": [
                    {
                        "package": p.package,
                        "version": p.version,
                        "requirement": p.requirement,
                        "name": p.name,
                        "state": p.state,
                        "installed": p.installed,
                        "via_extra": p.via_extra,
                        "required_by": graph.chain(p.package)[:-1],
                        "message": graph.message(p),
                    }
                    for p in problems
                ],
                "invalid_requirements": [{"package": k, "requirement": t} for k, t in graph.invalid],
            }
        )
    else:
        lines = []
        for p in problems:
            chain = graph.chain(p.package)
            lines.append(
                graph.message(p) + (f"  (required by {' -> '.join(chain[:-1])})" if len(chain) > 1 else "")
            )
        lines += [f"{key}: unparsable requirement {text!r}" for key, text in graph.invalid]
        if lines:
            echo(*lines)
        if not problems:
            echo_text(f"No broken requirements found ({len(graph.nodes)} distributions).\n", painted=False)
    return 1 if problems else 0


def tree(source, packages: tuple[str, ...] = (), *, depth: int | None = None, as_json: bool = False) -> int:
    """Print the requirement tree from ``packages`` (default: the roots); the exit code."""
    from stackcheck.errors import InputError
    from stackcheck.models.snapshot import normalize_name

    snapshot, graph = graph_of(source)
    for p in packages:
        if normalize_name(p) not in graph.nodes:
            raise InputError(f"{p}: not installed in {snapshot.python.executable or 'this environment'}")
    trees = graph.tree(list(packages) or None)
    if as_json:
        emit_json({"python": snapshot.python.executable, "tree": trees})
    else:
        lines: list[str] = []
        for node in trees:
            _render(node, 0, depth, lines)
        echo(*lines)
    return 0


def echo(*lines: str) -> None:
    """Names, versions and requirement texts come from the environment's metadata: one line
    each, control characters shown escaped."""
    from stackcheck.identifiers import printable

    echo_text("\n".join(printable(line) for line in lines) + "\n", painted=False)


_STATE = {"missing": " MISSING", "mismatch": " CONFLICT"}


def _render(node: dict, level: int, depth: int | None, out: list[str]) -> None:
    indent = "  " * level
    head = f"{node['name']} {node['version'] or ''}".rstrip()
    if "required" in node:
        head = (
            f"{indent}- {node['name']} [required: {node['required']}, "
            f"installed: {node['version'] or '-'}{_STATE.get(node['state'], '')}]"
        )
        if node.get("via_extra"):
            head += f" (extra {node['via_extra']})"
    if node.get("repeated"):
        head += " (see above)"
    if node.get("cycle"):
        head += " (cycle)"
    out.append(head)
    if depth is not None and level >= depth:
        return
    for child in node.get("requires", ()):
        _render(child, level + 1, depth, out)
