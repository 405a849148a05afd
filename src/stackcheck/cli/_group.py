"""The click group of the ``stackcheck`` command (:data:`stackcheck.cli.COMMANDS` lists its
subcommands; each is imported only when invoked). Kept apart from :mod:`stackcheck.cli` so that
``--version`` and a cached ``--help`` are answered without importing click
(:mod:`stackcheck.cli.startup`)."""

from __future__ import annotations

import importlib

import click

from stackcheck import __version__
from stackcheck.cli import COMMANDS


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        target, _help = COMMANDS[name]
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(f"stackcheck.cli.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"stackcheck.cli.{module_name}":
                return None  # not built yet
            raise
        return getattr(module, attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help straight from the table, without importing every command module.
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "-V", "--version", prog_name="stackcheck")
@click.option(
    "--no-color",
    is_flag=True,
    help="No colour in the output (also NO_COLOR=1; FORCE_COLOR=1 colours even when piped).",
)
@click.pass_context
def cli(ctx: click.Context, no_color: bool) -> None:
    """stackcheck keeps ML/LLM experiment environments honest.

    \b
    Quick start:
      stackcheck preflight --list-profiles
      stackcheck preflight --profile BASE-CPU
      stackcheck snapshot --json -o env.json
      stackcheck doctor

    Exit codes: 0 ok (also with warnings), 1 blocked / invalid / refused or a
    check failed (--strict: warnings too), 2 usage error or unreadable input.

    Shell completion: eval "$(stackcheck completion bash)" (zsh, fish alike).
    """
    from stackcheck.cli.common import NO_COLOR_KEY

    ctx.meta[NO_COLOR_KEY] = no_color
