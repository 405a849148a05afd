"""``stackcheck snapshot``: capture (or import, or re-read) the runtime snapshot of an environment."""

from __future__ import annotations

import click

from stackcheck.cli.common import deep_option, emit_json, finish, json_option, source_options


@click.command()
@json_option
@click.option(
    "-o",
    "--output",
    "output",
    metavar="FILE",
    help="Write the snapshot JSON to FILE (atomically) and print the path.",
)
@deep_option
@source_options("python", "snapshot")
def snapshot(as_json, output, deep, source):
    """Capture the runtime snapshot: OS, Python, packages, torch build, driver, GPUs, hosted
    platform, kernels, redacted environment, git.

    \b
    The default tier never imports torch and never creates a CUDA context: it reads package
    metadata, torch/version.py, the driver version file and NVML (if nvidia-ml-py is there).
    --deep also imports torch in a child process (with a timeout) for cuda.is_available(),
    the device count, the compiled arch list and cuDNN.

    \b
    Examples:
      stackcheck snapshot                              # readable summary
      stackcheck snapshot --json -o env.json           # save it for a bug report or --snapshot
      stackcheck snapshot --python .venv/bin/python    # another interpreter, nothing installed there
      stackcheck snapshot --from-collect-env issue.txt --json
    """
    from stackcheck.environment import obtain
    from stackcheck.progress import ticking

    live_deep = deep and not source.is_file
    with ticking("snapshot: importing torch in a child process (--deep)", enabled=live_deep and not as_json):
        snap = obtain(source, deep=deep)
    if output:
        import msgspec

        from stackcheck.environment import snapshot_digest
        from stackcheck.fileio import atomic_write, cannot_write

        try:
            path = atomic_write(output, msgspec.json.format(msgspec.json.encode(snap), indent=2) + b"\n")
        except OSError as exc:
            raise cannot_write(output, "snapshot", exc) from None
        if as_json:
            emit_json({"written": str(path), "digest": snapshot_digest(snap)})
        else:
            click.echo(str(path))
    elif as_json:
        emit_json(snap)
    else:
        from stackcheck.render.snapshot import snapshot_text

        click.echo(snapshot_text(snap, origin=source.value if source.is_file else None))
    finish(0)
