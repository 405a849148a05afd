"""``stackcheck env create`` without click: the command's body (:func:`create_env`, which the
click command in :mod:`stackcheck.cli.env` runs too) and the plan it shares with ``env lock``,
and the argument lists the start-up path runs it for before click is loaded (:func:`light`):
options that need no parser's judgement (no unknown or repeated option, no value that looks
like an option, a valid ``--installer``), on streams click.echo writes as they are. Anything
else goes through click, which words its own usage errors."""

from __future__ import annotations

from stackcheck.cli.output import echo_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# the options of `env create` (cli/env.py declares them for click): option -> (parameter, kind)
OPTIONS: dict[str, tuple[str, str]] = {
    "--profile": ("profile_id", "value"),
    "-p": ("profile_id", "value"),
    "--registry": ("registry", "value"),
    "--path": ("path", "value"),
    "--python": ("python", "value"),
    "--cuda": ("cuda", "value"),
    "--kernel": ("kernel", "value"),
    "--snapshot": ("snapshot_file", "value"),
    "--index-url": ("index_url", "value"),
    "--installer": ("installer", "value"),
    "--extra-index-url": ("extra_index_urls", "multiple"),
    "--find-links": ("find_links", "multiple"),
    "--dry-run": ("dry_run", "flag"),
    "--force": ("force", "flag"),
    "--no-index": ("no_index", "flag"),
    "--json": ("as_json", "flag"),
}
DEFAULTS: dict[str, object] = {
    "profile_id": None, "registry": None, "path": ".venv", "python": None, "cuda": "auto", "kernel": None,
    "snapshot_file": None, "index_url": None, "installer": "auto", "extra_index_urls": (), "find_links": (),
    "dry_run": False, "force": False, "no_index": False, "as_json": False,
}  # fmt: skip
INSTALLERS = ("auto", "uv", "pip")


def parse(args: list[str]) -> dict[str, object] | None:
    """The parameters click would pass for ``env create ARGS``; None where click's parser has a
    say (an unknown, repeated or abbreviated option, a value starting with ``-``, an empty
    value, an argument, a bad ``--installer``, no ``--profile``)."""
    found: dict[str, object] = {}
    it = iter(args)
    for arg in it:
        # "=" joins a value to a long option only ("-p=X" is -p with the value "=X": click's say)
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name not in OPTIONS:
            return None
        param, kind = OPTIONS[name]
        if kind == "flag":
            if eq or param in found:
                return None
            found[param] = True
            continue
        value = inline if eq else next(it, None)
        if not value or value.startswith("-"):
            return None
        if kind == "multiple":
            found[param] = (*found.get(param, ()), value)  # type: ignore[misc]
        elif param in found:
            return None
        else:
            found[param] = value
    if "profile_id" not in found or found.get("installer", "auto") not in INSTALLERS:
        return None
    return {**DEFAULTS, **found}


def light(args: list[str]) -> Callable[[], int] | None:
    """``stackcheck env create ARGS`` without click (see the module docstring), or None."""
    params = parse(args)
    if params is None:
        return None

    def run() -> int:
        from stackcheck.cli import short_lived

        short_lived()  # as the click command: collections in batches, no teardown at the end
        from stackcheck.identifiers import require

        require(str(params["profile_id"]), "--profile", "name")  # the option's callback (cli.common.checked)
        create_env(**params)
        return 0

    return run


def echo(text: str, *, err: bool = False) -> None:
    """A line as click.echo writes it (through click where it is loaded)."""
    echo_text(text + "\n", False, err=err)


def warn(lines) -> None:
    for line in lines:
        echo(f"stackcheck: warning: {line}", err=True)


def sources_of(index_url, extra_index_urls, find_links, no_index, *, check: bool = True):
    """Explicit options over the user's pip configuration; unreachable ones skipped (warned)
    unless ``check`` is off (``--dry-run`` contacts nothing)."""
    from stackcheck.provision.installer import check_sources, merge_sources, pip_config

    merged = merge_sources(
        pip_config(),
        index_url=index_url,
        extra_index_urls=tuple(extra_index_urls),
        find_links=tuple(find_links),
        no_index=no_index,
    )
    return check_sources(merged) if check else (merged, [])


