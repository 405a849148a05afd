"""``stackcheck preflight``: is this environment the one my experiment needs?"""

from __future__ import annotations

import click

from stackcheck.cli.common import (
    collect_env_option,
    deep_option,
    emit_json,
    finish,
    json_option,
    python_option,
    registry_option,
    snapshot_option,
    strict_option,
)


def split_ids(values: tuple[str, ...]) -> list[str]:
    """--skip GPU001 --skip CUDA,PLAT001 → ["GPU001", "CUDA", "PLAT001"]."""
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


@click.command()
@click.option("--profile", "-p", "profile_id", metavar="ID", help="Profile to check against (see --list-profiles).")
@click.option("--list-profiles", is_flag=True, help="List the profiles of the registry in use and exit.")
@registry_option
@python_option
@click.option("--kernel", "kernel_name", metavar="NAME", help="Check the interpreter a Jupyter kernel runs.")
@snapshot_option
@collect_env_option
@deep_option
@click.option("--skip", multiple=True, metavar="ID[,ID…]", help="Record these checks (or ID prefixes like GPU) as skipped, e.g. on CPU-only CI.")
@json_option
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the report as a Markdown table.")
@click.option("-v", "--verbose", is_flag=True, help="Show ok and skipped checks too.")
@strict_option
def preflight(profile_id, list_profiles, registry, python_path, kernel_name, snapshot_file, collect_env_file, deep, skip, as_json, as_markdown, verbose, strict):
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
    from stackcheck.catalog import load_catalog

    catalog = load_catalog(registry)
    if list_profiles:
        _list_profiles(catalog, as_json)
        return
    if not profile_id:
        raise click.UsageError("give --profile ID (or --list-profiles to see them)")
    profile = catalog.get(profile_id)
    from stackcheck.environment import obtain_snapshot
    from stackcheck.judge import judge
    from stackcheck.probe import JUDGED

    if kernel_name:
        python_path = _kernel_interpreter(kernel_name, python_path)
    snapshot = obtain_snapshot(
        snapshot_file=snapshot_file,
        collect_env_file=collect_env_file,
        python_path=python_path,
        deep=deep,
        sections=JUDGED,
        modules=tuple(profile.required_modules),
    )
    report = judge(snapshot, command="preflight", profile=profile, skip=split_ids(skip), deep=deep)
    report.environment["registry"] = catalog.source
    if as_json:
        emit_json(report)
    elif as_markdown:
        from stackcheck.render.text import report_markdown

        click.echo(report_markdown(report), nl=False)
    else:
        from stackcheck.render.text import report_text

        click.echo(report_text(report, verbose=verbose), nl=False)
    from stackcheck.models.finding import exit_code

    finish(exit_code(report.verdict, strict))


def _kernel_interpreter(name: str, python_path: str | None) -> str:
    from stackcheck.errors import InputError

    if python_path:
        raise InputError("--kernel and --python cannot be combined: a kernel names its own interpreter")
    from stackcheck.probe.kernels import find_kernelspecs

    for spec in find_kernelspecs():
        if spec.name == name:
            if not spec.interpreter or not spec.interpreter_exists:
                raise InputError(f"kernel {name!r}: its interpreter {spec.argv[:1]} does not exist ({spec.path})")
            return spec.interpreter
    raise InputError(f"no Jupyter kernel named {name!r} (see `jupyter kernelspec list`)")


def _list_profiles(catalog, as_json: bool) -> None:
    rows = []
    for pid in catalog.ids():
        p = catalog.get(pid)
        rows.append({"id": p.id, "category": p.category, "evidence_scope": p.evidence_scope, "title": p.title, "purpose": p.purpose})
    if as_json:
        emit_json({"registry": catalog.source, "profiles": rows})
        return
    click.echo(f"profiles from {catalog.source}:")
    width = max((len(r["id"]) for r in rows), default=10)
    for r in rows:
        click.echo(f"  {r['id']:<{width}}  {r['category']:<10}  {r['evidence_scope']:<10}  {r['title']}")
