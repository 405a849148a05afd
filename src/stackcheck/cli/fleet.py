"""``stackcheck fleet``: judge the snapshots of every rank of a job together."""

from __future__ import annotations

import click

from stackcheck.cli.common import (
    emit_json,
    emit_report,
    finish,
    json_option,
    markdown_option,
    one_output,
    profile_option,
    registry_option,
    skip_option,
    split_ids,
    strict_option,
    timeout_option,
    verbose_option,
)


@click.group()
def fleet():
    """Several ranks, one judgement: skew between nodes and ranks (FLT001-FLT014).

    \b
    Under the launcher:  torchrun --nproc-per-node 8 -m stackcheck preflight -p ID --distributed
    From files:          srun stackcheck snapshot -o snap-%t.json; stackcheck fleet compare snap-*.json
    """


@fleet.command()
@click.argument("snapshots", nargs=-1, required=True, metavar="SNAPSHOT...")
@profile_option("Also run this profile's preflight on every rank's snapshot.")
@registry_option
@skip_option
@json_option
@markdown_option
@verbose_option
@strict_option
def compare(snapshots, profile_id, registry, skip, as_json, as_markdown, verbose, strict):
    """Judge the snapshots of one job's ranks together (one file per rank; the rank is the
    snapshot's launch rank, or its position when the files have none).

    \b
    Examples:
      srun stackcheck snapshot -o snap-%t.json && stackcheck fleet compare snap-*.json
      stackcheck fleet compare node1.json node2.json --profile TRAIN-CUDA-MECHANISM --json
    """
    one_output(json=as_json, markdown=as_markdown)
    from stackcheck.environment import load_snapshot
    from stackcheck.fleet.judge import fleet_report
    from stackcheck.models.finding import exit_code

    if len(snapshots) > 4096:
        raise click.UsageError(f"at most 4096 snapshots, got {len(snapshots)}")
    profile = None
    if profile_id:
        from stackcheck.catalog import load_catalog

        profile = load_catalog(registry).get(profile_id)
    loaded = [load_snapshot(path) for path in snapshots]
    report = fleet_report("fleet", loaded, profile=profile, skip=split_ids(skip), launcher="files")
    emit_report(report, as_json=as_json, as_markdown=as_markdown, verbose=verbose)
    finish(exit_code(report.verdict, strict))


@fleet.command()
@click.option(
    "-o",
    "--out",
    "out_dir",
    required=True,
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Directory rank 0 writes rank-N.json into.",
)
@timeout_option
@json_option
def gather(out_dir, timeout_s, as_json):
    """Under torchrun or srun: gather every rank's snapshot to rank 0, which writes
    DIR/rank-N.json (then: stackcheck fleet compare DIR/rank-*.json).

    \b
    Example:
      torchrun --nnodes 2 --nproc-per-node 8 ... -m stackcheck fleet gather -o fleet-snapshots/
    """
    from stackcheck.environment import obtain
    from stackcheck.errors import InputError
    from stackcheck.fleet.gather import gather_snapshots, join
    from stackcheck.fleet.run import write_snapshots

    own = obtain(None)
    group = join(timeout_s, snapshot=own, who="fleet gather")
    code = None
    try:
        snaps = gather_snapshots(group, own)
        if group.rank == 0:
            written = write_snapshots(snaps, out_dir)
            if as_json:
                emit_json({"world_size": group.world_size, "written": [str(p) for p in written]})
            else:
                click.echo(f"{len(written)} snapshots written to {out_dir}")
            code = 0
    except InputError:
        code = 2  # rank 0's one-line error: every rank exits as it does
        raise
    finally:
        code = group.agree(code)
        group.close()
    finish(code)
