"""``stackcheck preflight``: is this environment the one my experiment needs?"""

from __future__ import annotations

import click

from stackcheck.cli.common import (
    deep_option,
    emit_json,
    emit_report,
    finish,
    judging_options,
    one_output,
    profile_option,
    registry_option,
    rules_option,
    split_ids,
    timeout_option,
)
from stackcheck.cli.output import check_profile


@click.command()
@profile_option("Profile to check against (see --list-profiles).")
@click.option("--list-profiles", is_flag=True, help="List the profiles of the registry in use and exit.")
@registry_option
@rules_option
@deep_option
@click.option(
    "--metrics-file",
    metavar="PATH",
    help="Also write the verdicts and key facts for node-exporter's textfile collector (a *.prom file, "
    "written atomically).",
)
@click.option(
    "--otlp",
    is_flag=True,
    help="Also push the verdicts and key facts as OTLP metrics (opentelemetry-sdk; endpoint from "
    "OTEL_EXPORTER_OTLP_ENDPOINT).",
)
@click.option(
    "--distributed",
    is_flag=True,
    help="Run on every rank under torchrun or srun: gather all ranks' snapshots (gloo), judge each rank "
    "and the fleet (FLT001-FLT014) on rank 0, one report; every rank exits with rank 0's code.",
)
@timeout_option
@click.option(
    "--snapshots",
    "snapshot_dir",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="With --distributed: rank 0 also writes every rank's snapshot as DIR/rank-N.json (for "
    "`results record --snapshot DIR/rank-0.json --report REPORT.json`).",
)
@judging_options
def preflight(
    profile_id,
    list_profiles,
    registry,
    source,
    deep,
    metrics_file,
    otlp,
    distributed,
    timeout_s,
    snapshot_dir,
    skip,
    as_json,
    as_markdown,
    verbose,
    strict,
):
    """Check the live environment (or a recorded one) against a profile.

    Every check says ok / warning / blocked; each non-ok one shows what was observed, what
    the profile expects and a fix you can paste. The report's verdict is the worst check's.

    \b
    Examples:
      stackcheck preflight --list-profiles
      stackcheck preflight --profile BASE-CPU
      stackcheck preflight -p TRAIN-CUDA-MECHANISM --snapshot colleague.json
      stackcheck preflight -p INF-VLLM-011-CU128 --from-collect-env issue.txt --json
      stackcheck preflight -p PT-SFT-CUDA --skip GPU,CUDA     # CPU-only CI
      torchrun --nproc-per-node 8 -m stackcheck preflight -p TRAIN-CUDA-MECHANISM --distributed
    """
    one_output(json=as_json, markdown=as_markdown)
    from stackcheck.catalog import load_catalog

    # a plain check loads the catalog only when the verdict cache has no report (check_profile)
    catalog = load_catalog(registry) if list_profiles or distributed or not profile_id else None
    if list_profiles and catalog is not None:
        _list_profiles(catalog, as_json)
        return
    if not profile_id:
        raise click.UsageError("give --profile ID (or --list-profiles to see them)")
    if distributed and (metrics_file or otlp):
        raise click.UsageError("--metrics-file and --otlp are not yet available with --distributed")
    if distributed and catalog is not None:
        _distributed(
            catalog.get(profile_id),
            catalog.source,
            source,
            skip,
            (timeout_s, deep, snapshot_dir),
            (as_json, as_markdown, verbose, strict),
        )
        return
    if snapshot_dir:
        raise click.UsageError("--snapshots needs --distributed")
    shown = {"as_json": as_json, "as_markdown": as_markdown, "verbose": verbose, "strict": strict}
    publish = _monitors(metrics_file, otlp) if (metrics_file or otlp) else None
    finish(check_profile(registry, profile_id, source=source, skip=skip, deep=deep, publish=publish, **shown))


def _monitors(metrics_file, otlp):
    """Send the verdict and key facts where node monitoring looks (--metrics-file, --otlp)."""

    def publish(report, snapshot):
        if metrics_file:
            from stackcheck.integrations.prometheus import write_metrics_file

            write_metrics_file(metrics_file, report, snapshot)
        if otlp:
            from stackcheck.integrations.otlp import export_report

            if not export_report(report, snapshot):
                click.echo(
                    "stackcheck: warning: the OTLP export was not delivered (see OTEL_EXPORTER_OTLP_*)",
                    err=True,
                )

    return publish


def _distributed(profile, registry_source, source, skip, how, output):
    """Every rank runs this; rank 0 prints the one report."""
    (timeout_s, deep, snapshot_dir), (as_json, as_markdown, verbose, strict) = how, output
    if source is not None and source.kind != "live":
        raise click.UsageError(
            f"--distributed probes every rank's live environment; it takes no {source.option}"
        )
    from stackcheck.fleet.run import run_distributed, write_snapshots

    def emit(report, snapshots):
        report.environment["registry"] = registry_source
        if snapshot_dir:
            write_snapshots(snapshots, snapshot_dir)
        emit_report(report, as_json=as_json, as_markdown=as_markdown, verbose=verbose)

    done = run_distributed(
        "preflight",
        profile=profile,
        skip=tuple(split_ids(skip)),
        timeout_s=timeout_s,
        strict=strict,
        deep=deep,
        emit=emit,
    )
    finish(done.code)


def _list_profiles(catalog, as_json: bool) -> None:
    rows = catalog.summaries()
    if as_json:
        keys = ("id", "category", "evidence_scope", "title", "purpose")
        emit_json({"registry": catalog.source, "profiles": [{k: getattr(r, k) for k in keys} for r in rows]})
        return
    from stackcheck.render.profiles import profile_table

    click.echo(f"profiles from {catalog.source}:")
    click.echo("\n".join(profile_table(rows)))
