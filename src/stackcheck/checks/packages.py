"""PKG001–PKG003: the profile's requirements, constraints and forbidden packages."""

from __future__ import annotations

from stackcheck.checks.registry import PREFLIGHT, blocked, check, ok, skipped
from stackcheck.deps.index import install_spec
from stackcheck.shellcmd import with_note
from stackcheck.versions import parse_version, unparsable_version


def _where(dist) -> str:
    """`` (in LOCATION)``, or nothing where the facts do not say (a pasted collect_env)."""
    return f" (in {dist.location})" if dist.location else ""


def _judge_requirements(ctx, texts, *, missing_is_problem: bool):
    if ctx.snapshot.packages.status not in ("ok",):
        yield skipped(
            f"the snapshot has no package list ({ctx.snapshot.packages.status}, source "
            f"{ctx.snapshot.packages.source or 'unknown'})"
        )
        return
    idx = ctx.dist_index
    for text in texts:
        st = idx.evaluate(text)
        if st.state == "invalid":
            yield skipped(
                f"invalid requirement {text!r} in the profile (run `stackcheck profiles validate`)",
                subject=text,
            )
        elif st.state == "not-applicable":
            yield ok(observed="marker does not apply to this interpreter", expected=text, subject=st.name)
        elif st.state == "satisfied":
            yield ok(observed=f"{st.dist.name} {st.installed}", expected=text, subject=st.name)
        elif st.state == "missing":
            if missing_is_problem:
                yield blocked(
                    observed=f"{st.name} is not installed",
                    expected=text,
                    fix=ctx.install(install_spec(text)),
                    subject=st.name,
                )
        else:  # mismatch
            yield blocked(
                observed=f"{st.dist.name} {st.installed}{_where(st.dist)}",
                expected=text,
                fix=ctx.install(install_spec(text)),
                subject=st.name,
            )


@check(
    "PKG001",
    "Requirement installed and satisfied",
    needs_profile=True,
    commands=(PREFLIGHT,),
    explain="""
Each entry of the profile's `requirements` (PEP 508, markers evaluated for the checked
interpreter) must be installed in a version inside its specifier. Versions are compared
exactly as installed, local labels included (2.8.0+cu128 satisfies ==2.8.0). Fix: the
printed `python -m pip install` command, run with the checked interpreter.""",
)
def requirements(ctx):
    yield from _judge_requirements(ctx, ctx.profile.requirements, missing_is_problem=True)


@check(
    "PKG002",
    "Constraint respected",
    needs_profile=True,
    commands=(PREFLIGHT,),
    explain="""
Each entry of the profile's `constraints` is judged only when the package is installed:
then its version must be inside the specifier (a constraint never demands an install).
Use constraints for packages that are optional but break the experiment in the wrong
version (e.g. numpy<2 next to an old torch). Fix: the printed pip command.""",
)
def constraints(ctx):
    yield from _judge_requirements(ctx, ctx.profile.constraints, missing_is_problem=False)


@check(
    "PKG003",
    "Forbidden package absent",
    needs_profile=True,
    commands=(PREFLIGHT,),
    explain="""
The profile's `forbidden` entries name packages that must not be installed alongside it:
serving engines (vLLM, SGLang, TensorRT-LLM) in a training-mechanism environment, two
engines in one environment, the QLoRA stack outside its own profile. They pin torch and
friends to their own versions and silently change what a result measured. Fix: uninstall
the package with the checked interpreter, or use the profile named in `use_instead`.""",
)
def forbidden(ctx):
    if ctx.snapshot.packages.status != "ok":
        yield skipped("the snapshot has no package list")
        return
    idx = ctx.dist_index
    for entry in ctx.profile.forbidden:
        st = idx.evaluate(entry.requirement)
        # an installed version that cannot be read is never shown to be outside the range
        unreadable = st.installed is not None and parse_version(st.installed) is None
        if st.state == "satisfied" or (st.state == "mismatch" and unreadable):
            why = f" ({entry.reason})" if entry.reason else ""
            fix = ctx.pip_uninstall(st.dist.name)
            if entry.use_instead:
                fix = with_note(fix, f"or run this experiment under profile {entry.use_instead}")
            shown = unparsable_version(st.installed) if unreadable else st.installed
            yield blocked(
                observed=f"{st.dist.name} {shown} is installed{_where(st.dist)}",
                expected=f"no {entry.requirement}{why}",
                fix=fix,
                subject=st.name,
            )
        elif st.state == "invalid":
            yield skipped(
                f"invalid forbidden requirement {entry.requirement!r} in the profile",
                subject=entry.requirement,
            )
        elif st.state == "mismatch":
            yield ok(
                observed=f"{st.dist.name} {st.installed} (outside the forbidden range)",
                expected=f"no {entry.requirement}",
                subject=st.name,
            )
        else:
            yield ok(observed="not installed", expected=f"no {entry.requirement}", subject=st.name)
