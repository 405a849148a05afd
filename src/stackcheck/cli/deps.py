"""``stackcheck deps tree | why PKG | conflicts``: the requirement graph of an environment."""

from __future__ import annotations

import click

from stackcheck.cli.common import emit_json, finish, json_option, no_cache_option, source_options


@click.group()
def deps():
    """The requirement graph of an environment: tree, why PKG, conflicts.

    \b
    Markers and extras are evaluated for the checked interpreter (--python) or the recorded
    one (--snapshot). Shadowed copies are left out, as pip leaves them out.

    \b
    Examples:
      stackcheck deps conflicts                 # like `pip check`, plus extras
      stackcheck deps why packaging             # who pulled it in
      stackcheck deps tree transformers
      stackcheck deps tree --python .venv/bin/python --json
    """


def _graph(source):
    from stackcheck.deps.graph import DepGraph
    from stackcheck.environment import obtain

    snapshot = obtain(source, sections=())
    if snapshot.packages.status != "ok":
        from stackcheck.errors import InputError

        raise InputError(f"{source.value or 'this environment'}: no package list to build the graph from")
    return snapshot, DepGraph(snapshot, cache=True)


@deps.command(short_help="Missing and conflicting requirements (like pip check, plus extras).")
@source_options("python", "snapshot", importers=False)
@click.option("--no-extras", is_flag=True, help="Only base requirements (exactly what `pip check` reports).")
@json_option
@no_cache_option
def conflicts(source, no_extras, as_json):
    """Missing and conflicting requirements; exit 1 when there are any.

    Base requirements give the same findings as `pip check`; requirements switched on by an
    extra that another installed package asks for are listed too, marked with the extra.
    """
    snapshot, graph = _graph(source)
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
                        "message": p.message(),
                    }
                    for p in problems
                ],
                "invalid_requirements": [{"package": k, "requirement": t} for k, t in graph.invalid],
            }
        )
    else:
        for p in problems:
            chain = graph.chain(p.package)
            _echo(p.message() + (f"  (required by {' -> '.join(chain[:-1])})" if len(chain) > 1 else ""))
        for key, text in graph.invalid:
            _echo(f"{key}: unparsable requirement {text!r}")
        if not problems:
            click.echo(f"No broken requirements found ({len(graph.nodes)} distributions).")
    finish(1 if problems else 0)


@deps.command(short_help="The paths from what you installed down to PACKAGE.")
@click.argument("package")
@source_options("python", "snapshot", importers=False)
@json_option
@no_cache_option
def why(package, source, as_json):
    """Why PACKAGE is installed: the paths from what you installed down to it."""
    from stackcheck.errors import InputError
    from stackcheck.models.snapshot import normalize_name

    snapshot, graph = _graph(source)
    key = normalize_name(package)
    if key not in graph.nodes:
        raise InputError(f"{package}: not installed in {snapshot.python.executable or 'this environment'}")
    paths = graph.why(key)
    requirers = sorted({(e.source, e.requirement) for e in graph.requirers.get(key, ())})
    dist = graph.nodes[key]
    if as_json:
        emit_json(
            {
                "package": dist.name,
                "version": dist.version,
                "requested": dist.requested,
                "paths": paths,
                "required_by": [{"package": s, "requirement": r} for s, r in requirers],
            }
        )
    else:
        _echo(f"{dist.name} {dist.version}" + (" (installed on request)" if dist.requested else ""))
        for path in paths:
            _echo("  " + " -> ".join(_label(graph, k) for k in path))
        if not paths:
            click.echo("  no path from an installed root (it sits in a requirement cycle)")
        if requirers:
            click.echo("required directly by:")
            for who, req in requirers:
                _echo(f"  {_label(graph, who)}: {req}")
    finish(0)


def _echo(*lines: str) -> None:
    """Names, versions and requirement texts come from the environment's metadata: one line
    each, control characters shown escaped."""
    from stackcheck.identifiers import printable

    click.echo("\n".join(printable(line) for line in lines))


def _label(graph, key: str) -> str:
    dist = graph.nodes.get(key)
    return f"{dist.name} {dist.version}" if dist else key


@deps.command(short_help="The requirement tree (from PACKAGES, or from the roots).")
@click.argument("packages", nargs=-1)
@source_options("python", "snapshot", importers=False)
@click.option("--depth", type=click.IntRange(min=0), default=None, help="Show at most this many levels.")
@json_option
@no_cache_option
def tree(packages, source, depth, as_json):
    """The requirement tree from PACKAGES (default: what you installed, plus what nothing
    requires). A subtree shown once is marked `(see above)` instead of repeated."""
    from stackcheck.errors import InputError
    from stackcheck.models.snapshot import normalize_name

    snapshot, graph = _graph(source)
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
        _echo(*lines)
    finish(0)


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
