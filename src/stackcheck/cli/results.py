"""``stackcheck results …``: the result contract and the append-only evidence ledger."""

from __future__ import annotations

import functools

import click

from stackcheck.cli.common import (
    checked,
    emit_json,
    finish,
    json_option,
    registry_option,
    source_options,
)

LEVEL_CHOICE = click.Choice(["smoke", "mechanism", "measured", "reproduced", "delivery"])


def ledger_options(fn=None, *, optional: bool = False):
    """--ledger-dir / --ledger on every subcommand that touches the ledger; passes ``ledger``
    (``optional``: None when neither is given and the default ledger directory does not exist)."""
    if fn is None:
        return functools.partial(ledger_options, optional=optional)

    @click.option(
        "--ledger-dir",
        metavar="DIR",
        envvar="STACKCHECK_LEDGER_DIR",
        help="Where records/ and the SQLite index live (default: <git root or cwd>/.stackcheck; "
        "env STACKCHECK_LEDGER_DIR).",
    )
    @click.option(
        "--ledger",
        "ledger_url",
        metavar="DSN",
        envvar="STACKCHECK_LEDGER",
        help="Where the index lives instead of <ledger-dir>/ledger.sqlite: a PostgreSQL DSN "
        "(postgresql://user@host/db), sqlite:///abs/path, sqlite:relative/path or a file path in an "
        "existing directory (env STACKCHECK_LEDGER).",
    )
    @functools.wraps(fn)
    def wrapper(*args, ledger_dir, ledger_url, **kwargs):
        from stackcheck.results.index import parse_ledger_url
        from stackcheck.results.ledger import Ledger, default_root

        url = parse_ledger_url(ledger_url) if ledger_url else None
        if optional and not (ledger_dir or url or default_root().is_dir()):
            return fn(*args, ledger=None, **kwargs)
        with Ledger(ledger_dir or default_root(), url) as ledger:
            return fn(*args, ledger=ledger, **kwargs)

    return wrapper


@click.group()
def results():
    """Result contract and append-only evidence ledger.

    \b
    A number without its environment is a rumour: `record` completes a partial
    result with the environment snapshot, the preflight verdict of its profile,
    git state and digests, proves the claimed evidence level and stores it
    write-once. Levels: smoke < mechanism < measured < reproduced < delivery.

    \b
    Examples:
      stackcheck results record result.json
      stackcheck results list --topic inference/qwen2.5-0.5b-latency
      stackcheck results diff 1e88de52 7c0a9f31 --varying backend.args.attn_implementation
      stackcheck results promote 1e88de52 --to measured
      stackcheck results assets > docs/experiment-assets.md
    """


@results.command(short_help="Complete, prove and store a result (write-once).")
@click.argument("file", metavar="FILE")
@source_options("snapshot")
@registry_option
@click.option(
    "--report",
    "report_file",
    metavar="REPORT",
    help="Use this `stackcheck preflight --json` report of the same --snapshot instead of judging again.",
)
@click.option(
    "--artifact",
    metavar="PATH",
    type=click.Path(exists=True),
    help="The model or adapter directory measured: fills the model, adapter and tokenizer identity.",
)
@ledger_options
@json_option
def record(file, source, registry, report_file, artifact, ledger, as_json):
    """Complete a partial result FILE ('-': stdin), prove its evidence level and store it write-once.

    Prints the stored record's id and path. Exit 1 when the result is invalid or its
    claimed evidence level is not proven (the message lists what is missing), or when the
    --report judged another snapshot, profile or registry.
    """
    from stackcheck.render.results import flags_text, recorded_text
    from stackcheck.results.recording import record as record_result

    if report_file and not source.is_file:
        raise click.UsageError("--report needs the --snapshot FILE its preflight judged")
    snapshot = source.value if source.kind == "snapshot" else None
    if source.is_file and source.kind != "snapshot":
        from stackcheck.environment import obtain

        snapshot = obtain(source)
    done = record_result(
        file, snapshot=snapshot, ledger=ledger, registry=registry, report=report_file, artifact=artifact
    )
    if as_json:
        emit_json(done.stored)
    else:
        click.echo(recorded_text(done.stored, done.record, len(ledger.same_candidate(done.record))))
    if done.flags:
        click.echo(flags_text(done.flags), err=True)
    finish(0)


