"""``stackcheck mine``: CI logs → verifiable knowledge rules (ingest, rules, summary, verify)."""

from __future__ import annotations

import sys

import click

from stackcheck.cli.common import emit_json, finish, json_option

store_option = click.option(
    "--store",
    metavar="URL",
    help="Mining store: a SQLite file or postgresql:// DSN (default: the ledger's database, "
    "$STACKCHECK_LEDGER or .stackcheck/ledger.sqlite).",
)


def _progress(i: int, n: int, src) -> None:
    if sys.stderr.isatty():  # progress only for a person watching
        click.echo(f"\rscanning {i + 1}/{n}: {src.job[:60]:<60}", err=True, nl=i + 1 == n)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def mine() -> None:
    """Turn CI logs into rules: failure signature + the environment cells where it fails +
    how reliably it reproduces, in the knowledge rule schema (provenance "mined").

    \b
    Examples:
      stackcheck mine ingest logs_6234567890.zip --runs runs.jsonl
      stackcheck mine ingest ci-logs/ --store postgresql://ci@db/stackcheck
      stackcheck mine rules -o requirements/stackcheck-rules/mined.json
      stackcheck mine summary requirements/stackcheck-rules/mined.json --markdown
      stackcheck mine verify mined.json --labelled labelled/
      stackcheck triage failed.log --rules mined.json
    """


@mine.command(
    epilog="""\b
Examples:
  stackcheck mine ingest logs_6234567890.zip               # a run's logs as downloaded
  stackcheck mine ingest run-logs/ --runs runs.jsonl       # unpacked, with a sidecar
  stackcheck mine ingest pytest.log --run 42 --job 'test (ubuntu-22.04, 3.11)' --outcome failed
  stackcheck mine ingest matrix/                           # a folder with runs.jsonl

\b
Idempotent per (run, job, attempt): ingesting again stores nothing new. One transaction per
run: unusable input (a truncated zip, a binary file, a bad sidecar line) stores nothing and
exits 2 with one line naming the file and line."""
)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "--runs",
    "sidecar",
    metavar="FILE",
    help="runs.jsonl sidecar: job, attempt, outcome and env facts per job.",
)
@click.option(
    "--run",
    "run_id",
    metavar="ID",
    help="The run's ID (default: the sidecar's, else digits in the file name).",
)
@click.option(
    "--attempt", type=click.IntRange(min=1), help="The attempt (re-run) number (default 1, or the sidecar's)."
)
@click.option("--job", metavar="NAME", help="The job's name, for a single log file (default: the file name).")
@click.option(
    "--outcome",
    type=click.Choice(["failed", "passed"]),
    help="The job's outcome (default: read from the log).",
)
@store_option
@json_option
def ingest(paths, sidecar, run_id, attempt, job, outcome, store, as_json) -> None:
    """Scan one run's job logs and store their signatures, cells and outcomes."""
    from stackcheck.mining.ingest import scan_jobs
    from stackcheck.mining.inputs import discover
    from stackcheck.mining.store import MineStore, utc_now

    sources = []
    for path in paths:
        sources.extend(discover(path, run=run_id, attempt=attempt, job=job, outcome=outcome, sidecar=sidecar))
    records = scan_jobs(sources, progress=_progress)
    with MineStore(store) as st:
        results = st.ingest(records, source=", ".join(paths), now=utc_now())
        name = st.name
    if as_json:
        emit_json(
            {
                "store": name,
                "runs": results,
                "jobs": [
                    {
                        "run": r.run,
                        "job": r.job,
                        "attempt": r.attempt,
                        "family": r.family,
                        "outcome": r.outcome,
                        "signatures": len(r.failures),
                        "lines": r.lines,
                        "facts": r.facts,
                    }
                    for r in records
                ],
            }
        )
    else:
        for res in results:
            click.echo(
                f"run {res.run}: {res.stored} job(s) stored ({res.failed} failed, {res.signatures} "
                f"signature(s)), {res.already} already in {name}"
            )
        quiet = [r for r in records if r.outcome == "failed" and not r.failures]
        for r in quiet[:5]:
            click.echo(f"  note: {r.source}: failed, but no failure region was found in its log")
    finish(0)


