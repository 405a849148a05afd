"""What the commands print, and the judging they share, without importing click: the start-up
path (:mod:`stackcheck.cli.startup`) runs the everyday commands with these before click is
loaded. :mod:`stackcheck.cli.common` names them too."""

from __future__ import annotations

import os
import re
import sys

NO_COLOR_KEY = "stackcheck.no_color"  # set on the root context by `stackcheck --no-color`

# what click.echo strips off text that is not painted when stdout is not a terminal
_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


def emit_json(obj) -> None:
    """Write a msgspec Struct / plain object as JSON to stdout, newline-terminated, redacted
    (stackcheck.redaction) like everything else that leaves the process."""
    import msgspec

    from stackcheck.redaction import redact_value

    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(redact_value(obj)), indent=2) + b"\n")
    sys.stdout.flush()


def use_color() -> bool:
    """Whether human output gets colour: never with ``--no-color`` or a non-empty NO_COLOR;
    with a non-empty FORCE_COLOR even when stdout is not a terminal; else when it is one.
    (Machine output — JSON, Markdown — is never painted: its callers do not ask.)"""
    click = sys.modules.get("click")  # no click, no context: a command run without click
    ctx = click.get_current_context(silent=True) if click is not None else None
    if ctx is not None and ctx.find_root().meta.get(NO_COLOR_KEY):
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return _isatty(sys.stdout)


def echo_text(text: str, painted: bool, *, err: bool = False) -> None:
    """Human text on stdout (``err``: stderr); ``painted`` text keeps its colour (click would strip
    it off a terminal). Through click.echo where click is loaded; without it, the same on a POSIX
    stream whose encoding is not ASCII (where click would re-wrap it; startup only runs commands
    without click on such streams): escape sequences off unpainted text where it is not a terminal."""
    click = sys.modules.get("click")
    if click is not None:
        click.echo(text, nl=False, err=err, color=True if painted else None)
        return
    stream = sys.stderr if err else sys.stdout
    if not painted and not _isatty(stream):
        text = _ANSI.sub("", text)
    stream.write(text)
    stream.flush()


def emit_report(report, *, as_json: bool, as_markdown: bool = False, verbose: bool = False) -> None:
    """Print a judging command's Report: JSON, a Markdown table, or the readable text."""
    if as_json:
        emit_json(report)
        return
    from stackcheck.render.text import report_markdown, report_text

    if as_markdown:
        echo_text(report_markdown(report), False)
        return
    color = use_color()
    echo_text(report_text(report, verbose=verbose, color=color), color)


def split_ids(values: tuple[str, ...]) -> list[str]:
    """--skip values → check IDs and prefixes (:func:`stackcheck.checks.skip.split_ids`)."""
    if not values:
        return []  # the registry (and with it the checks) stays unloaded
    from stackcheck.checks.skip import split_ids as split

    return split(values)


def judge_environment(command: str, *, source=None, skip=(), deep=False):
    """The Report of a judging command (preflight, doctor): obtain the snapshot from the
    source of facts (``stackcheck.sources.FactSource``; live when None), run the command's checks."""
    return judged_environment(command, source=source, skip=skip, deep=deep)[1]


def judged_environment(command: str, *, profile_id=None, registry=None, source=None, skip=(), deep=False):
    """(snapshot, Report) of :func:`judge_environment`, for a command that reports facts too;
    ``profile_id``: judged against that profile of ``registry`` (a file; None: the one found
    from the working directory, else the built-in catalog). A report judged before from the
    same facts comes from the verdict cache (:mod:`stackcheck.cli.verdicts`)."""
    from stackcheck.cli.verdicts import judged

    skip = split_ids(skip)  # before the probe: a typo costs no time
    return judged(command, profile_id=profile_id, registry=registry, source=source, skip=skip, deep=deep)


def check_profile(
    registry, profile_id: str, *, source=None, skip=(), deep=False, publish=None, **shown
) -> int:
    """``stackcheck preflight --profile ID``: judge the environment against the profile of
    ``registry`` (:func:`judged_environment`), print the report and return the exit code
    (``shown``: :func:`show_report`). ``publish(report, snapshot)``, when given, runs before
    the report is printed (monitors)."""
    snapshot, report = judged_environment(
        "preflight", profile_id=profile_id, registry=registry, source=source, skip=skip, deep=deep
    )
    if publish is not None:
        publish(report, snapshot)
    return show_report(report, **shown)


def show_report(report, *, as_json=False, as_markdown=False, verbose=False, strict=False) -> int:
    """Print a judging command's report (:func:`emit_report`); its exit code (``strict``:
    warnings fail too)."""
    from stackcheck.models.finding import exit_code

    emit_report(report, as_json=as_json, as_markdown=as_markdown, verbose=verbose)
    return exit_code(report.verdict, strict)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
