"""Options and output helpers shared by the command modules."""

from __future__ import annotations

import os
import sys

import click


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


def emit_json(obj) -> None:
    """Write a msgspec Struct / plain object as JSON to stdout, newline-terminated, redacted
    (stackcheck.redaction) like everything else that leaves the process."""
    import msgspec

    from stackcheck.redaction import redact_value

    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(redact_value(obj)), indent=2) + b"\n")
    sys.stdout.flush()


def finish(code: int) -> None:
    """Leave a command with an exit code (click's standalone_mode is off in main)."""
    ctx = click.get_current_context()
    ctx.exit(code)


def use_color() -> bool:
    """Whether human output gets colour: never with ``--no-color`` or a non-empty NO_COLOR;
    with a non-empty FORCE_COLOR even when stdout is not a terminal; else when it is one.
    (Machine output — JSON, Markdown — is never painted: its callers do not ask.)"""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.find_root().meta.get(NO_COLOR_KEY):
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


NO_COLOR_KEY = "stackcheck.no_color"  # set on the root context by `stackcheck --no-color`


def echo_text(text: str, painted: bool) -> None:
    """Human text on stdout; ``painted`` text keeps its colour (click would strip it off a terminal)."""
    click.echo(text, nl=False, color=True if painted else None)


def emit_report(report, *, as_json: bool, as_markdown: bool = False, verbose: bool = False) -> None:
    """Print a judging command's Report: JSON, a Markdown table, or the readable text."""
    if as_json:
        emit_json(report)
        return
    from stackcheck.render.text import report_markdown, report_text

    if as_markdown:
        click.echo(report_markdown(report), nl=False)
        return
    color = use_color()
    echo_text(report_text(report, verbose=verbose, color=color), color)


def split_ids(values: tuple[str, ...]) -> list[str]:
    """--skip values → check IDs and prefixes (:func:`stackcheck.checks.skip.split_ids`)."""
    from stackcheck.checks.skip import split_ids as split

    return split(values)


def one_output(**flags: bool) -> None:
    """At most one of the output formats (``one_output(json=as_json, markdown=as_markdown)``)."""
    given = [f"--{name}" for name, on in flags.items() if on]
    if len(given) > 1:
        from stackcheck.errors import InputError

        raise InputError(f"{' and '.join(given)} cannot be combined: choose one output")


def judge_environment(command: str, *, profile=None, source=None, skip=(), deep=False):
    """The Report of a judging command (preflight, doctor): obtain the snapshot from the
    source of facts (``stackcheck.sources.FactSource``; live when None), run the command's checks."""
    from stackcheck.environment import obtain
    from stackcheck.judge import judge
    from stackcheck.probe import JUDGED

    skip = split_ids(skip)  # before the probe: a typo costs no time
    snapshot = obtain(
        source, deep=deep, sections=JUDGED, modules=tuple(profile.required_modules) if profile else ()
    )
    report = judge(snapshot, command=command, profile=profile, skip=skip, deep=deep)
    if source is not None and source.kind == "kernel":
        report.environment["kernel"] = source.value
    return report
