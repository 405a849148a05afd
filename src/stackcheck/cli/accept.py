"""``stackcheck accept``: does this environment actually work, end to end?"""

from __future__ import annotations

import sys

import click

from stackcheck.cli.common import (
    emit_report,
    finish,
    json_option,
    profile_option,
    registry_option,
    source_options,
    strict_option,
)


@click.command()
@profile_option("Also run this profile's preflight; decides which packages the steps insist on.")
@registry_option
@source_options("python", importers=False)  # the steps run in an interpreter: no recorded facts
@click.option(
    "--out",
    "out_dir",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Report directory (default: ./stackcheck-accept-<UTC timestamp>/).",
)
@click.option(
    "--repo",
    metavar="DIR",
    help="Repository for the hygiene step (default: the one containing the current directory).",
)
@click.option(
    "--timeout",
    default=300.0,
    show_default=True,
    metavar="S",
    type=click.FloatRange(min=1),
    help="Time limit of each step's child process, in seconds.",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Also list ok and skipped steps, with what each ok step observed."
)
@click.option(
    "--distributed",
    is_flag=True,
    help="Run on every rank under torchrun or srun: all_reduce, all_gather, reduce_scatter, broadcast and "
    "barrier with known answers (FLT101-FLT105, a hang names the ranks that never arrived) and an "
    "all_reduce bus-bandwidth sweep (FLT106); NCCL on GPUs, gloo on CPU. --timeout bounds each collective.",
)
@json_option
@strict_option
def accept(profile_id, registry, source, out_dir, repo, timeout, distributed, verbose, as_json, strict):
    """Run the acceptance steps in the checked interpreter, each in its own child process
    with a timeout (stackcheck need not be installed there):

    \b
      ACC001  NumPy solves a linear system and multiplies matrices with known answers
      ACC002  torch trains a tiny transformer block: loss decreases, gradients finite
      ACC003  a GPU matmul matches the same product on the CPU (skipped without a GPU)
      ACC004  weights saved with safetensors reload in a fresh process, outputs bit-identical
      ACC005  the version report: snapshot.json + summary.txt in the report directory
      ACC006  the hygiene scan of the repository (skipped outside git)
      ACC007  the profile's preflight (with --profile)

    A missing package blocks the steps that need it (with the pip command for the checked
    interpreter) when the profile requires it, or always without --profile (the standard
    stack: numpy, torch, safetensors); a profile that does not need it skips them.
    The report directory holds report.json (same shape as preflight's, kind "accept").
    While the steps run, a line per finished step goes to stderr when it is a terminal
    (not with --json); a step that runs into --timeout says so.

    \b
    Examples:
      stackcheck accept
      stackcheck accept --python .venv/bin/python --profile TRAIN-CPU --out acceptance/
      torchrun --nproc-per-node 8 -m stackcheck accept --distributed --timeout 60
    """
    from stackcheck.accept import accept as run_acceptance
    from stackcheck.models.finding import exit_code

    profile, registry_source = None, None
    if profile_id:
        from stackcheck.catalog import load_catalog

        catalog = load_catalog(registry)
        profile, registry_source = catalog.get(profile_id), catalog.source
    if distributed:
        if source.value:
            raise click.UsageError("--distributed runs in every rank's own interpreter; it takes no --python")
        _distributed(profile, registry_source, out_dir, timeout, verbose, as_json, strict)
        return
    python_path = source.value or None
    if python_path:
        from stackcheck.probe.foreign import resolve_python

        python_path = resolve_python(python_path)
    # a line per finished step while the 15-25 s pass, for a person watching a terminal
    progress = None if as_json or not sys.stderr.isatty() else (lambda line: click.echo(line, err=True))
    result = run_acceptance(
        python_path=python_path,
        profile=profile,
        out_dir=out_dir,
        repo=repo,
        timeout=timeout,
        registry_source=registry_source,
        progress=progress,
    )
    emit_report(result.report, as_json=as_json, verbose=verbose)
    if not as_json:
        if verbose:  # for acceptance the evidence of the passing steps is the point
            for c in result.report.checks:
                if c.verdict == "ok" and c.observed:
                    click.echo(f"  {c.id}: {c.observed}")
        click.echo(f"  report: {result.report_path}")
    finish(exit_code(result.report.verdict, strict))


def _distributed(profile, registry_source, out_dir, timeout, verbose, as_json, strict):
    """Every rank runs the collectives; rank 0 writes the report directory and prints."""
    from stackcheck.fleet.run import run_distributed, write_report

    def emit(report, snapshots):
        if registry_source:
            report.environment["registry"] = registry_source
        path = write_report(report, snapshots, out_dir)
        emit_report(report, as_json=as_json, verbose=verbose)
        if not as_json:
            click.echo(f"  report: {path}")

    done = run_distributed(
        "accept", profile=profile, timeout_s=timeout, collectives=True, strict=strict, emit=emit
    )
    finish(done.code)
