"""``stackcheck profiles``: list, show, validate, document and describe environment profiles."""

from __future__ import annotations

import os

import click

from stackcheck.cli.common import emit_json, finish, json_option, registry_option


@click.group()
def profiles() -> None:
    """List, show, export, validate and document environment profiles.

    \b
    The registry is --registry FILE, else requirements/environment-profiles.json
    found by walking up from the current directory, else the built-in catalog.
    A user registry layers on top of the built-in catalog unless it says
    "include_builtin": false.

    \b
    Examples:
      stackcheck profiles list
      stackcheck profiles show PT-SFT-CUDA
      stackcheck profiles export PT-SFT-CUDA -o requirements/environment-profiles.json
      stackcheck profiles validate requirements/environment-profiles.json
      stackcheck profiles docs --output docs/profiles-index.md
    """


@profiles.command("list")
@registry_option
@click.option(
    "--all", "include_bases", is_flag=True, help="Also list the hidden base layers (category 'base')."
)
@json_option
def list_(registry: str | None, include_bases: bool, as_json: bool) -> None:
    """Table of profiles: ID, category, evidence scope, title."""
    from stackcheck.catalog import load_catalog

    catalog = load_catalog(registry)
    rows = catalog.summaries(include_bases=include_bases)
    if as_json:
        emit_json({"source": catalog.source, "digest": catalog.digest, "profiles": rows})
        return
    click.echo(f"profiles from {catalog.source} ({catalog.digest[:19]}…)")
    from stackcheck.render.profiles import profile_table

    click.echo("\n".join(profile_table(rows)))


@profiles.command()
@click.argument("profile_id", metavar="ID")
@registry_option
@click.option("--raw", is_flag=True, help="The profile as written, before its layers are merged.")
@json_option
def show(profile_id: str, registry: str | None, raw: bool, as_json: bool) -> None:
    """One profile, resolved through its layers (--raw: as written)."""
    from stackcheck.catalog import load_catalog

    catalog = load_catalog(registry)
    profile = catalog.raw(profile_id) if raw else catalog.get(profile_id)
    if as_json:
        emit_json(profile)
        if not raw:
            from stackcheck.shellcmd import command

            export = command("stackcheck", "profiles", "export", profile_id)
            click.echo(
                "stackcheck: note: this is the resolved profile (`layers` is filled by the resolver); "
                f"`{export}` writes an entry a registry accepts",
                err=True,
            )
        return
    from stackcheck.render.profiles import profile_text

    click.echo(profile_text(profile, catalog.file(profile_id), raw), nl=False)


@profiles.command()
@click.argument("profile_ids", nargs=-1, required=True, metavar="ID...")
@registry_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["registry", "requirements", "pyproject", "conda", "pixi"]),
    default="registry",
    show_default=True,
    help="registry: a registry file (--registry FILE, requirements/environment-profiles.json) "
    "holding the profiles; requirements (pip), pyproject (a uv project), conda (environment.yml), "
    "pixi (pixi.toml): one profile, with its torch index in that format's own way.",
)
@click.option(
    "--cuda",
    default="auto",
    show_default=True,
    metavar="auto|cpu|cuNNN",
    help="The torch build of a requirements/pyproject/conda/pixi export (auto: CPU for a CPU profile, "
    "else PyPI's default CUDA build when the profile allows it).",
)
@click.option(
    "-o", "--output", metavar="FILE", help="Write to FILE (atomically) and print its path, instead of stdout."
)
def export(
    profile_ids: tuple[str, ...], registry: str | None, fmt: str, cuda: str, output: str | None
) -> None:
    """Export resolved profiles as a registry entry that --registry accepts, or one profile
    as a requirements file, a uv pyproject.toml, a conda environment.yml or a pixi.toml.

    Each profile is flattened: its layers merged in, `extends` and `layers` left out. The
    registry keeps the built-in catalog beneath it (profiles it names in `use_instead`).

    \b
    Examples:
      stackcheck profiles export TRAIN-CPU -o requirements/environment-profiles.json
      stackcheck profiles export PT-SFT-CUDA > ours.json && stackcheck profiles validate ours.json
      stackcheck profiles export TRAIN-CPU --format requirements -o requirements.txt
      stackcheck profiles export PT-SFT-CUDA --format conda --cuda cu126 -o environment.yml
    """
    import msgspec

    from stackcheck.catalog import load_catalog
    from stackcheck.redaction import redact_value

    catalog = load_catalog(registry)
    if fmt != "registry":
        data = _export_format(catalog, profile_ids, fmt, cuda).encode()
    else:
        from stackcheck.catalog.export import export_registry

        # a requirement may name a private index with its credentials: they never leave the process
        doc = redact_value(export_registry(catalog, list(profile_ids)))
        data = msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"
    if output is None:
        click.echo(data.decode(), nl=False)
        return
    from stackcheck.fileio import atomic_write, cannot_write

    try:
        click.echo(str(atomic_write(output, data)))
    except OSError as exc:
        raise cannot_write(output, "profile registry", exc) from None


