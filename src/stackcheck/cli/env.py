"""``stackcheck env``: create, lock, restore and diff an environment made from a profile."""

from __future__ import annotations

import os

import click

from stackcheck.cli import short_lived
from stackcheck.cli.common import emit_json, finish, json_option, profile_option, registry_option
from stackcheck.cli.env_create import create_env, plan_of, sources_of, warn


def _sources_options(fn):
    for option in reversed(
        (
            click.option("--index-url", metavar="URL", help="Package index (replaces pip's configured one)."),
            click.option(
                "--extra-index-url", "extra_index_urls", multiple=True, metavar="URL", help="Another index."
            ),
            click.option(
                "--find-links", "find_links", multiple=True, metavar="DIR|URL", help="A wheelhouse to use."
            ),
            click.option("--no-index", is_flag=True, help="Only --find-links: no package index."),
            click.option(
                "--installer",
                type=click.Choice(["auto", "uv", "pip"]),
                default="auto",
                show_default=True,
                help="auto: uv when it is installed, else venv + pip.",
            ),
        )
    ):
        fn = option(fn)
    return fn


_cuda_option = click.option(
    "--cuda",
    default="auto",
    show_default=True,
    metavar="auto|cpu|cuNNN",
    help="The torch build: auto picks it from this machine's driver and GPUs (or --snapshot's).",
)
_python_option = click.option(
    "--python",
    "python",
    metavar="X.Y|PATH",
    help="Base interpreter (default: this one, if the profile allows it).",
)
_facts_option = click.option(
    "--snapshot",
    "snapshot_file",
    metavar="FILE",
    help="Choose the torch build from a recorded snapshot's facts.",
)


@click.group()
def env() -> None:
    """Create, lock, restore and diff an environment made from a profile.

    \b
    Examples:
      stackcheck env create --profile TRAIN-CPU --path .venv --kernel train-cpu
      stackcheck env create --profile PT-SFT-CUDA --dry-run
      stackcheck env lock --profile TRAIN-CPU -o train-cpu.lock.json
      stackcheck env restore train-cpu.lock.json --path .venv-repro
      stackcheck env diff train-cpu.lock.json --python .venv/bin/python
    """


@env.command()
@profile_option("The profile to build the environment from.")
@registry_option
@click.option("--path", default=".venv", show_default=True, metavar="DIR", help="Where to create it.")
@_python_option
@_cuda_option
@click.option("--kernel", metavar="NAME", help="Also register a Jupyter kernel NAME for it.")
@click.option(
    "--dry-run", is_flag=True, help="Print the plan and the exact commands; change and contact nothing."
)
@click.option("--force", is_flag=True, help="Replace an existing environment at DIR.")
@_facts_option
@_sources_options
@json_option
def create(
    profile_id, registry, path, python, cuda, kernel, dry_run, force, snapshot_file, index_url,
    extra_index_urls, find_links, no_index, installer, as_json,
) -> None:  # fmt: skip
    """Create an environment from a profile: the right torch build, no forbidden package,
    the kernel, then its preflight.

    The torch build comes from the facts (--cuda auto): a CPU build for a CPU profile, else
    the newest CUDA build of the allowed torch that the driver runs and that covers the GPUs.
    The user's pip configuration (index, find-links, certificate, constraints) is honoured
    and carried over to uv. Exit 0 when the new environment passes its preflight (warnings
    too), 1 when it is blocked or the plan is refused, 2 on bad input.
    """
    short_lived()  # ~60 collections while ~300 modules load, freeing nothing; no teardown
    if not profile_id:
        raise click.UsageError("--profile ID is required")
    create_env(
        profile_id, registry, path, python, cuda, kernel, dry_run, force, snapshot_file, index_url,
        extra_index_urls, find_links, no_index, installer, as_json,
    )  # fmt: skip


