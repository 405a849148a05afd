"""Profile consistency against the knowledge base: can the environment a profile describes exist?

A profile may be well-formed and still impossible: vLLM 0.11 with torch 2.6 (vLLM 0.11 pins
torch 2.8.0), a CUDA build no admitted torch release was ever built for, a forbidden package
that a required engine installs, transformers and tokenizers ranges that cannot both hold.
Judged from the pin and release tables; a package version the tables do not know is not judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from stackcheck.knowledge.base import Knowledge, PinRow
from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import normalize_name


@dataclass(frozen=True)
class Wanted:
    """One package the profile constrains: its specifier and the field that says so."""

    name: str
    spec: SpecifierSet
    field: str
    text: str
    extras: tuple[str, ...] = ()


def profile_problems(profile: Profile, kb: Knowledge | None = None) -> list[tuple[str, str]]:
    """(field, message) pairs for what in a resolved profile contradicts known facts."""
    if kb is None:
        from stackcheck.knowledge import load_knowledge

        kb = load_knowledge()
    wanted = _wanted(profile)
    markers = _markers(profile)
    problems: list[tuple[str, str]] = []
    problems += _pin_conflicts(kb, wanted, markers)
    problems += _forbidden_via_pins(kb, profile, wanted, markers)
    problems += _python_window(kb, profile, wanted)
    problems += _cuda_builds(kb, profile, wanted, markers)
    problems += _engine_wheel_cuda(kb, profile, wanted)
    return list(dict.fromkeys(problems))


def _wanted(profile: Profile) -> dict[str, list[Wanted]]:
    out: dict[str, list[Wanted]] = {}
    for field in ("requirements", "constraints"):
        for text in getattr(profile, field):
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue  # syntax is the catalog validator's business
            key = normalize_name(req.name)
            out.setdefault(key, []).append(Wanted(key, req.specifier, field, text, tuple(sorted(req.extras))))
    return out


def _required(wanted: dict[str, list[Wanted]]) -> list[Wanted]:
    return [w for ws in wanted.values() for w in ws if w.field == "requirements"]


def _markers(profile: Profile) -> dict[str, str]:
    """Pins are read for Linux x86_64 unless the profile rules Linux out."""
    oses = [o.lower() for o in (profile.platform.os if profile.platform else [])]
    if oses and "linux" not in oses:
        system = {"darwin": "Darwin", "windows": "Windows"}.get(oses[0], "Linux")
        return {
            "platform_system": system,
            "sys_platform": {"Darwin": "darwin", "Windows": "win32"}.get(system, "linux"),
        }
    return {}


def _rows_in(kb: Knowledge, package: str, spec: SpecifierSet) -> list[PinRow]:
    """Pin rows of ``package`` covering at least one version ``spec`` admits."""
    from stackcheck import versions

    return [
        row
        for row, start, end in kb.pin_ranges(package)
        if not versions.is_empty(versions.intersect(spec, f">={start},<{end}"))
    ]


def _pin_text(row: PinRow, reqs: list[Requirement]) -> str:
    return f"{row.package} {row.version} pins " + ", ".join(str(r).split(";")[0] for r in reqs)


def _pin_conflicts(
    kb: Knowledge, wanted: dict[str, list[Wanted]], markers: dict[str, str]
) -> list[tuple[str, str]]:
    """A required engine whose every admitted release pins a dependency outside the profile's
    range for it (vLLM 0.11 ↔ torch 2.6; transformers 4.57 ↔ tokenizers 0.21)."""
    from stackcheck import versions

    problems = []
    for engine in _required(wanted):
        rows = _rows_in(kb, engine.name, engine.spec)
        if not rows:
            continue
        for dep, dep_wants in wanted.items():
            if dep == engine.name:
                continue
            for want in dep_wants:
                pins = [(row, kb.pins_for(row, dep, markers, engine.extras)) for row in rows]
                if not all(reqs for _, reqs in pins):
                    continue  # some admitted release does not constrain dep: satisfiable
                clash = all(
                    any(versions.is_empty(versions.intersect(r.specifier, want.spec)) for r in reqs)
                    for _, reqs in pins
                )
                if clash:
                    shown = "; ".join(_pin_text(row, reqs) for row, reqs in pins[:3]) + (
                        "; …" if len(pins) > 3 else ""
                    )
                    problems.append(
                        (
                            want.field,
                            f"{engine.text!r} cannot hold with {want.text!r}: {shown} (package "
                            f"metadata, {', '.join(rows[0].sources)})",
                        )
                    )
    return problems


def _forbidden_via_pins(
    kb: Knowledge, profile: Profile, wanted: dict[str, list[Wanted]], markers: dict[str, str]
) -> list[tuple[str, str]]:
    """A forbidden package that every admitted release of a required engine installs."""
    from stackcheck import versions

    problems = []
    for f in profile.forbidden:
        try:
            banned = Requirement(f.requirement)
        except InvalidRequirement:
            continue
        name = normalize_name(banned.name)
        for engine in _required(wanted):
            if engine.name == name:
                continue  # direct contradictions are the catalog validator's
            rows = _rows_in(kb, engine.name, engine.spec)
            pins = [(row, kb.pins_for(row, name, markers, engine.extras)) for row in rows]
            if not pins or not all(reqs for _, reqs in pins):
                continue
            if all(
                any(not banned.specifier or versions.is_subset(r.specifier, banned.specifier) for r in reqs)
                for _, reqs in pins
            ):
                problems.append(
                    (
                        "forbidden",
                        f"{f.requirement!r} is forbidden, but the required {engine.text!r} "
                        f"installs it ({_pin_text(*pins[0])})",
                    )
                )
    return problems


def _python_window(kb: Knowledge, profile: Profile, wanted: dict[str, list[Wanted]]) -> list[tuple[str, str]]:
    """The profile's Python window misses every Python the admitted releases of a required
    engine (their Requires-Python) or of torch (its supported window) support."""
    from stackcheck import versions

    if not profile.python:
        return []
    candidates: list[tuple[str, list[str]]] = []
    for engine in _required(wanted):
        rows = _rows_in(kb, engine.name, engine.spec)
        if rows and all(row.requires_python for row in rows):
            candidates.append((engine.text, [row.requires_python or "" for row in rows]))  # all given
    torch = [w for w in wanted.get("torch", []) if w.field == "requirements"]
    if torch:
        releases = _torch_releases(kb, torch[0].spec)
        experimental = any(
            versions.contains(profile.python, f"{p}.0") for r in releases for p in r.python_experimental
        )
        windows = [
            r.python or r.requires_python for r in releases
        ]  # 2.15: only its wheel's Requires-Python is known
        if releases and all(windows) and not experimental:
            candidates.append((torch[0].text, [w or "" for w in windows]))  # all given
    problems = []
    for what, windows in candidates:
        if all(versions.is_empty(versions.intersect(w, profile.python)) for w in windows):
            problems.append(
                (
                    "python",
                    f"python {profile.python!r} excludes every Python {what!r} supports "
                    f"({', '.join(sorted(set(windows)))})",
                )
            )
    return problems


def _torch_releases(kb: Knowledge, spec: SpecifierSet):
    """The torch release rows with at least one version inside ``spec``."""
    from stackcheck import versions

    return [
        r
        for r in kb.torch.releases
        if not versions.is_empty(versions.intersect(spec, _release_range(r.torch)))
    ]


def _torch_spec(
    kb: Knowledge, wanted: dict[str, list[Wanted]], markers: dict[str, str]
) -> tuple[SpecifierSet, str]:
    """The torch versions the profile admits: its own torch entries, narrowed by the torch pin
    of a required engine when every admitted release of it pins torch."""
    spec, why = SpecifierSet(), []
    for w in wanted.get("torch", []):
        spec &= w.spec
        why.append(w.text)
    for engine in _required(wanted):
        rows = _rows_in(kb, engine.name, engine.spec)
        pins = [kb.pins_for(row, "torch", markers, engine.extras) for row in rows]
        exact = {str(r.specifier) for reqs in pins for r in reqs}
        if rows and all(pins) and len(exact) == 1:
            spec &= SpecifierSet(exact.pop())
            why.append(f"{engine.text} (pins torch{pins[0][0].specifier})")
    return spec, " and ".join(why) or "any torch"


def _cuda_builds(
    kb: Knowledge, profile: Profile, wanted: dict[str, list[Wanted]], markers: dict[str, str]
) -> list[tuple[str, str]]:
    """gpu.torch_cuda asks for a CUDA build no admitted torch release was built for."""
    from stackcheck import versions

    want = profile.gpu.torch_cuda if profile.gpu else None
    if not want:
        return []
    spec, why = _torch_spec(kb, wanted, markers)
    releases = _torch_releases(kb, spec)
    if not releases or any(r.cuda_builds is None for r in releases):
        return []  # nothing known to judge by
    offered = sorted(
        {c for r in releases for c in r.all_cuda_builds}, key=lambda c: tuple(map(int, c.split(".")))
    )
    if any(versions.contains(want, c) for c in offered):
        return []
    names = ", ".join(r.torch for r in releases[:6]) + (" …" if len(releases) > 6 else "")
    return [
        (
            "gpu.torch_cuda",
            f"torch_cuda {want!r}: no build of torch {names} (admitted by {why}) offers it; they "
            f"offer CUDA {', '.join(offered)} (pytorch RELEASE.md)",
        )
    ]


def _engine_wheel_cuda(
    kb: Knowledge, profile: Profile, wanted: dict[str, list[Wanted]]
) -> list[tuple[str, str]]:
    """gpu.torch_cuda excludes the CUDA of every wheel (default or variant) of every admitted
    release of a required engine: its compiled ops then load another CUDA runtime than torch's
    (vLLM 0.20+ default wheels are CUDA 13.0: with a cu128 torch, 'libcudart.so.13' is missing)."""
    from stackcheck import versions

    want = profile.gpu.torch_cuda if profile.gpu else None
    if not want:
        return []
    problems = []
    for engine in _required(wanted):
        rows = _rows_in(kb, engine.name, engine.spec)
        if not rows or any(row.wheel_cuda is None for row in rows):
            continue  # a release whose wheel CUDA is unknown may fit
        offered: dict[str, object] = {row.wheel_cuda: row for row in rows if row.wheel_cuda is not None}
        offered |= {c: row for row in rows for c in row.cuda_variants}
        if any(versions.contains(want, cuda) for cuda in offered):
            continue
        shown = ", ".join(sorted(offered, key=lambda c: tuple(map(int, c.split(".")))))
        problems.append(
            (
                "gpu.torch_cuda",
                f"torch_cuda {want!r}: {engine.text!r} publishes wheels for CUDA {shown} only "
                f"(its default wheel is CUDA {rows[-1].wheel_cuda}; {', '.join(rows[0].sources)})",
            )
        )
    return problems


def _release_range(release: str) -> str:
    """``"2.8"`` → ``">=2.8.0,<2.9.dev0"``: every version of one torch release."""
    major, minor = release.split(".")
    return f">={release}.0,<{major}.{int(minor) + 1}.dev0"