def _export_format(catalog, profile_ids: tuple[str, ...], fmt: str, cuda: str) -> str:
    from stackcheck.errors import InputError
    from stackcheck.knowledge import load_knowledge
    from stackcheck.provision.export import export_profile
    from stackcheck.provision.plan import choose_torch
    from stackcheck.redaction import redact_value

    if len(profile_ids) != 1:
        raise InputError(f"--format {fmt}: exports one profile (got {len(profile_ids)})")
    profile = catalog.get(profile_ids[0])
    choice = choose_torch(profile, None, load_knowledge(), cuda)
    # a requirement may name a private index with its credentials: they never leave the process
    return export_profile(redact_value(profile), choice, fmt)


@profiles.command()
@click.argument("file", required=False, metavar="[FILE]")
@json_option
def validate(file: str | None, as_json: bool) -> None:
    """Check a registry; print each problem as `file: profile.field: what is wrong`.

    FILE defaults to the registry `profiles list` would use. Exit 0 when valid, 1 when
    there are problems, 2 when the file cannot be read or is not JSON.
    """
    from stackcheck.catalog import find_registry
    from stackcheck.catalog import validate as run_validation
    from stackcheck.fileio import source_name

    source = source_name(file) if file else str(find_registry() or "built-in")
    problems = run_validation(file)
    if as_json:
        emit_json({"source": source, "valid": not problems, "problems": problems})
    else:
        for p in problems:
            click.echo(str(p))
        if problems:
            click.echo(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in {source}", err=True)
        else:
            click.echo(f"{source}: valid")
    finish(1 if problems else 0)


@profiles.command()
@registry_option
@click.option(
    "-o", "--output", metavar="FILE", help="Write the index to FILE (atomically) instead of stdout."
)
def docs(registry: str | None, output: str | None) -> None:
    """Markdown index of the registry (ID, purpose, device scope, entry links).

    Generated from the registry so documentation never drifts. Registry links are
    repository-relative; with --output (run from the repository root) they are rewritten
    relative to FILE.
    """
    from stackcheck.catalog import load_catalog
    from stackcheck.render.profiles import index_markdown

    catalog = load_catalog(registry)
    if output is None:
        click.echo(index_markdown(catalog), nl=False)
        return
    from stackcheck.fileio import atomic_write

    relative_to = os.path.relpath(os.path.dirname(os.path.abspath(output)))
    atomic_write(output, index_markdown(catalog, relative_to=relative_to.replace(os.sep, "/")))
    click.echo(f"wrote {output}", err=True)


@profiles.command()
def schema() -> None:
    """JSON Schema of the registry file (requirements/environment-profiles.json)."""
    from stackcheck.models.profile import Registry
    from stackcheck.models.schemas import schema_for

    emit_json(schema_for(Registry))
