"""``stackcheck report --html DIR``: the review page (a static site, works from ``file://``)."""

from __future__ import annotations

import click

from stackcheck.cli.common import checked, emit_json, finish, json_option, registry_option
from stackcheck.cli.results import ledger_options


@click.command()
@click.option("--html", "out_dir", metavar="DIR", required=True, help="Write the site (DIR/index.html) here.")
@click.option(
    "--preflight",
    "report_files",
    metavar="REPORT",
    multiple=True,
    help="A `stackcheck preflight --json` report; its column is the file name (repeatable).",
)
@click.option(
    "--snapshot",
    "snapshot_files",
    metavar="FILE",
    multiple=True,
    help="A snapshot judged now against --profile (repeatable); its column is the file name.",
)
@click.option(
    "--profile",
    "-p",
    "profile_ids",
    metavar="ID",
    multiple=True,
    callback=checked(),
    help="Profiles the snapshots are judged against (default: those the ledger and reports name, "
    "else every profile of the registry).",
)
@registry_option
@click.option(
    "--rules",
    "rule_files",
    metavar="RULES",
    multiple=True,
    help="A mined rule file or folder (`stackcheck mine rules -o`), repeatable.",
)
@ledger_options(optional=True)
@json_option
def report(out_dir, report_files, snapshot_files, profile_ids, registry, rule_files, ledger, as_json):
    """Write the review page: the profiles × environments matrix of the latest preflight
    verdicts (click-through to the checks and fixes), the ledger by topic (candidates,
    records, evidence level, what each promotion still needs, decisions, candidate diffs),
    measured metrics per backend as charts (regressions marked) and the mined rules.

    \b
    Corrupt or tampered ledger files are marked on the page (and named on stderr), never fatal.
    An unwritable DIR is one line, exit 2.

    \b
    Examples:
      stackcheck report --html site/
      stackcheck report --html site/ --ledger-dir .stackcheck --rules mined.json
      stackcheck report --html site/ --snapshot h100.json --snapshot laptop.json -p BASE-CPU
      stackcheck report --html site/ --preflight node1.json --preflight node2.json
    """
    from pathlib import Path

    from stackcheck.fileio import require_creatable_dir
    from stackcheck.report import write_site
    from stackcheck.report.gather import gather

    require_creatable_dir(out_dir, "the report directory, --html")  # before any work
    reports = [(Path(f).stem, _preflight_report(f)) for f in report_files]
    snapshots, catalog = [], None
    if snapshot_files or profile_ids:
        from stackcheck.catalog import load_catalog
        from stackcheck.environment import load_snapshot

        catalog = load_catalog(registry)
        for pid in profile_ids:
            catalog.get(pid)  # an unknown ID is a one-line error before any judging
        snapshots = [(Path(f).stem, load_snapshot(f)) for f in snapshot_files]
    rows = []
    if rule_files:
        from stackcheck.knowledge.loader import load_rule_files
        from stackcheck.mining.report import rows_of

        rows = rows_of(load_rule_files([Path(f) for f in rule_files]))
    site = gather(
        ledger=ledger, reports=reports, snapshots=snapshots, profiles=profile_ids, catalog=catalog, rules=rows
    )
    index = write_site(out_dir, site)
    for path, problems in site.problems:
        click.echo(f"stackcheck: warning: {path}: {'; '.join(problems)} (marked on the page)", err=True)
    summary = {
        "index": str(index),
        "cells": len(site.cells),
        "topics": len(site.topics),
        "charts": len(site.charts),
        "rules": len(site.rules),
        "problems": len(site.problems),
    }
    if as_json:
        emit_json(summary)
    else:
        click.echo(
            f"wrote {index}: {len(site.profiles)} profile(s) × {len(site.environments)} environment(s), "
            f"{len(site.topics)} topic(s), {len(site.charts)} chart(s), {len(site.rules)} mined rule(s), "
            f"{len(site.problems)} problem(s)"
        )
    finish(0)


def _preflight_report(path: str):
    """A `preflight --json` report: one that lacks what every report has (``{}``, a snapshot,
    a config file) is a one-line error, never an OK cell of the matrix."""
    from stackcheck.errors import InputError
    from stackcheck.fileio import decode_json, read_bytes
    from stackcheck.models.finding import Report

    data = read_bytes(path, "preflight report")
    report = decode_json(data, Report, path, "preflight report")  # a wrong type is named first
    top = decode_json(data, dict, path, "preflight report")
    missing = [k for k in ("kind", "verdict", "checks") if k not in top]
    if missing:
        raise InputError(f"{path}: no {', '.join(missing)}: expected a `stackcheck preflight --json` report")
    return report
