"""``stackcheck artifact``: check adapters, checkpoints and tokenizers before they are loaded."""

from __future__ import annotations

import click

from stackcheck.cli.common import emit_report, finish, json_option, strict_option


@click.group()
def artifact() -> None:
    """Artifacts checked before they are loaded (safetensors headers and config files only)."""


@artifact.command("check")
@click.argument("path", type=click.Path())
@click.option("--base", metavar="PATH", help="The base model an adapter is for (a model directory).")
@click.option(
    "--for",
    "target",
    type=click.Choice(["transformers", "peft", "vllm", "sglang"]),
    default="transformers",
    show_default=True,
    help="The loader or engine that will load it (its limits and supported modules apply).",
)
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
    """
    from stackcheck.artifacts import check as run
    from stackcheck.models.finding import exit_code

    report = run(path, base=base, target=target, max_lora_rank=max_lora_rank)
    emit_report(report, as_json=as_json, verbose=verbose)
    finish(exit_code(report.verdict, strict))
