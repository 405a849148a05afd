"""The ``stackcheck`` command: a thin shell over the library, one module per command group.

Subcommands are imported only when invoked, so ``stackcheck preflight`` never pays for the
ledger, triage or memory code.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from stackcheck import __version__

# command name → "module:attribute" (module relative to stackcheck.cli)
COMMANDS: dict[str, tuple[str, str]] = {
    "snapshot": ("snapshot:snapshot", "Capture the runtime snapshot of an environment."),
    "preflight": ("preflight:preflight", "Check an environment against a profile: ok / warning / blocked."),
    "profiles": ("profiles:profiles", "List, show, export, validate and document environment profiles."),
    "doctor": ("doctor:doctor", "Find isolation and integrity faults (no profile needed)."),
    "deps": ("deps:deps", "Distribution graph: tree, why PKG, conflicts."),
    "explain": ("explain:explain", "Explain a check ID or knowledge rule and how to fix it."),
    "triage": ("triage:triage", "Diagnose an error text, traceback or CI log."),
    "results": ("results:results", "Result contract and append-only evidence ledger."),
    "accept": ("accept:accept", "Run the environment acceptance steps end to end."),
    "hygiene": ("hygiene:hygiene", "Scan a repository for secrets, weights, caches and unsafe pickles."),
    "memory": ("memory:memory", "Estimate model memory: weights, KV cache, activations, optimizer."),
    "kernel": ("kernel:kernel", "Register and check Jupyter kernels for this environment."),
    "schema": ("schema:schema", "Print or write the JSON Schemas of the contracts."),
    "knowledge": (
        "knowledge:knowledge",
        "Maintain the knowledge base: refresh its tables from the package indexes.",
    ),
    "completion": ("completion:completion", "Print the shell completion script (bash, zsh, fish)."),
    "env": ("env:env", "Create, lock, restore and diff an environment made from a profile."),
    "mine": ("mine:mine", "Mine CI logs into verifiable rules: ingest, rules, summary, verify."),
}


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


def _shield_from_pythonpath() -> bool:
    """PYTHONPATH is set and stackcheck does not itself come from it (``PYTHONPATH=src``)."""
    entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if not entries or sys.flags.ignore_environment or os.name != "posix":
        return False
    import stackcheck

    home = os.path.realpath(os.path.dirname(os.path.dirname(stackcheck.__file__)))
    return home not in {os.path.realpath(p) for p in entries}


def main(argv: list[str] | None = None) -> None:
    """Entry point: one-line errors and exit 2 for bad input, never a traceback."""
    if argv is None and _shield_from_pythonpath():
        # A polluted PYTHONPATH (ROS's python3.10 site-packages) must not change the code
        # stackcheck itself runs. Restart with -E; os.environ keeps PYTHONPATH, so the
        # probes still see and report it (probe.interpreter_sections).
        os.execv(sys.executable, [sys.executable, "-E", "-m", "stackcheck", *sys.argv[1:]])
    from stackcheck.errors import InputError, Refused

    def redact_text(text: str) -> str:  # imported only on the way out with an error
        from stackcheck.redaction import redact_text

        return redact_text(text)

    try:
        rv = cli.main(args=argv, prog_name="stackcheck", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("stackcheck: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.message = redact_text(exc.message)  # type: ignore[misc]  # it may quote an argument
        exc.show()
        sys.exit(exc.exit_code)
    except InputError as exc:
        click.echo(f"stackcheck: error: {redact_text(str(exc))}", err=True)
        sys.exit(2)
    except Refused as exc:
        click.echo(f"stackcheck: refused: {redact_text(str(exc))}", err=True)
        sys.exit(1)
    except BrokenPipeError:
        os._exit(0)
    except KeyboardInterrupt:
        click.echo("stackcheck: interrupted", err=True)
        sys.exit(130)
    sys.exit(rv if isinstance(rv, int) else 0)
