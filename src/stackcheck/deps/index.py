"""The installed-distribution index of a snapshot, and requirement evaluation against it.

The index itself lives in :mod:`stackcheck.requirements` (the knowledge base uses it too, and
sits below this package); this module keeps the names the dependency checks import, and the
install spelling of a requirement.
"""

from __future__ import annotations

import os

from stackcheck.models.snapshot import Distribution, normalize_name
from stackcheck.requirements import (  # parse_version never raises; deps.graph and checks import it from here
    DistIndex,
    RequirementStatus,
    marker_environment,
    parse_requirement,
    parse_version,
)

__all__ = [
    "DistIndex",
    "RequirementStatus",
    "install_spec",
    "marker_environment",
    "parse_requirement",
    "parse_version",
]


def one_per_install(dists: list[Distribution]) -> list[Distribution]:
    """``dists`` without the second metadata directory of one install: a ``.dist-info`` and a
    ``.egg-info`` of the same project and version in the same directory (Debian's packages
    ship both) describe the same files, so they count as one copy. The first one is kept."""
    seen: dict[tuple[str, str, str], str] = {}
    out: list[Distribution] = []
    for dist in dists:
        key = (
            normalize_name(dist.name),
            dist.version,
            os.path.normpath(dist.location) if dist.location else "",
        )
        kind = _metadata_kind(dist)
        if key in seen and kind and seen[key] and kind != seen[key]:
            continue
        seen.setdefault(key, kind)
        out.append(dist)
    return out


def _metadata_kind(dist: Distribution) -> str:
    for suffix in (".dist-info", ".egg-info"):
        if dist.metadata_dir.rstrip("/\\").endswith(suffix):
            return suffix
    return ""


def install_spec(text: str) -> str:
    """A requirement as a user would type it for ``pip install``: name, extras, specifier,
    without the marker (``foo[bar]>=1; python_version<"3.12"`` → ``foo[bar]>=1``)."""
    req = parse_requirement(text)
    if req is None:
        return text
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}{req.specifier}"
