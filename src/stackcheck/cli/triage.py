"""``stackcheck triage``: an error text, traceback or CI log → known causes and fixes."""

from __future__ import annotations

import sys
import textwrap

import click

from stackcheck.cli.common import (
    emit_json,
    finish,
    json_option,
    no_cache_option,
    rules_option,
    source_options,
)


@click.command(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  stackcheck triage error.txt
  python train.py 2>&1 | tail -200 | stackcheck triage -
  stackcheck triage ci.log --snapshot env.json --json
  stackcheck triage issue.md            # a pasted issue with a collect_env block
  stackcheck triage ci.log --rules mined.json   # also the rules `stackcheck mine rules` wrote

\b
Environment used to judge the causes (first available): a collect_env block inside
the input, --snapshot / --from-collect-env, the live environment (--no-env: none).
Exit codes: 0 diagnosis printed (also when no known cause matched), 2 unreadable,
empty or binary input.""",
)
@click.argument("file", required=False, metavar="[FILE | -]")
@source_options("snapshot")
@click.option("--no-env", is_flag=True, help="Do not judge against any environment (not even the live one).")
@click.option(
    "--top", type=click.IntRange(min=1), default=None, metavar="N", help="Show only the N best matches."
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Worker processes for a large log file (default: STACKCHECK_TRIAGE_JOBS or the usable "
    "CPUs, at most 4; 1: one process). Pipes and files under 16 MiB are read by one process.",
)
@rules_option
@no_cache_option
@json_option
def triage(file, source, no_env, top, jobs, as_json) -> None:
    """Diagnose an error text, traceback or whole CI log (streamed; large files are fine).

    Finds the failure regions, matches the signatures of the knowledge rules (RE2,
    linear time), and ranks the matches by how specific they are and whether the
    environment agrees. No match: it says so and shows the failure region it found.
    """
    from stackcheck.cli import short_lived
    from stackcheck.errors import InputError
    from stackcheck.triage import triage_stream

    short_lived()  # bounded memory by design: collections in batches, no teardown at the end
    if file is None:
        if sys.stdin.isatty():
            raise click.UsageError("give a FILE, or '-' and pipe the error text on stdin")
        file = "-"
    if no_env and source.is_file:
        raise click.UsageError(f"--no-env cannot be combined with {source.option}")
    if file == "-" and source.value == "-":
        raise click.UsageError("stdin can feed either the error text or the environment, not both")

    snapshot, env_source, live = None, None, None
    if source.is_file:
        from stackcheck.environment import obtain

        snapshot = obtain(source)
        env_source = f"{_SOURCE_NAMES.get(source.kind, source.kind)} {source.value}"
    elif not no_env:

        def live():
            from stackcheck.environment import obtain

            return obtain(sections=("platform", "accelerators", "torch", "env"))

    if file == "-":
        stream, source = sys.stdin.buffer, "<stdin>"
    else:
        try:
            stream, source = open(file, "rb"), file  # noqa: SIM115 - closed below
        except OSError as exc:  # missing, a directory, no permission: one line, exit 2
            raise InputError(f"{file}: cannot read the error text: {exc.strerror or exc}") from None
    from stackcheck.progress import Progress, reading

    try:
        with Progress(f"triage: reading {source}", total=_size(stream), enabled=not as_json) as progress:
            diagnosis = triage_stream(
                reading(stream, progress),
                source=source,
                snapshot=snapshot,
                environment_source=env_source,
                live_environment=live,
                jobs=jobs,
            )
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if top is not None:
        diagnosis.matches = diagnosis.matches[:top]
    if as_json:
        emit_json(diagnosis)
    else:
        click.echo(render_text(diagnosis))
    finish(0)


# How a report names the environment it was judged against (other importers by their kind).
_SOURCE_NAMES = {"snapshot": "snapshot", "collect-env": "collect_env"}


def _size(stream) -> int | None:
    """The size of a regular file behind ``stream`` (a pipe has none)."""
    import os
    import stat

    try:
        info = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def render_text(d) -> str:
    width = 100
    out = [
        f"triage of {d.source}: {d.lines_read} lines, {d.regions_found} failure region(s); "
        f"environment: {d.environment_source}" + (f" ({d.environment_why})" if d.environment_why else ""),
        "",
    ]

    def wrap(text: str, indent: str) -> str:
        return textwrap.fill(
            text,
            width,
            initial_indent=indent,
            subsequent_indent=" " * len(indent),
            break_on_hyphens=False,
            break_long_words=False,
        )

    if not d.matches:
        out.append("No known cause matched (nothing is guessed).")
    for n, m in enumerate(d.matches, 1):
        out.append(f"{n}. {m.rule_id} {m.title}")
        generic = ", generic family" if m.layer == "family" else ""
        out.append(
            f"   category {m.category}{generic}, confidence {m.confidence}, environment {m.environment}, "
            f"score {m.score:g}"
        )
        if m.culprit:
            out.append(wrap(f"culprit: {m.culprit}", "   "))
        for e in m.evidence:
            out.append(wrap(e, "   - "))
        out.append(wrap(m.fix, "   fix: "))
        if m.sources:
            out.append(wrap(", ".join(m.sources[:3]), "   sources: "))
        out.append("")
    if d.failure_region:
        first, last = (d.failure_region_lines + [0, 0])[:2]
        what = "No failure region found; last lines" if d.failure_region_kind == "tail" else "Failure region"
        out.append(f"{what} (lines {first}-{last}):")
        out.extend(f"  | {line}" for line in d.failure_region.splitlines())
    return "\n".join(out).rstrip()
