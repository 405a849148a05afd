"""``stackcheck kernel register|check``: Jupyter kernels that run the environment they claim."""

from __future__ import annotations

import click

from stackcheck.cli.common import (
    checked,
    emit_json,
    emit_report,
    finish,
    json_option,
    profile_option,
    registry_option,
    strict_option,
)


@click.group()
def kernel() -> None:
    """Register and check Jupyter kernels for this environment.

    \b
    Examples:
      stackcheck kernel register --name myproject
      stackcheck kernel check myproject --profile BASE-CPU
      stackcheck kernel check --json            # every kernel Jupyter can see
    """


@kernel.command()
@click.option("--name", metavar="NAME", help="Kernel name (default: the environment's directory name).")
@click.option("--display-name", metavar="TEXT", help="Name shown in Jupyter's kernel menu.")
@click.option(
    "--repo",
    metavar="PATH",
    help="Directory put on the kernel's PYTHONPATH (default: the git root above the current directory).",
)
@click.option(
    "--python", "python_path", metavar="PATH", help="Interpreter the kernel runs (default: this one)."
)
@click.option(
    "--user",
    is_flag=True,
    help="Install into the user's Jupyter data dir (default; honours JUPYTER_DATA_DIR).",
)
@click.option(
    "--prefix", metavar="DIR", help="Install into DIR/share/jupyter/kernels (e.g. an environment's prefix)."
)
@click.option(
    "--data-dir",
    metavar="DIR",
    help="Install into DIR/kernels (a Jupyter data dir, e.g. one on JUPYTER_PATH).",
)
@click.option(
    "--force", is_flag=True, help="Replace a kernel of the same name that runs another interpreter."
)
@json_option
def register(name, display_name, repo, python_path, user, prefix, data_dir, force, as_json):
    """Write a kernelspec that runs the interpreter by absolute path, with the repository
    on PYTHONPATH so notebooks in any subfolder import its code.

    Exit codes: 0 written (also with warnings, e.g. ipykernel missing), 1 refused (a kernel
    of that name runs another interpreter; --force replaces it), 2 bad options.
    """
    from stackcheck.notebook.register import register as do_register

    result = do_register(
        name=name,
        display_name=display_name,
        python=python_path,
        repo=repo,
        user=user,
        prefix=prefix,
        data_dir=data_dir,
        force=force,
    )
    if as_json:
        emit_json(
            {
                "name": result.name,
                "path": result.path,
                "via": result.via,
                "replaced": result.replaced,
                "kernelspec": result.spec,
                "warnings": result.warnings,
                "fixes": result.fixes,
            }
        )
    else:
        from stackcheck.identifiers import printable
        from stackcheck.shellcmd import join

        verb = "replaced" if result.replaced is not None else "registered"
        lines = [
            f"{verb} kernel {result.name!r}: {result.path} (via {result.via})",
            f"  runs:       {join(result.spec['argv'])}",
        ]
        if result.spec.get("env"):
            lines.append(f"  PYTHONPATH: {result.spec['env']['PYTHONPATH']}")
        lines += [f"  WARNING: {w}" for w in result.warnings] + [f"  fix:     {f}" for f in result.fixes]
        click.echo("\n".join(printable(line) for line in lines))
    finish(0)


@kernel.command()
@click.argument("names", nargs=-1, metavar="[NAME]...", callback=checked(field="NAME"))
@profile_option("Also judge the kernel's environment against this profile.")
@registry_option
@json_option
@click.option("-v", "--verbose", is_flag=True, help="Show ok and skipped checks too.")
@strict_option
def check(names, profile_id, registry, as_json, verbose, strict):
    """Check kernels (every kernel Jupyter can see when no NAME is given): the spec exists,
    argv[0] is an absolute path to an interpreter that exists, answers and is what it claims,
    ipykernel can be imported there; with --profile, its environment passes the profile.

    Exit codes: 0 ok (also with warnings), 1 blocked (--strict: warnings too), 2 bad input.
    """
    from stackcheck.models.finding import exit_code
    from stackcheck.notebook.check import check_kernels

    profile = None
    if profile_id:
        from stackcheck.catalog import load_catalog

        profile = load_catalog(registry).get(profile_id)
    report = check_kernels(list(names), profile)
    emit_report(report, as_json=as_json, verbose=verbose)
    finish(exit_code(report.verdict, strict))
