"""Options and output helpers shared by the command modules."""

from __future__ import annotations

import os

import click

# click-free, for the start-up path (stackcheck.cli.startup); named here as before
from stackcheck.cli.output import NO_COLOR_KEY as NO_COLOR_KEY
from stackcheck.cli.output import echo_text as echo_text
from stackcheck.cli.output import emit_json as emit_json
from stackcheck.cli.output import emit_report as emit_report
from stackcheck.cli.output import judge_environment as judge_environment
from stackcheck.cli.output import judged_environment as judged_environment
from stackcheck.cli.output import split_ids as split_ids
from stackcheck.cli.output import use_color as use_color


def checked(kind: str = "name", field: str | None = None):
    """A click callback that checks the value(s) of an option or argument by the identifier
    rule ``kind`` (:mod:`stackcheck.identifiers`): a bad one is a one-line error, exit 2."""

    def callback(ctx, param, value):
        from stackcheck.identifiers import require

        name = field or next((o for o in param.opts if o.startswith("--")), param.name.upper())
        for v in value if isinstance(value, tuple) else (value,):
            if v is not None:
                require(v, name, kind)
        return value

    return callback


json_option = click.option(
    "--json", "as_json", is_flag=True, help="Machine output (JSON) on stdout, nothing else there."
)
strict_option = click.option("--strict", is_flag=True, help="Warnings count as failures (exit 1).")


def _no_cache(ctx, _param, value):
    """``--no-cache``: STACKCHECK_NO_CACHE=1 for this command (the probe's children inherit
    it), restored when the command ends (an in-process caller keeps its own setting)."""
    if value:
        before = os.environ.get("STACKCHECK_NO_CACHE")
        os.environ["STACKCHECK_NO_CACHE"] = "1"

        def restore():
            if before is None:
                os.environ.pop("STACKCHECK_NO_CACHE", None)
            else:
                os.environ["STACKCHECK_NO_CACHE"] = before

        ctx.call_on_close(restore)
    return value


no_cache_option = click.option(
    "--no-cache",
    is_flag=True,
    expose_value=False,
    callback=_no_cache,
    help="Read and derive every fact afresh, without the cache (also STACKCHECK_NO_CACHE=1).",
)
python_option = click.option(
    "--python",
    "python_path",
    metavar="PATH",
    help="Probe another interpreter (a venv's, a kernel's) without installing stackcheck there.",
)


def profile_option(help: str):
    """``--profile/-p ID``, checked by the identifier rule; ``help`` says what this command does
    with the profile."""
    return click.option("--profile", "-p", "profile_id", metavar="ID", callback=checked(), help=help)


registry_option = click.option(
    "--registry",
    metavar="FILE",
    help=(
        "Profile registry file (default: requirements/environment-profiles.json found upwards, "
        "else the built-in catalog)."
    ),
)
snapshot_option = click.option(
    "--snapshot",
    "snapshot_file",
    metavar="FILE",
    help="Judge a recorded snapshot instead of the live environment.",
)
kernel_option = click.option(
    "--kernel",
    "kernel_name",
    metavar="NAME",
    callback=checked(),
    help="Check the interpreter a Jupyter kernel runs (see `jupyter kernelspec list`).",
)
skip_option = click.option(
    "--skip",
    multiple=True,
    metavar="ID[,ID…]",
    help="Record these checks (or ID prefixes like GPU) as skipped, e.g. on CPU-only CI.",
)
markdown_option = click.option(
    "--markdown", "as_markdown", is_flag=True, help="Print the report as a Markdown table."
)
verbose_option = click.option("-v", "--verbose", is_flag=True, help="Show ok and skipped checks too.")
deep_option = click.option(
    "--deep", is_flag=True, help="Also import torch in a child process (with a timeout) for device facts."
)
timeout_option = click.option(
    "--timeout",
    "timeout_s",
    default=60.0,
    show_default=True,
    metavar="S",
    type=click.FloatRange(min=1),
    help="Seconds any rank waits for the others (rendezvous, gather, each collective) "
    "before it reports them.",
)


def _use_rules(ctx, param, value):
    if value:
        from stackcheck.knowledge import use_rule_files

        use_rule_files(value)
        ctx.call_on_close(lambda: use_rule_files(()))
    return value


rules_option = click.option(
    "--rules",
    multiple=True,
    metavar="FILE",
    callback=_use_rules,
    expose_value=False,
    help="Also use the knowledge rules of FILE (a rule file or a folder of them, e.g. from "
    "`stackcheck mine rules`).",
)


def source_options(*kinds: str, importers: bool = True):
    """The one option group that says where a command's facts come from: ``kinds`` among
    python, kernel, snapshot, plus ``--from-…`` for every registered importer
    (``stackcheck.sources.IMPORTERS``) unless ``importers`` is False. The command gets one
    ``source`` argument, a :class:`stackcheck.sources.FactSource` (live when none is given);
    two given is a one-line error naming both."""
    import functools

    from stackcheck.sources import IMPORTERS

    options = {"python": python_option, "kernel": kernel_option, "snapshot": snapshot_option}
    chosen = [(kind, options[kind]) for kind in kinds]
    if importers:
        for imp in IMPORTERS:
            param = _importer_param(imp.kind)
            chosen.append((imp.kind, click.option(imp.option, param, metavar="FILE", help=imp.help)))
    params = {"python": "python_path", "kernel": "kernel_name", "snapshot": "snapshot_file"}

    def decorate(fn):
        @functools.wraps(fn)
        def command(*args, **kwargs):
            from stackcheck.sources import FactSource

            given = {kind: kwargs.pop(params.get(kind) or _importer_param(kind)) for kind, _ in chosen}
            kwargs["source"] = FactSource.of(**{k.replace("-", "_"): v for k, v in given.items()})
            return fn(*args, **kwargs)

        for _, option in reversed(chosen):
            command = option(command)
        return command

    return decorate


def _importer_param(kind: str) -> str:
    # collect_env_file: the name the option had before importers were a table
    return "collect_env_file" if kind == "collect-env" else f"from_{kind.replace('-', '_')}_file"


def judging_options(fn):
    """The options every environment-judging command shares (preflight, doctor): where the
    facts come from (one ``source`` argument), which checks to skip, and how to print and exit."""
    options = (skip_option, json_option, markdown_option, verbose_option, strict_option, no_cache_option)
    for option in reversed(options):
        fn = option(fn)
    return source_options("python", "kernel", "snapshot")(fn)


def finish(code: int) -> None:
    """Leave a command with an exit code (click's standalone_mode is off in main)."""
    ctx = click.get_current_context()
    ctx.exit(code)


def one_output(**flags: bool) -> None:
    """At most one of the output formats (``one_output(json=as_json, markdown=as_markdown)``)."""
    given = [f"--{name}" for name, on in flags.items() if on]
    if len(given) > 1:
        from stackcheck.errors import InputError

        raise InputError(f"{' and '.join(given)} cannot be combined: choose one output")