@results.command(short_help="Per-field check of drafts, records, the ledger.")
@click.argument("files", nargs=-1, metavar="[FILE]...")
@ledger_options
@json_option
def validate(files, ledger, as_json):
    """Validate result drafts, stored records or ledger events, field by field.

    Without FILE, validates the whole ledger: every record and event file (corrupt and
    tampered ones are reported), the chain that links them (a deleted, replaced or re-hashed
    file is named), files and index rows without each other, stale temp files of crashed
    writes. Exit 1 when anything is invalid or tampered, 2 when a FILE is unreadable.
    """
    from stackcheck.render.results import validation_text
    from stackcheck.results.validation import validate_file, validate_ledger

    reports = [validate_file(p) for p in files] if files else validate_ledger(ledger)
    if as_json:
        emit_json(reports)
    else:
        click.echo(validation_text(reports, ledger.root))
    if files and any(r.unreadable for r in reports):
        finish(2)
    finish(1 if any(not r.valid for r in reports) else 0)


@results.command("list", short_help="List records with their evidence level.")
@click.option("--topic", metavar="TOPIC", callback=checked("topic"), help="Only the records of this topic.")
@ledger_options
@json_option
def list_(topic, ledger, as_json):
    """List stored records (oldest first) with their effective evidence level."""
    from stackcheck.render.results import listing_text

    entries = ledger.entries(topic)
    _warn_skipped(ledger)
    if as_json:
        emit_json([e.stored() for e in entries])
        finish(0)
    click.echo(listing_text(entries, topic, ledger.root))
    finish(0)


@results.command(short_help="Show one record.")
@click.argument("record_id", metavar="ID")
@ledger_options
@json_option
def show(record_id, ledger, as_json):
    """Show one record (ID: any unique prefix of its digest)."""
    from stackcheck.redaction import redact_value
    from stackcheck.render.results import record_text
    from stackcheck.results.compare import hardware

    rec, path = ledger.get(record_id)
    entry = ledger.entry(rec, path)
    rec = redact_value(rec)  # a record stored before redaction existed is still shown clean
    if as_json:
        emit_json(rec)
        finish(0)
    click.echo(record_text(rec, entry, path, hardware(rec.snapshot)))
    finish(0)


@results.command(short_help="Why did my number change? Comparable or not.")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option(
    "--varying",
    multiple=True,
    metavar="FIELD",
    help="The variable under test, e.g. backend.args.attn_implementation (repeatable; a prefix such as "
    "backend covers its fields).",
)
@ledger_options
@json_option
def diff(a, b, varying, ledger, as_json):
    """What differs between two records (identity, environment, metrics), and whether their
    numbers may be compared. Exit 1 when they are not comparable."""
    from stackcheck.redaction import redact_value
    from stackcheck.render.results import diff_text
    from stackcheck.results.compare import diff as diff_records

    d = redact_value(diff_records(ledger.get(a)[0], ledger.get(b)[0], list(varying)))
    if as_json:
        emit_json(d)
    else:
        click.echo(diff_text(d))
    finish(0 if d.comparable else 1)


@results.command(short_help="Raise an evidence level, with proof.")
@click.argument("record_id", metavar="ID")
@click.option("--to", "level", type=LEVEL_CHOICE, required=True, help="The level to reach.")
@ledger_options
@json_option
def promote(record_id, level, ledger, as_json):
    """Raise a record's evidence level by an append-only promotion event; refuses (exit 1)
    and lists what is missing when the proof is not there."""
    from stackcheck.render.results import promoted_text

    rec, _ = ledger.get(record_id)
    event = ledger.promote(rec, level)
    if as_json:
        emit_json(
            {
                "event": event.digest.partition(":")[2][:16],
                "record": event.record_id[:16],
                "evidence": level,
                "proof": event.proof,
            }
        )
    else:
        click.echo(promoted_text(event, level))
    finish(0)


