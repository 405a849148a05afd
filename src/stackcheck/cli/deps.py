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
    from stackcheck.cli import deps_report

    finish(deps_report.conflicts(source, no_extras=no_extras, as_json=as_json))


@deps.command(short_help="The paths from what you installed down to PACKAGE.")
@click.argument("package")
@source_options("python", "snapshot", importers=False)
@json_option
@no_cache_option
def why(package, source, as_json):
    """Why PACKAGE is installed: the paths from what you installed down to it."""
    from stackcheck.cli.deps_report import echo as _echo
    from stackcheck.cli.deps_report import graph_of
    from stackcheck.errors import InputError
    from stackcheck.models.snapshot import normalize_name

    snapshot, graph = graph_of(source)
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
    from stackcheck.cli import deps_report

    finish(deps_report.tree(source, packages, depth=depth, as_json=as_json))
