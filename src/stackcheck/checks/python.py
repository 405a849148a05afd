"""PY001: the interpreter's version against the profile's Python range."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from stackcheck.checks.registry import PREFLIGHT, blocked, check, ok, skipped
from stackcheck.shellcmd import code, command
from stackcheck.versions import parse_version, unparsable_version

# Minor versions we may suggest, newest first (a suggestion, not a fact about support).
_CANDIDATES = ("3.14", "3.13", "3.12", "3.11", "3.10", "3.9", "3.8")


def suggest_python(spec: SpecifierSet) -> str | None:
    """The newest CPython minor (as X.Y) whose .0 .. .20 patch releases the range admits."""
    for minor in _CANDIDATES:
        if any(spec.contains(f"{minor}.{patch}", prereleases=False) for patch in (20, 10, 0)):
            return minor
    return None


@check(
    "PY001",
    "Python version",
    needs_profile=True,
    commands=(PREFLIGHT,),
    explain="""
Compares the checked interpreter's version (snapshot python.version) with the profile's
`python` specifier. Wheels of torch, vLLM and friends exist only for some Python minors, so a
wrong interpreter fails at install time ("requires a different Python") or, worse, resolves
to years-old releases. Fix: create the environment with a Python the profile admits, e.g.
`uv venv --python 3.12 .venv` or `conda create -n exp python=3.12`.""",
)
def python_version(ctx):
    wanted = ctx.profile.python
    if not wanted:
        return
    have = ctx.snapshot.python.version
    if not have:
        yield skipped("the snapshot does not record the Python version")
        return
    try:
        spec = SpecifierSet(wanted)
    except InvalidSpecifier:
        yield skipped(
            f"the profile's python specifier {wanted!r} is invalid (run `stackcheck profiles validate`)"
        )
        return
    parsed = parse_version(have)
    if parsed is not None and spec.contains(parsed, prereleases=True):
        yield ok(observed=f"Python {have}", expected=f"python {wanted}")
        return
    if parsed is None:
        have = unparsable_version(have)
    minor = suggest_python(spec)
    fix = (
        f"create the environment with Python {minor}: "
        f"{code(command('uv', 'venv', '--python', minor, '.venv'))} "
        f"(or {code(command('conda', 'create', '-n', ctx.profile.id.lower(), f'python={minor}'))}), "
        "then install the profile's requirements there"
        if minor
        else f"use an interpreter matching python {wanted}"
    )
    yield blocked(
        observed=f"Python {have} ({ctx.snapshot.python.executable})", expected=f"python {wanted}", fix=fix
    )