@results.command(short_help="Record the decision of a topic.")
@click.argument("topic", callback=checked("topic"))
@click.argument("run_label", callback=checked())
@click.option(
    "--decision",
    required=True,
    metavar="TEXT",
    callback=checked("text"),
    help="What was decided, e.g. 'ship sdpa; flash-attn gains <2%'.",
)
@ledger_options
@json_option
def decide(topic, run_label, decision, ledger, as_json):
    """Record a decision about RUN_LABEL of TOPIC; it becomes the topic's current decision."""
    from stackcheck.redaction import redact_text
    from stackcheck.render.results import decision_text

    event = ledger.decide(topic, run_label, redact_text(decision))  # events are write-once too
    short_id = event.digest.partition(":")[2][:16]
    if as_json:
        emit_json({"event": short_id, "topic": topic, "run_label": run_label, "decision": event.text})
    else:
        click.echo(decision_text(short_id, topic, run_label, event.text))
    finish(0)


@results.command(short_help="The experiment-assets table as Markdown.")
@click.option("--topic", metavar="TOPIC", callback=checked("topic"), help="Only this topic.")
@ledger_options
@json_option
def assets(topic, ledger, as_json):
    """The experiment-assets table (Markdown) from the ledger: RUN_LABEL, topic, result
    path, evidence level, current decision."""
    from stackcheck.render.results import assets_markdown
    from stackcheck.results.assets import asset_rows

    rows = asset_rows(ledger, topic)
    _warn_skipped(ledger)
    if as_json:
        emit_json(rows)
    else:
        click.echo(assets_markdown(rows), nl=False)
    finish(0)


@results.command(short_help="Push records to MLflow or W&B as runs.")
@click.option("--to", "target", type=click.Choice(["mlflow", "wandb"]), required=True, help="The tracker.")
@click.option("--topic", metavar="TOPIC", callback=checked("topic"), help="Only the records of this topic.")
@click.option(
    "--experiment",
    metavar="NAME",
    default="stackcheck",
    show_default=True,
    help="MLflow experiment / W&B project the runs go to.",
)
@click.option(
    "--tracking-uri",
    metavar="URI",
    help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else MLflow's default).",
)
@ledger_options
@json_option
def export(target, topic, experiment, tracking_uri, ledger, as_json):
    """Push the ledger's records (optionally of one topic) as runs with their metrics,
    identity (params / config), topic, evidence level and record id (tags) and their
    redacted snapshot (artifact). MLflow skips records already exported to the experiment;
    W&B follows WANDB_MODE (offline: runs under WANDB_DIR, `wandb sync` uploads them).

    \b
    Examples:
      stackcheck results export --to mlflow --experiment course --tracking-uri http://mlflow:5000
      WANDB_MODE=offline stackcheck results export --to wandb --topic bench/gemm --json
    """
    entries = ledger.entries(topic)
    _warn_skipped(ledger)
    if target == "mlflow":
        from stackcheck.integrations.mlflow import export_records

        done = export_records(entries, experiment=experiment, tracking_uri=tracking_uri)
    else:
        from stackcheck.integrations.wandb import export_records as export_wandb

        done = export_wandb(entries, project=experiment)
    if as_json:
        emit_json(done)
    else:
        new = sum(d["exported"] for d in done)
        click.echo(f"exported {new} record(s) to {target} {experiment}; {len(done) - new} already there")
    finish(0)


@results.command(short_help="Rebuild the index from the files.")
@ledger_options
@json_option
def reindex(ledger, as_json):
    """Rebuild the index from the record and event files (after a crash, a copy, or to
    move the index to PostgreSQL with --ledger). Files that are corrupt, tampered or not
    storable in the index are skipped and named; stale temp files of crashed writes are
    removed; the chain's head is kept."""
    from stackcheck.render.results import reindex_text

    counts = ledger.reindex()
    _warn_skipped(ledger)
    for path in ledger.removed:
        click.echo(f"stackcheck: removed stale temp file {path}", err=True)
    for note in ledger.notes:
        click.echo(f"stackcheck: warning: {note}", err=True)
    if as_json:
        emit_json(counts)
    else:
        click.echo(reindex_text(counts))
    finish(0)


def _warn_skipped(ledger) -> None:
    for problem in dict.fromkeys(ledger.skipped):
        click.echo(f"stackcheck: warning: skipped {problem}", err=True)
