"""``stackcheck preflight``: is this environment the one my experiment needs?"""

from __future__ import annotations

import click

from stackcheck.cli.common import (
    deep_option,
    emit_json,
    finish,
    judging_options,
    one_output,
    profile_option,
    registry_option,
    rules_option,
)
from stackcheck.cli.output import check_profile


@click.command()
@profile_option("Profile to check against (see --list-profiles).")
@click.option("--list-profiles", is_flag=True, help="List the profiles of the registry in use and exit.")
@registry_option
@rules_option
@deep_option
@judging_options
def preflight(
    profile_id,
    list_profiles,
    registry,
    source,
    deep,
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
    """
    one_output(json=as_json, markdown=as_markdown)
    from stackcheck.catalog import load_catalog

    catalog = load_catalog(registry)
    if list_profiles:
        _list_profiles(catalog, as_json)
        return
    if not profile_id:
        raise click.UsageError("give --profile ID (or --list-profiles to see them)")
    shown = {"as_json": as_json, "as_markdown": as_markdown, "verbose": verbose, "strict": strict}
    finish(check_profile(catalog, profile_id, source=source, skip=skip, deep=deep, **shown))


def _list_profiles(catalog, as_json: bool) -> None:
    rows = catalog.summaries()
    if as_json:
        keys = ("id", "category", "evidence_scope", "title", "purpose")
        emit_json({"registry": catalog.source, "profiles": [{k: getattr(r, k) for k in keys} for r in rows]})
        return
    from stackcheck.render.profiles import profile_table

    click.echo(f"profiles from {catalog.source}:")
    click.echo("\n".join(profile_table(rows)))
