"""``stackcheck knowledge``: maintain the compatibility knowledge base (``knowledge refresh``)."""

from __future__ import annotations

from pathlib import Path

import click

from stackcheck.cli.common import emit_json, finish, json_option

DIRECTORY = click.Path(file_okay=False)


@click.group()
def knowledge() -> None:
    """Maintain the compatibility knowledge base (maintainers)."""


@knowledge.command()
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the tables disagree with the index.")
@click.option("--dry-run", is_flag=True, help="Print the diff, write nothing.")
@click.option("--cache", metavar="DIR", type=DIRECTORY, help="Record every response under DIR.")
@click.option("--replay", metavar="DIR", type=DIRECTORY, help="Answer from responses recorded under DIR.")
@click.option("--data-dir", metavar="DIR", type=DIRECTORY, help="The data directory (default: packaged).")
@click.option("--package", "packages", multiple=True, metavar="NAME", help="Refresh only these pins.")
@click.option("--no-torch-index", is_flag=True, help="Do not read the PyTorch CUDA indexes.")
@click.option("--cuda", "extra_cuda", multiple=True, metavar="cuNNN", help="Also read this CUDA index.")
@click.option("--torch-since", metavar="X.Y", help="Compare only the torch releases from X.Y on.")
@click.option(
    "--timeout", type=click.FloatRange(1, 300), default=20.0, show_default=True, help="Seconds a request."
)
@json_option
def refresh(  # noqa: PLR0913 (one parameter per option)
    check,
    dry_run,
    cache,
    replay,
    data_dir,
    packages,
    no_torch_index,
    extra_cuda,
    torch_since,
    timeout,
    as_json,
):
    """Regenerate the pin table and the CUDA builds per torch release from the package indexes.

    Reads the published Requires-Dist of torchvision, torchaudio, vllm, sglang, xformers,
    transformers, tokenizers, accelerate, peft, trl and bitsandbytes (PyPI JSON API) and the
    local versions download.pytorch.org publishes per CUDA build, then writes the tables
    (atomically) and prints a unified diff to review. The only command that uses the network.

    \b
    Examples:
      stackcheck knowledge refresh --dry-run
      stackcheck knowledge refresh --check --replay tests/data/refresh \\
          --package torchvision --package torchaudio --torch-since 2.11
      stackcheck knowledge refresh --cache /tmp/responses --package vllm
    """
    import re

    from stackcheck.errors import InputError
    from stackcheck.knowledge import loader
    from stackcheck.knowledge import refresh as kr

    for tag in extra_cuda:
        if not re.fullmatch(r"cu\d{3}", tag):
            raise InputError(f"--cuda {tag!r}: expected an index name like cu129")
    unknown = [p for p in packages if p.lower() not in kr.PYPI_PACKAGES]
    if unknown:
        raise InputError(f"--package {unknown[0]!r}: one of {', '.join(kr.PYPI_PACKAGES)}")
    directory = Path(data_dir) if data_dir else loader.data_dir()
    fetcher = kr.Fetcher(
        cache=Path(cache) if cache else None, replay=Path(replay) if replay else None, timeout=timeout
    )
    result = kr.refresh(
        directory,
        fetcher,
        packages=tuple(packages) or None,
        torch_index=not no_torch_index,
        extra_cuda=tuple(extra_cuda),
        torch_since=torch_since,
    )
    written = [] if (check or dry_run) else kr.write(result, directory)
    if as_json:
        extra = {"written": [str(p) for p in written], "requests": len(fetcher.requests)}
        emit_json(result.as_dict() | extra)
    else:
        click.echo(result.diff(), nl=False)
        for line in result.changes:
            click.echo(f"changed: {line}", err=True)
        for line in result.notes:
            click.echo(f"note: {line}", err=True)
        state = "disagree with" if result.changed else "agree with"
        click.echo(f"the tables {state} the indexes ({len(fetcher.requests)} responses read)", err=True)
        for path in written:
            click.echo(f"wrote {path}", err=True)
    finish(1 if check and result.changed else 0)
