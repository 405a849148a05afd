"""The check registry: stable IDs → pure functions of (Snapshot, Profile, Knowledge).

A check is a generator decorated with :func:`check`; it yields :func:`ok`, :func:`warning`,
:func:`blocked` or :func:`skipped` outcomes, and the runner stamps its ID and title on each.
Checks that come from data (knowledge rules) are registered by a :func:`provider`.
Every module in :mod:`stackcheck.checks` is discovered automatically. Verdicts that other
commands produce themselves (``accept``, ``kernel check``, ``hygiene``) are declared with
:func:`declare` next to the code that produces them, in the modules :data:`ELSEWHERE` names;
``all_checks(everywhere=True)`` (``explain``, the docs) imports those, preflight never does.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from stackcheck.checks.context import Context, pip_command
from stackcheck.models.finding import CheckResult, PipInstall, Verdict, internal_error

PREFLIGHT = "preflight"
DOCTOR = "doctor"


class Outcome(msgspec.Struct, kw_only=True):
    verdict: Verdict
    observed: str = ""
    expected: str = ""
    fix: str | None = None
    subject: str | None = None
    reason: str | None = None
    category: str | None = None
    evidence: dict[str, str] = {}
    title: str | None = None  # overrides the check's title (e.g. per-subject wording)
    install: PipInstall | None = None  # the fix as a pip install (see Context.install)
    consequence_of: str | None = None  # the check whose finding explains this one


def _fix(fix: str | PipInstall | None, kw: dict[str, object]) -> str | None:
    """A fix given as a :class:`PipInstall` is printed as its command and kept as data."""
    if isinstance(fix, PipInstall):
        kw["install"] = fix
        return pip_command(fix)
    return fix


def ok(observed: str = "", expected: str = "", **kw: Any) -> Outcome:
    return Outcome(verdict="ok", observed=observed, expected=expected, **kw)


def warning(observed: str, expected: str, fix: str | PipInstall | None, **kw: Any) -> Outcome:
    return Outcome(verdict="warning", observed=observed, expected=expected, fix=_fix(fix, kw), **kw)


def blocked(observed: str, expected: str, fix: str | PipInstall | None, **kw: Any) -> Outcome:
    return Outcome(verdict="blocked", observed=observed, expected=expected, fix=_fix(fix, kw), **kw)


def skipped(reason: str, **kw: Any) -> Outcome:
    return Outcome(verdict="skipped", reason=reason, **kw)


CheckFn = Callable[[Context], Iterable[Outcome]]


class CheckSpec(msgspec.Struct, frozen=True):
    id: str
    title: str
    explain: str  # what it looks at, why it matters, how to fix: shown by `stackcheck explain`
    run: CheckFn
    commands: frozenset[str] = frozenset({PREFLIGHT})
    needs_profile: bool = False  # skipped (silently) when no profile is given
    sources: tuple[str, ...] = ()
    verdict: Verdict | None = None  # the verdict of every finding, for a rule whose verdict is fixed
    expected: str = ""  # what a good environment has, for a rule that states it once


# The modules above the checks that declare the verdicts their commands produce (imported by
# ``all_checks(everywhere=True)`` only: preflight and doctor never pay for them).
ELSEWHERE = (
    "stackcheck.accept.steps",
    "stackcheck.notebook.check",
    "stackcheck.hygiene.rules",
    "stackcheck.fleet.judge",
    "stackcheck.fleet.collectives",
    "stackcheck.artifacts.checks",
)


def _runs_elsewhere(ctx: Context) -> Iterable[Outcome]:
    return ()


_CHECKS: dict[str, CheckSpec] = {}
_PROVIDERS: list[Callable[[], Iterable[CheckSpec]]] = []
_LOADED = False


def check(
    id: str,
    title: str,
    *,
    explain: str,
    commands: Iterable[str] = (PREFLIGHT,),
    needs_profile: bool = False,
    sources: Iterable[str] = (),
) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        if id in _CHECKS:
            raise ValueError(f"duplicate check ID {id}")
        _CHECKS[id] = CheckSpec(
            id, title, explain.strip(), fn, frozenset(commands), needs_profile, tuple(sources)
        )
        return fn

    return register


def declare(
    id: str,
    title: str,
    *,
    explain: str,
    command: str,
    verdict: Verdict | None = None,
    expected: str = "",
) -> CheckSpec:
    """Register a verdict that another command produces itself (e.g. ``kernel check``, which
    needs a child process per kernel), so ``stackcheck explain`` knows it; the command builds
    its findings from the returned spec. It never runs in preflight or doctor."""
    if id in _CHECKS:
        raise ValueError(f"duplicate check ID {id}")
    spec = CheckSpec(
        id, title, explain.strip(), _runs_elsewhere, frozenset({command}), verdict=verdict, expected=expected
    )
    _CHECKS[id] = spec
    return spec


def by_id(*specs: CheckSpec) -> dict[str, CheckSpec]:
    """The declared ``specs`` by ID (a command's table of its own verdicts)."""
    return {spec.id: spec for spec in specs}


def registered(id: str) -> CheckSpec:
    """The spec of ``id`` as registered so far (no discovery: its module was imported)."""
    return _CHECKS[id]


def provider(fn: Callable[[], Iterable[CheckSpec]]) -> Callable[[], Iterable[CheckSpec]]:
    """Register a function that yields CheckSpecs built from data (called once, lazily)."""
    _PROVIDERS.append(fn)
    return fn


def all_checks(everywhere: bool = False) -> dict[str, CheckSpec]:
    """Every check, in ID order, importing each module of this package once; ``everywhere``:
    also the verdicts other commands declare (importing the modules of :data:`ELSEWHERE`)."""
    global _LOADED
    if everywhere:
        for name in ELSEWHERE:
            importlib.import_module(name)
    if not _LOADED:
        import stackcheck.checks as pkg

        for name in module_names(pkg.__path__):
            if name != "registry" and not name.startswith("_"):
                importlib.import_module(f"{pkg.__name__}.{name}")
        for prov in _PROVIDERS:
            for spec in prov():
                if spec.id in _CHECKS:
                    raise ValueError(f"duplicate check ID {spec.id}")
                _CHECKS[spec.id] = spec
        _LOADED = True
    return dict(sorted(_CHECKS.items()))


def module_names(path: Iterable[str]) -> list[str]:
    """The names ``pkgutil.iter_modules(path)`` gives, in its order, for directories read
    with one listing each (pkgutil's import, with importlib.util's, is ≈ 0.5 ms of a cold
    preflight); anything but a directory is left to pkgutil."""
    from importlib.machinery import all_suffixes

    suffixes = sorted(all_suffixes(), key=len, reverse=True)  # the longest first, as inspect
    names: list[str] = []
    for where in path:
        try:
            entries = sorted(os.listdir(where)) if os.path.isdir(where) else None
        except OSError:
            entries = []
        if entries is None:
            import pkgutil

            names += [m.name for m in pkgutil.iter_modules([where]) if m.name not in names]
            continue
        for entry in entries:
            name = next((entry[: -len(s)] for s in suffixes if entry.endswith(s)), None)
            if name is None:  # a package: a directory holding an __init__ module
                full = os.path.join(where, entry)
                if "." in entry or not os.path.isdir(full) or not _holds_init(full, suffixes):
                    continue
                name = entry
            if name and name != "__init__" and "." not in name and name not in names:
                names.append(name)
    return names


def _holds_init(directory: str, suffixes: list[str]) -> bool:
    try:
        return any(f in ("__init__" + s for s in suffixes) for f in os.listdir(directory))
    except OSError:
        return False


def matches(pattern: str, check_id: str) -> bool:
    """A check ID (``GPU001``) names itself; an ID prefix (``GPU``, ending in a letter) names
    every check it starts."""
    prefix = bool(pattern) and not pattern[-1].isdigit()
    return check_id == pattern or (prefix and check_id.startswith(pattern))


def unknown_skip(patterns: Iterable[str]) -> tuple[str, list[str]] | None:
    """The first of ``patterns`` that names no registered check (as an ID, or as the letters an
    ID starts with: ``GPU``, ``KB``), with the close matches among those; None when all do."""
    import difflib

    ids = list(all_checks())
    prefixes = sorted({i.rstrip("0123456789") for i in ids})
    for pattern in patterns:
        p = pattern.upper()
        if p not in ids and p not in prefixes:
            return pattern, difflib.get_close_matches(p, prefixes + ids, n=3, cutoff=0.6)
    return None


def run_checks(ctx: Context, command: str, skip: Iterable[str] = ()) -> list[CheckResult]:
    """Run every check registered for ``command`` against ``ctx``.

    ``skip`` holds check IDs (or ID prefixes such as ``GPU``) to record as skipped. A check
    that raises keeps what it yielded before and adds an ``error`` result naming the exception:
    the other checks still run, but the report fails closed (verdict ``error``, exit 1).
    """
    skip = tuple(s.upper() for s in skip)
    results: list[CheckResult] = []
    for spec in all_checks().values():
        if command not in spec.commands:
            continue
        if spec.needs_profile and ctx.profile is None:
            continue
        if skip and any(matches(s, spec.id) for s in skip):
            results.append(
                CheckResult(id=spec.id, title=spec.title, verdict="skipped", reason="skipped by --skip")
            )
            continue
        results.extend(_run_one(spec, ctx))
    return results


def _run_one(spec: CheckSpec, ctx: Context) -> Iterator[CheckResult]:
    outcomes: list[Outcome] = []
    try:
        outcomes.extend(spec.run(ctx))
    except Exception as exc:  # a bug in one check must not sink the report, nor pass it
        outcomes.append(Outcome(verdict="error", reason=internal_error(exc, f"check {spec.id}")))
    for o in outcomes:
        yield result_of(spec, o)


def result_of(spec: CheckSpec, o: Outcome) -> CheckResult:
    """The finding of one outcome of ``spec`` (also for verdicts a command produces itself)."""
    return CheckResult(
        id=spec.id,
        title=o.title or spec.title,
        verdict=o.verdict,
        observed=o.observed,
        expected=o.expected,
        fix=o.fix,
        subject=o.subject,
        reason=o.reason,
        category=o.category,
        evidence=o.evidence,
        install=o.install,
        consequence_of=o.consequence_of,
    )