@env.command()
@profile_option("The profile to lock.")
@registry_option
@_python_option
@_cuda_option
@_facts_option
@_sources_options
@click.option("-o", "--output", metavar="FILE", help="Write the lock to FILE (atomically) instead of stdout.")
@json_option
def lock(
    profile_id, registry, python, cuda, snapshot_file, index_url, extra_index_urls, find_links, no_index,
    installer, output, as_json,
) -> None:  # fmt: skip
    """Resolve a profile into a lock: exact versions, hashes and sources, valid for this
    platform, Python and torch build (named in its header). Nothing is installed."""
    from stackcheck.provision.create import lock_plan
    from stackcheck.provision.installer import choose_installer

    if not profile_id:
        raise click.UsageError("--profile ID is required")
    if output:
        from stackcheck.fileio import require_creatable_dir

        require_creatable_dir(os.path.dirname(os.path.abspath(output)), "a directory for the lock")
    sources, warnings = sources_of(index_url, extra_index_urls, find_links, no_index)
    warn(warnings)
    plan = plan_of(profile_id, registry, python, cuda, snapshot_file, sources)
    locked = lock_plan(plan, choose_installer(installer), progress=not as_json)
    data = locked.encode()
    if output is None:  # the lock itself is JSON (--json changes nothing here)
        click.echo(data.decode(), nl=False)
        return
    from stackcheck.fileio import atomic_write, cannot_write

    try:
        written = str(atomic_write(output, data))
    except OSError as exc:
        raise cannot_write(output, "lock", exc) from None
    if as_json:
        emit_json({"path": written, "profile": locked.header.profile, "packages": len(locked.packages)})
    else:
        click.echo(written)


@env.command()
@click.argument("lock_file", metavar="LOCK")
@click.option("--path", default=".venv", show_default=True, metavar="DIR", help="Where to create it.")
@_python_option
@click.option("--force", is_flag=True, help="Replace an existing environment at DIR.")
@_sources_options
@json_option
def restore(
    lock_file, path, python, force, index_url, extra_index_urls, find_links, no_index, installer, as_json
) -> None:
    """Recreate a locked environment exactly: the hashed pins, no resolution, then the
    installed set verified against the lock. The lock's sources are used unless given."""
    from stackcheck.errors import Refused
    from stackcheck.provision.create import check_target, find_python, lock_fits
    from stackcheck.provision.create import restore as rebuild
    from stackcheck.provision.installer import check_sources, choose_installer, merge_sources, pip_config
    from stackcheck.provision.lock import load_lock
    from stackcheck.provision.plan import Sources

    lock = load_lock(lock_file)
    check_target(path, force=force)
    exe, version = find_python(python or _python_for(lock.header.python), None)
    from stackcheck.provision.create import machine_facts

    facts = machine_facts()
    misfit = lock_fits(lock, python=version, system=facts.platform.system, machine=facts.platform.machine)
    if misfit:
        raise Refused(f"{lock_file}: the lock is for " + "; ".join(misfit))
    given = bool(index_url or extra_index_urls or find_links or no_index)
    base = pip_config() if given else Sources.from_args(lock.header.sources)
    sources, warnings = check_sources(
        merge_sources(base, index_url=index_url, extra_index_urls=tuple(extra_index_urls),
                      find_links=tuple(find_links), no_index=no_index)
    )  # fmt: skip
    warn(warnings)
    outcome = rebuild(
        lock, path, choose_installer(installer), python=exe, system=facts.platform.system, sources=sources,
        force=force, progress=not as_json,
    )  # fmt: skip
    if as_json:
        emit_json(
            {"path": path, "interpreter": outcome.python, "packages": len(lock.packages), "verified": True}
        )
        return
    click.echo(f"restored {path}: {len(lock.packages)} packages, verified against {lock_file}")


def _python_for(version: str) -> str | None:
    import sys

    return None if f"{sys.version_info[0]}.{sys.version_info[1]}" == version else version


@env.command()
@click.argument("lock_file", metavar="LOCK")
@click.option(
    "--python", "python_path", metavar="PATH", help="The environment's interpreter (default: this one)."
)
@json_option
def diff(lock_file, python_path, as_json) -> None:
    """Drift of an environment from a lock: packages added, removed or changed. Exit 0 when
    there is none, 1 when there is."""
    from stackcheck.environment import obtain
    from stackcheck.provision.lock import drift, installed_versions, load_lock
    from stackcheck.sources import FactSource

    lock = load_lock(lock_file)
    source = FactSource("python", python_path) if python_path else FactSource()
    found = drift(lock, installed_versions(obtain(source, sections=())))
    if as_json:
        emit_json({"lock": lock_file, "profile": lock.header.profile, "drift": found.to_json()})
    elif found:
        click.echo("\n".join(found.lines()))
    else:
        click.echo(f"no drift from {lock_file} ({len(lock.packages)} packages)")
    finish(1 if found else 0)
