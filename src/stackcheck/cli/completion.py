"""``stackcheck completion SHELL``: the shell completion script, from click.

The same script click prints for ``_STACKCHECK_COMPLETE=bash_source stackcheck`` (``zsh_source``,
``fish_source``); installing it once makes the shell ask stackcheck for completions of
commands, options and choices.
"""

from __future__ import annotations

import click

SHELLS = ("bash", "zsh", "fish")


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh, fish).

    \b
    Install (once):
      bash:  echo 'eval "$(stackcheck completion bash)"' >> ~/.bashrc
      zsh:   echo 'eval "$(stackcheck completion zsh)"' >> ~/.zshrc
      fish:  stackcheck completion fish > ~/.config/fish/completions/stackcheck.fish
    Without this command: _STACKCHECK_COMPLETE=bash_source stackcheck (zsh_source, fish_source).
    """
    from click.shell_completion import get_completion_class

    from stackcheck.cli import cli

    shell_class = get_completion_class(shell)
    if shell_class is None:  # click.Choice admits only the shells click knows
        raise click.UsageError(f"no completion for shell {shell!r}")
    complete = shell_class(cli, {}, "stackcheck", "_STACKCHECK_COMPLETE")
    click.echo(complete.source())