@mine.command(
    epilog="""\b
Examples:
  stackcheck mine rules                                   # the table
  stackcheck mine rules -o requirements/stackcheck-rules/mined.json
  stackcheck mine rules --min-support 3 --max-fp 0.05 --json

\b
A signature becomes a rule with at least --min-support failed jobs and a false-positive
rate (its share of the passing jobs of its job family) of at most --max-fp. It is
"reproducible" when the Wilson lower bound of its failure rate in its scope reaches 0.85
(at 95 %: 22 attempts, all failing, at the least), "flaky" otherwise, "unconfirmed" when
every attempt failed but too few were seen."""
)
@store_option
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    help="Write the rule file (atomically); triage/preflight --rules FILE use it.",
)
@click.option("--min-support", type=click.IntRange(min=1), default=2, show_default=True)
@click.option(
    "--max-fp",
    type=click.FloatRange(0, 1),
    default=0.2,
    show_default=True,
    help="Highest false-positive rate kept.",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 0.999),
    default=0.95,
    show_default=True,
    help="Confidence of the Wilson bound.",
)
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the table as Markdown.")
@json_option
def rules(store, output, min_support, max_fp, confidence, as_markdown, as_json) -> None:
    """Build rules from everything in the store (set-based SQL over all runs)."""
    from stackcheck.mining.rules import MineOptions, build_rules
    from stackcheck.mining.store import MineStore
    from stackcheck.render.mining import summary_markdown, summary_text

    with MineStore(store) as st:
        mined = build_rules(
            st, MineOptions(min_support=min_support, max_false_positive_rate=max_fp, confidence=confidence)
        )
    if output:
        import msgspec

        from stackcheck.fileio import atomic_write

        atomic_write(output, msgspec.json.format(msgspec.json.encode(mined.rules), indent=2) + b"\n")
    if as_json:
        emit_json(mined)
    elif as_markdown:
        click.echo(summary_markdown(mined.summary))
    else:
        click.echo(summary_text(mined.summary, mined))
        if output:
            click.echo(f"wrote {len(mined.rules.rules)} rule(s) to {output}")
    finish(0)


def _read_rules(path: str):
    from pathlib import Path

    from stackcheck.knowledge.loader import load_rule_files

    return load_rule_files([Path(path)])


@mine.command(
    epilog="""\b
Examples:
  stackcheck mine summary mined.json
  stackcheck mine summary requirements/stackcheck-rules/ --markdown"""
)
@click.argument("rule_file", metavar="RULES")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the table as Markdown.")
@json_option
def summary(rule_file, as_markdown, as_json) -> None:
    """The table of a mined rule file: rule, coverage, reproduce rate, false positives, scope."""
    from stackcheck.mining.report import rows_of
    from stackcheck.render.mining import summary_markdown, summary_text

    rows = rows_of(_read_rules(rule_file))
    if as_json:
        emit_json(rows)
    else:
        click.echo(summary_markdown(rows) if as_markdown else summary_text(rows))
    finish(0)


@mine.command(
    epilog="""\b
Examples:
  stackcheck mine verify mined.json --labelled tests/data/mining/matrix
  stackcheck mine verify requirements/stackcheck-rules/ --labelled held-out/ --json

\b
DIR/labels.jsonl: {"log": PATH, "test": ID, "group": CAUSE} per failed test, {"log": PATH,
"group": CAUSE} per failed log, {"log": PATH, "outcome": "passed"} per passing job."""
)
@click.argument("rule_file", metavar="RULES")
@click.option(
    "--labelled",
    "labelled",
    required=True,
    metavar="DIR",
    help="Folder with labels.jsonl and the logs it names.",
)
@json_option
def verify(rule_file, labelled, as_json) -> None:
    """Coverage, precision, false positives and grouping accuracy (GA, FGA, ARI) of rules on a
    labelled set."""
    from stackcheck.mining.verify import verify as run_verify

    result = run_verify(_read_rules(rule_file), labelled)
    if as_json:
        emit_json(result)
    else:
        click.echo(
            f"{result.rules} rule(s) on {result.failures} labelled failure(s) in {result.groups} group(s), "
            f"{result.passing_logs} passing log(s)"
        )
        click.echo(
            f"  coverage {result.coverage:.1%}  precision {result.precision:.1%}  "
            f"false positives {result.false_positive_logs}/{result.passing_logs} "
            f"({result.false_positive_rate:.1%})"
        )
        click.echo(
            f"  grouping: GA {result.grouping_accuracy:.3f}  FGA {result.fga:.3f}  ARI {result.ari:.3f}"
        )
        for rule, groups in result.per_rule.items():
            click.echo(f"  {rule}: " + ", ".join(f"{g} {n}" for g, n in groups.items()))
        for m in result.missed[:5]:
            click.echo(f"  missed: {m}")
    finish(0)
