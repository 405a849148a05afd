"""``stackcheck artifact``: check adapters, checkpoints and tokenizers before they are loaded."""

from __future__ import annotations

import click

from stackcheck.cli.common import emit_report, finish, json_option, strict_option

target_option = click.option(
    "--for",
    "target",
    type=click.Choice(["transformers", "peft", "vllm", "sglang"]),
    default="transformers",
    show_default=True,
    help="The loader or engine that will load it (its limits and supported modules apply).",
)


@click.group()
def artifact() -> None:
    """Artifacts checked before they are loaded (safetensors headers and config files only).

    \b
    Examples:
      stackcheck artifact check ./my-lora --base ./Llama-3.1-8B --for vllm --max-lora-rank 64
      stackcheck artifact check ./checkpoint-1200 --json
      stackcheck artifact register support-bot ./my-lora --base ./Llama-3.1-8B
      stackcheck artifact list
    """


@artifact.command("check")
@click.argument("path", type=click.Path())
@click.option("--base", metavar="PATH", help="The base model an adapter is for (a model directory).")
@target_option
@click.option(
    "--max-lora-rank",
    type=int,
    metavar="N",
    help="The engine's --max-lora-rank (vLLM's default 16 applies when not given).",
)
@click.option("-v", "--verbose", is_flag=True, help="Also list the checks that passed.")
@json_option
@strict_option
def check(
    path: str,
    base: str | None,
    target: str,
    max_lora_rank: int | None,
    verbose: bool,
    as_json: bool,
    strict: bool,
) -> None:
    """Check the model or adapter at PATH: shards and index (ART001/002/008), shapes, tied
    embeddings and dtype against config.json (ART003-005), FSDP / torch.compile names and
    torch.distributed checkpoints (ART006/007), an adapter against its base and the target
    (ART010-016), the tokenizer against the embedding (ART020-022) and every pickle by opcode
    (ART030, never unpickled). No torch import, no tensor read.

    Exit 1 when a finding is blocked (--strict: warnings too), 2 on unreadable input.

    \b
    Examples:
      stackcheck artifact check ./my-lora --base ./Llama-3.1-8B --for vllm
      stackcheck artifact check model.safetensors --json
    """
    from stackcheck.artifacts import check as run
    from stackcheck.models.finding import exit_code

    report = run(path, base=base, target=target, max_lora_rank=max_lora_rank)
    emit_report(report, as_json=as_json, verbose=verbose)
    finish(exit_code(report.verdict, strict))


registry_option = click.option(
    "--registry",
    "registry_path",
    metavar="FILE",
    help="The adapter registry file (default $XDG_DATA_HOME/stackcheck/adapters.json).",
)


@artifact.command("register")
@click.argument("name")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
@click.option("--base", metavar="PATH", help="The base model directory to check it against.")
@target_option
@click.option("--replace", is_flag=True, help="Replace an adapter registered under NAME.")
@registry_option
@json_option
def register(
    name: str,
    path: str,
    base: str | None,
    target: str,
    replace: bool,
    registry_path: str | None,
    as_json: bool,
) -> None:
    """Check the adapter at PATH and register it as NAME with its identity (base and
    revision, file digests, tokenizer digest). Exit 1 when a check blocks.

    \b
    Example:
      stackcheck artifact register support-bot ./my-lora --base ./Llama-3.1-8B --for vllm
    """
    from stackcheck.artifacts.registry import Registry

    entry = Registry(registry_path).register(name, path, base=base, target=target, replace=replace)
    if as_json:
        from stackcheck.cli.common import emit_json

        emit_json(entry)
    else:
        ident = entry.identity
        click.echo(
            f"registered {entry.name}: {entry.path} (r={ident.r}, weights sha256 {ident.weights_sha256[:16]})"
        )
    finish(0)


@artifact.command("list")
@registry_option
@json_option
def list_(registry_path: str | None, as_json: bool) -> None:
    """The registered adapters and their identity.

    \b
    Example:
      stackcheck artifact list --json
    """
    from stackcheck.artifacts.registry import Registry
    from stackcheck.identifiers import printable

    entries = Registry(registry_path).list()
    if as_json:
        from stackcheck.cli.common import emit_json

        emit_json(entries)
        finish(0)
    for e in entries:
        ident = e.identity
        base = f"{ident.base_model}@{ident.base_revision}" if ident.base_revision else ident.base_model
        click.echo(printable(f"{e.name}  r={ident.r} alpha={ident.lora_alpha}  base {base or '?'}  {e.path}"))
    if not entries:
        click.echo("no adapters registered")
    finish(0)
