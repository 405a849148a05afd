"""``stackcheck hygiene``: scan a repository for what should never be committed."""

from __future__ import annotations

import click

from stackcheck.cli.common import emit_report, finish, json_option, strict_option


@click.command()
@click.argument("path", default=".", type=click.Path(file_okay=False))
@click.option(
    "--max-weight-size",
    default="10MiB",
    show_default=True,
    metavar="SIZE",
    help="Weight files larger than this are reported (10MiB, 500MB, 2GiB, bytes).",
)
@click.option(
    "--ignore-file",
    metavar="FILE",
    help="Accepted exceptions (default: .stackcheck-ignore at the repository root).",
)
@click.option("-v", "--verbose", is_flag=True, help="Also list the rules that found nothing.")
@json_option
@strict_option
def hygiene(
    path: str, max_weight_size: str, ignore_file: str | None, verbose: bool, as_json: bool, strict: bool
) -> None:
    """Scan the files git tracks in PATH's repository (a directory walk outside git) for
    committed secrets (HYG001), model weights over --max-weight-size (HYG002), Hugging Face
    caches (HYG003), compile caches and built binaries (HYG004), tokens in notebook outputs
    (HYG005), pickle checkpoints that import code (HYG006, read as opcodes, never unpickled)
    and trust_remote_code=True without a pinned revision (HYG007).

    \b
    Secrets are always shown masked (first 4 characters + length).
    Ignore file lines: gitignore patterns, or RULE:pattern to accept one rule there,
    e.g.  HYG002:checkpoints/*.safetensors
    Exit 1 when a finding is blocked (--strict: warnings too).
    """
    from stackcheck.hygiene import parse_size, scan
    from stackcheck.models.finding import exit_code

    report = scan(path, max_weight_size=parse_size(max_weight_size), ignore_file=ignore_file)
    emit_report(report, as_json=as_json, verbose=verbose)
    if not as_json:
        env = report.environment
        click.echo(
            f"  scanned {env['files']} files ({env['mode']}) in {env['root']}; "
            f"{env['ignored']} finding(s) accepted by the ignore file"
        )
    finish(exit_code(report.verdict, strict))
