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
    click.echo("\n".join(profile_table(rows)))


def profile_table(rows) -> list[str]:
    """The profile listing of ``profiles list`` and ``preflight --list-profiles``: a header,
    then one aligned row per profile (ID, category, evidence scope, title)."""
    table = [("ID", "CATEGORY", "SCOPE", "TITLE")]
    table += [(r.id, r.category, r.evidence_scope, r.title) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(row[:3], widths)) + "  " + row[3] for row in table]


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
    click.echo(_render(profile, catalog.file(profile_id), raw), nl=False)


def _render(profile, file: str, raw: bool) -> str:
    from stackcheck import versions
    from stackcheck.catalog.docs import device_scope

    out = [f"{profile.id}: {profile.title}" if profile.title else profile.id]
    if profile.purpose:
        out.append(f"  {profile.purpose}")
    out.append(f"  defined in {file}")
    default_scope = raw and profile.evidence_scope == "cpu-smoke"
    rows = [
        ("category", profile.category or "–"),
        (
            "evidence",
            "(default: cpu-smoke; a parent's scope wins)" if default_scope else profile.evidence_scope,
        ),
    ]
    if raw:
        rows.append(("extends", ", ".join(profile.extends) or "–"))
    else:
        rows.append(("layers", " → ".join(profile.layers)))
    rows.append(
        (
            "python",
            "(inherited)" if raw and profile.python is None else versions.describe(profile.python or ""),
        )
    )
    rows.append(("device", "(inherited)" if raw and profile.gpu is None else device_scope(profile)))
    if profile.platform:
        p = profile.platform
        bits = [", ".join(p.os) or "any OS", ", ".join(p.arch) or "any arch"] + (
            [f"glibc ≥ {p.min_glibc}"] if p.min_glibc else []
        )
        rows.append(("platform", "; ".join(bits)))
    out += [f"  {k:<9} {v}" for k, v in rows]
    for title, items in (
        ("requirements", profile.requirements),
        ("constraints (judged when installed)", profile.constraints),
    ):
        if items:
            out.append(f"{title}:")
            out += [f"  {r}" for r in items]
    if profile.required_modules:
        out.append("importable modules: " + ", ".join(profile.required_modules))
    if profile.forbidden:
        out.append("forbidden:")
        for f in profile.forbidden:
            instead = f" (use {f.use_instead})" if f.use_instead else ""
            out.append(f"  {f.requirement}{instead}: {f.reason}")
    links = [
        (k, v)
        for k, v in (("quickstart", profile.docs.quickstart), ("assets", profile.docs.experiment_assets))
        if v
    ]
    links += sorted(profile.docs.extra.items())
    if links:
        out.append("docs: " + ", ".join(f"{k} {v}" for k, v in links))
    if profile.notes:
        out.append("notes:")
        out += [f"  - {n}" for n in profile.notes]
    return "\n".join(out) + "\n"


@profiles.command()
@click.argument("profile_ids", nargs=-1, required=True, metavar="ID...")
@registry_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["registry"]),
    default="registry",
    show_default=True,
    help="registry: a registry file (--registry FILE, requirements/environment-profiles.json) "
    "holding the profiles.",
)
@click.option(
    "-o", "--output", metavar="FILE", help="Write to FILE (atomically) and print its path, instead of stdout."
)
def export(profile_ids: tuple[str, ...], registry: str | None, fmt: str, output: str | None) -> None:
    """Export resolved profiles as a registry entry that --registry accepts.

    Each profile is flattened: its layers merged in, `extends` and `layers` left out. The
    registry keeps the built-in catalog beneath it (profiles it names in `use_instead`).

    \b
    Examples:
      stackcheck profiles export TRAIN-CPU -o requirements/environment-profiles.json
      stackcheck profiles export PT-SFT-CUDA > ours.json && stackcheck profiles validate ours.json
    """
    import msgspec

    from stackcheck.catalog import load_catalog
    from stackcheck.catalog.export import export_registry

    doc = export_registry(load_catalog(registry), list(profile_ids))
    data = msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"
    if output is None:
        click.echo(data.decode(), nl=False)
        return
    from stackcheck.fileio import atomic_write, cannot_write

    try:
        click.echo(str(atomic_write(output, data)))
    except OSError as exc:
        raise cannot_write(output, "profile registry", exc) from None


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
    from stackcheck.catalog.docs import render_index

    catalog = load_catalog(registry)
    if output is None:
        click.echo(render_index(catalog), nl=False)
        return
    from stackcheck.fileio import atomic_write

    relative_to = os.path.relpath(os.path.dirname(os.path.abspath(output)))
    atomic_write(output, render_index(catalog, relative_to=relative_to.replace(os.sep, "/")))
    click.echo(f"wrote {output}", err=True)


@profiles.command()
def schema() -> None:
    """JSON Schema of the registry file (requirements/environment-profiles.json)."""
    from stackcheck.models.profile import Registry
    from stackcheck.models.schemas import schema_for

    emit_json(schema_for(Registry))
