"""``stackcheck schema``: the JSON Schemas of the stable contracts."""

from __future__ import annotations

import click


@click.command()
@click.argument("name", required=False)
@click.option("--write", "directory", metavar="DIR", help="Write every schema as DIR/<name>.schema.json.")
def schema(name, directory):
    """Print the JSON Schema of a contract (snapshot, profile-registry, report, ruleset, result),
    or write them all with --write DIR."""
    from stackcheck.errors import InputError
    from stackcheck.models import schemas

    if directory:
        for path in schemas.write_all(__import__("pathlib").Path(directory)):
            click.echo(str(path))
        return
    known = schemas.contracts()
    if not name:
        for stem in known:
            click.echo(stem)
        return
    if name not in known:
        raise InputError(f"unknown contract {name!r}; one of: {', '.join(known)}")
    click.echo(schemas.render(known[name]), nl=False)
