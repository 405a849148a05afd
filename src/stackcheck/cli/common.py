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
python_option = click.option(
    "--python",
    "python_path",
    metavar="PATH",
    help="Probe another interpreter (a venv's, a kernel's) without installing stackcheck there.",
)
registry_option = click.option(
    "--registry",
    metavar="FILE",
    help="Profile registry file (default: requirements/environment-profiles.json found upwards, else the built-in catalog).",
)
snapshot_option = click.option(
    "--snapshot",
    "snapshot_file",
    metavar="FILE",
    help="Judge a recorded snapshot instead of the live environment.",
)
collect_env_option = click.option(
    "--from-collect-env",
    "collect_env_file",
    metavar="FILE",
    help="Judge a pasted `python -m torch.utils.collect_env` output ('-' for stdin).",
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


def judging_options(fn):
    """The options every environment-judging command shares (preflight, doctor): where the
    facts come from, which checks to skip, and how to print and exit."""
    for option in reversed(
        (
            python_option,
            kernel_option,
            snapshot_option,
            collect_env_option,
            skip_option,
            json_option,
            markdown_option,
            verbose_option,
            strict_option,
        )
    ):
        fn = option(fn)
    return fn


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
    """--skip GPU001 --skip CUDA,PLAT001 → ["GPU001", "CUDA", "PLAT001"]; an ID or prefix that
    names no check is a one-line error with the close matches."""
    ids = [part.strip() for v in values for part in v.split(",") if part.strip()]
    from stackcheck.checks.registry import unknown_skip

    bad = unknown_skip(ids) if ids else None
    if bad:
        from stackcheck.errors import InputError

        name, close = bad
        hint = f"did you mean {', '.join(close)}?" if close else "`stackcheck explain --list` lists them"
        raise InputError(f"--skip: {name!r} is not a check ID or prefix; {hint}")
    return ids


def one_output(**flags: bool) -> None:
    """At most one of the output formats (``one_output(json=as_json, markdown=as_markdown)``)."""
    given = [f"--{name}" for name, on in flags.items() if on]
    if len(given) > 1:
        from stackcheck.errors import InputError

        raise InputError(f"{' and '.join(given)} cannot be combined: choose one output")


def judge_environment(
    command: str,
    *,
    profile=None,
    python_path=None,
    kernel_name=None,
    snapshot_file=None,
    collect_env_file=None,
    skip=(),
    deep=False,
):
    """The Report of a judging command (preflight, doctor): resolve ``--kernel``, obtain the
    snapshot from whichever source was given, run the command's checks."""
    from stackcheck.environment import obtain_snapshot
    from stackcheck.judge import judge
    from stackcheck.probe import JUDGED

    skip = split_ids(skip)  # before the probe: a typo costs no time
    if kernel_name:
        python_path = kernel_interpreter(kernel_name, python_path)
    snapshot = obtain_snapshot(
        snapshot_file=snapshot_file,
        collect_env_file=collect_env_file,
        python_path=python_path,
        deep=deep,
        sections=JUDGED,
        modules=tuple(profile.required_modules) if profile else (),
    )
    report = judge(snapshot, command=command, profile=profile, skip=skip, deep=deep)
    if kernel_name:
        report.environment["kernel"] = kernel_name
    return report


def kernel_interpreter(name: str, python_path: str | None) -> str:
    """The interpreter a Jupyter kernel runs (for ``--kernel NAME``), or a one-line error."""
    from stackcheck.errors import InputError

    if python_path:
        raise InputError("--kernel and --python cannot be combined: a kernel names its own interpreter")
    from stackcheck.probe.kernels import jupyter_data_dirs, scan_kernelspecs

    specs, unreadable = scan_kernelspecs(jupyter_data_dirs())
    for spec in specs:
        if spec.name == name:
            if not spec.interpreter or not spec.interpreter_exists:
                raise InputError(
                    f"kernel {name!r}: its interpreter {spec.argv[:1]} does not exist ({spec.path})"
                )
            return spec.interpreter
    for broken in unreadable:
        if broken.name == name.lower():
            raise InputError(
                f"kernel {name!r}: {broken.path} is unreadable ({broken.reason}); "
                "see `stackcheck kernel check` for how to fix it"
            )
    raise InputError(f"no Jupyter kernel named {name!r} (see `jupyter kernelspec list`)")
