"""The one place a :class:`~stackcheck.models.finding.Report` is built: preflight and doctor
(:mod:`stackcheck.judge`), ``hygiene``, ``accept`` and ``kernel check`` all hand their findings
to :func:`build_report`, which marks consequences, takes the worst verdict and merges the pip
fixes into ``fix_all``.

A finding that another one explains (:data:`CAUSES`) is marked ``consequence_of``; renderers
read the report cause first (:func:`~stackcheck.models.finding.by_severity_then_cause`). Every
pip fix of the findings that are not consequences is merged into ``fix_all``: one command per
package index.
"""

from __future__ import annotations

from stackcheck.checks.context import pip_command
from stackcheck.checks.registry import matches
from stackcheck.models.finding import (
    CheckResult,
    PipInstall,
    Report,
    by_severity_then_cause,
    fixable,
    severity,
    worst,
)
from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Snapshot, snapshot_digest

# Which findings explain which: consequence → its causes, most basic first. Each side is a
# check ID or an ID prefix (as --skip takes them); a cause may add ``/category`` to name only
# the findings of that category. A non-ok consequence is marked ``consequence_of`` the first
# non-ok cause at least as severe as itself; its fix waits for the cause's (a CUDA build of
# torch fixes nothing on a machine without a GPU, nor with a driver too old to run it).
CAUSES: dict[str, tuple[str, ...]] = {
    "GPU001": ("PLAT001",),  # no GPU here: a hosted runtime without one
    "CUDA001": ("PLAT001", "GPU001/no-gpu", "CUDA002/driver-too-old"),  # the build needs a GPU and a driver
}


def build_report(
    kind: str,
    checks: list[CheckResult],
    *,
    profile: Profile | None = None,
    snapshot: Snapshot | None = None,
    environment: dict[str, str] | None = None,
    digest: str | None = None,
) -> Report:
    """The report of ``kind`` over ``checks`` (kept in the order given). ``snapshot``: the
    environment judged (its digest, and where its facts came from, unless ``environment``
    says otherwise); ``digest``: the snapshot digest when no snapshot is given."""
    checks = mark_consequences(checks)
    if environment is None:
        environment = {}
        if snapshot is not None:
            environment = {
                "python": snapshot.python.executable,
                "source": snapshot.tool.command or snapshot.python.source,
                "captured_at": snapshot.tool.captured_at,
            }
    return Report(
        kind=kind,
        profile=profile.id if profile else None,
        verdict=worst(c.verdict for c in checks),
        checks=checks,
        snapshot_digest=digest if digest is not None else snapshot_digest(snapshot) if snapshot else "",
        environment=environment,
        fix_all=combine_fixes(checks),
    )


def mark_consequences(
    checks: list[CheckResult], causes: dict[str, tuple[str, ...]] = CAUSES
) -> list[CheckResult]:
    """Set ``consequence_of`` on every non-ok finding a non-ok cause explains (in place)."""
    found = [c for c in checks if c.verdict in ("warning", "blocked")]
    for c in found:
        explained_by = next((v for k, v in causes.items() if matches(k, c.id)), ())
        if c.consequence_of or not explained_by:
            continue
        cause = next(
            (
                f
                for pattern in explained_by
                for f in found
                if f.id != c.id and _is(pattern, f) and severity(f.verdict) >= severity(c.verdict)
            ),
            None,
        )
        if cause is not None:
            c.consequence_of = cause.id
    return checks


def _is(pattern: str, finding: CheckResult) -> bool:
    check_id, _, category = pattern.partition("/")
    return matches(check_id, finding.id) and (not category or finding.category == category)


def combine_fixes(checks: list[CheckResult]) -> list[str]:
    """One pip command per (interpreter, index, options) for every fixable finding, each
    package once with its specifiers intersected. A package some fix takes from another
    index (torch from its CPU or CUDA index) comes from there only, and those lines come
    first: installed later, ``accelerate`` would pull torch's PyPI (CUDA) build first."""
    groups: dict[tuple[str, str | None, tuple[str, ...]], dict[tuple[str, str], list[str]]] = {}
    managed: set[str] = set()  # interpreters the OS manages (PEP 668): their lines stay advice
    for c in by_severity_then_cause(fixable(checks)):
        p = c.install
        if p is None:  # fixable() keeps only findings with an install
            continue
        if p.externally_managed:
            managed.add(p.python)
        group = groups.setdefault((p.python, p.index_url, tuple(p.options)), {})
        for text in p.requirements:
            group.setdefault(_requirement_key(text), []).append(text)
    for (python, index, options), group in groups.items():
        if index is not None or options:
            continue
        for (py, other_index, other_options), other in groups.items():
            if py == python and other_index is not None and not other_options:
                for key in [k for k in group if k in other]:
                    other[key] += group.pop(key)  # from the other index only
    order = sorted((g for g in groups if groups[g]), key=lambda g: (bool(g[2]), g[1] is None))
    return [
        pip_command(
            PipInstall(
                python=python,
                requirements=[_merged(texts) for texts in groups[(python, index, options)].values()],
                index_url=index,
                options=list(options),
                externally_managed=python in managed,
            )
        )
        for python, index, options in order
    ]


def _requirement_key(text: str) -> tuple[str, str]:
    from stackcheck.deps.index import parse_requirement
    from stackcheck.models.snapshot import normalize_name

    req = parse_requirement(text)
    return (normalize_name(req.name), str(req.marker or "")) if req is not None else ("", text)


def _merged(texts: list[str]) -> str:
    """One requirement admitting what all of ``texts`` (same name and marker) admit."""
    from packaging.requirements import InvalidRequirement, Requirement

    from stackcheck.versions import simplify

    try:
        reqs = [Requirement(t) for t in dict.fromkeys(texts)]
    except InvalidRequirement:
        return texts[0]
    merged = reqs[0]
    for other in reqs[1:]:
        merged.specifier = simplify(merged.specifier & other.specifier)
        merged.extras |= other.extras
    return str(merged)