def plan_of(profile_id, registry, python, cuda, snapshot_file, sources, *, check: bool = True):
    from stackcheck.catalog import load_catalog
    from stackcheck.knowledge import load_knowledge
    from stackcheck.provision.create import find_python
    from stackcheck.provision.plan import make_plan

    profile = load_catalog(registry).get(profile_id)
    if snapshot_file:
        from stackcheck.environment import load_snapshot

        facts = load_snapshot(snapshot_file)
    else:
        from stackcheck.provision.create import machine_facts

        facts = machine_facts()
    exe, version = find_python(python, profile.python)
    plan = make_plan(
        profile, facts, load_knowledge(), python=exe, python_version=version, cuda=cuda, sources=sources
    )
    from stackcheck.provision.installer import check_torch_index

    if check:
        warn(check_torch_index(plan))
    return plan


def create_env(
    profile_id, registry, path, python, cuda, kernel, dry_run, force, snapshot_file, index_url,
    extra_index_urls, find_links, no_index, installer, as_json,
) -> None:  # fmt: skip
    """The body of ``stackcheck env create`` (cli/env.py's command documents it)."""
    from stackcheck.provision.create import check_target, planned_steps
    from stackcheck.provision.create import create as make
    from stackcheck.provision.installer import choose_installer
    from stackcheck.redaction import redact_argv
    from stackcheck.shellcmd import command

    if kernel:
        from stackcheck.identifiers import require

        require(kernel, "--kernel")
    check_target(path, force=force)  # before any work: a bad target costs nothing
    sources, warnings = sources_of(index_url, extra_index_urls, find_links, no_index, check=not dry_run)
    warn(warnings)
    plan = plan_of(profile_id, registry, python, cuda, snapshot_file, sources, check=not dry_run)
    tool = choose_installer(installer)

    def summary() -> dict:
        from stackcheck.provision.plan import env_paths

        interpreter, activate = env_paths(path, plan.system)
        return {
            "profile": plan.profile.id,
            "path": path,
            "python": plan.python_version,
            "base_interpreter": plan.python,
            "interpreter": interpreter,
            "activate": [command(*a) for a in activate],
            "installer": tool.name,
            "torch": {"build": plan.torch.tag, "release": plan.torch.release,
                      "index_url": plan.torch.index_url, "why": plan.torch.why},
            "sources": redact_argv(plan.sources.with_torch(plan.torch).args()),
            "warnings": warnings,
        }  # fmt: skip

    if dry_run:
        steps = [command(*redact_argv(s)) for s in planned_steps(plan, path, tool, kernel)]
        if as_json:
            from stackcheck.cli.output import emit_json

            emit_json({**summary(), "dry_run": True, "commands": steps})
            return
        print_plan(summary())
        echo("commands:")
        for s in steps:
            echo(f"  {s}")
        return
    outcome = make(
        plan, path, tool, kernel=kernel, force=force, progress=not as_json, on_step=None if as_json else step
    )
    report = outcome.report
    assert report is not None  # create judges the environment it made
    if as_json:
        from stackcheck.cli.output import emit_json

        emit_json({**summary(), "commands": [command(*redact_argv(s)) for s in outcome.steps],
                   "packages": len(outcome.lock.packages) if outcome.lock else 0,
                   "kernel": getattr(outcome.kernel, "path", None), "verdict": report.verdict})  # fmt: skip
    else:
        print_plan(summary())
        echo(f"created {path} ({len(outcome.lock.packages) if outcome.lock else 0} packages)")
        if outcome.kernel is not None:
            echo(f"kernel {kernel}: {outcome.kernel.path}")
            warn(outcome.kernel.warnings)
        from stackcheck.cli.output import emit_report

        emit_report(report, as_json=False)
    from stackcheck.cli import leave
    from stackcheck.models.finding import exit_code

    leave(exit_code(report.verdict, False))  # at once where short-lived: no teardown


def step(text: str) -> None:
    echo(f"stackcheck: {text}", err=True)


def print_plan(summary: dict) -> None:
    t = summary["torch"]
    echo(f"profile {summary['profile']}: Python {summary['python']} ({summary['base_interpreter']})")
    if t["build"]:
        echo(f"torch: {t['why']}")
    echo(f"installer: {summary['installer']}")
    if summary["sources"]:
        from stackcheck.shellcmd import join

        echo(f"sources: {join(summary['sources'])}")
    echo(f"interpreter: {summary['interpreter']}")
    echo("activate: " + " | ".join(summary["activate"]))
