"""``stackcheck explain ID``: what a check looks at, why it matters, how to fix it."""

from __future__ import annotations

import click

from stackcheck.cli.common import emit_json, finish, json_option, one_output, rules_option


@click.command()
@click.argument("check_id", required=False)
@click.option("--list", "list_all", is_flag=True, help="List every check ID with its title.")
@click.option(
    "--markdown",
    "as_markdown",
    is_flag=True,
    help="Print the whole check reference as Markdown (docs/checks.md).",
)
@click.option(
    "-o", "--output", metavar="FILE", help="With --markdown: write the reference to FILE (atomically)."
)
@rules_option
@json_option
def explain(check_id, list_all, as_markdown, output, as_json):
    """Explain a check ID (PY001, PKG003, ISO002, GPU004, CUDA002, KB017 …).

    \b
    Examples:
      stackcheck explain CUDA002
      stackcheck explain --list
      stackcheck explain --markdown -o docs/checks.md
    """
    one_output(json=as_json, markdown=as_markdown)

    from stackcheck.checks.registry import all_checks

    checks = all_checks(everywhere=True)
    if as_markdown:
        from stackcheck.render.checks_doc import checks_markdown

        text = checks_markdown(checks)
        if output:
            from stackcheck.fileio import atomic_write

            click.echo(str(atomic_write(output, text)))
        else:
            click.echo(text, nl=False)
        return
    if list_all or not check_id:
        if as_json:
            emit_json(
                [{"id": s.id, "title": s.title, "commands": sorted(s.commands)} for s in checks.values()]
            )
        else:
            for spec in checks.values():
                click.echo(f"{spec.id:<8} {spec.title}  [{', '.join(sorted(spec.commands)) or 'triage'}]")
        return
    spec = checks.get(check_id.upper())
    if spec is None:
        import difflib

        close = difflib.get_close_matches(check_id.upper(), list(checks), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `stackcheck explain --list` shows all"
        from stackcheck.errors import InputError

        raise InputError(f"unknown check ID {check_id!r}{hint}")
    if as_json:
        emit_json(
            {
                "id": spec.id,
                "title": spec.title,
                "commands": sorted(spec.commands),
                "needs_profile": spec.needs_profile,
                "explain": spec.explain,
                "sources": list(spec.sources),
            }
        )
        return
    click.echo(f"{spec.id}: {spec.title}")
    where = (
        ", ".join(sorted(spec.commands))
        or "triage only (matched against error text, not judged in preflight)"
    )
    click.echo(f"runs in: {where}" + (" (with a profile)" if spec.needs_profile else ""))
    click.echo("")
    click.echo(spec.explain)
    if spec.sources:
        click.echo("\nsources:")
        for s in spec.sources:
            click.echo(f"  - {s}")
    finish(0)
