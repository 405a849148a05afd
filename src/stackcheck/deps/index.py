"""The installed-distribution index of a snapshot, and requirement evaluation against it.

The index itself lives in :mod:`stackcheck.requirements` (the knowledge base uses it too, and
sits below this package); this module keeps the names the dependency checks import, and the
install spelling of a requirement.
"""

from __future__ import annotations

from stackcheck.requirements import DistIndex, RequirementStatus, marker_environment, parse_requirement
from stackcheck.versions import parse_version  # never raises; deps.graph and checks import it from here

__all__ = [
    "DistIndex",
    "RequirementStatus",
    "install_spec",
    "marker_environment",
    "parse_requirement",
    "parse_version",
]


def install_spec(text: str) -> str:
    """A requirement as a user would type it for ``pip install``: name, extras, specifier,
    without the marker (``foo[bar]>=1; python_version<"3.12"`` → ``foo[bar]>=1``)."""
    req = parse_requirement(text)
    if req is None:
        return text
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}{req.specifier}"
