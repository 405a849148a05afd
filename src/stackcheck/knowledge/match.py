"""The answer every scope condition gives, and the snapshot lookups the conditions share.

A condition holds (with evidence), does not hold, or cannot be judged because the snapshot
lacks the fact. :mod:`.facts` (derived facts), :mod:`.predicates` (named predicates) and
:mod:`.scope` (a rule's whole scope) all answer with a :class:`ScopeMatch`; this module sits
below all three, so none of them imports another to reach it.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from stackcheck import versions
from stackcheck.models.snapshot import Snapshot
from stackcheck.versions import parse_version

__all__ = ["ScopeMatch", "in_spec", "no_nvidia_driver", "spec"]


class ScopeMatch(msgspec.Struct, frozen=True):
    matches: bool
    applicable: bool
    evidence: list[str] = []  # facts that held, human-readable
    missing: list[str] = []  # facts that could not be judged (or why it failed)
    expected: list[str] = []  # what a good environment has instead
    suggest: list[str] = []  # requirements whose install fixes it
    # why a held match rests on a fact no primary source confirmed: such a match warns, never blocks
    unverified: list[str] = []

    @property
    def reason(self) -> str:
        """Why it did not match, in words (for a skipped or ok finding)."""
        if not self.missing:
            return "not affected" if self.applicable else "cannot judge"
        return self.missing[0] if self.applicable else f"cannot judge without {', '.join(self.missing)}"

    @classmethod
    def held(
        cls,
        *evidence: str,
        expected: list[str] | None = None,
        suggest: list[str] | None = None,
        unverified: str = "",
    ) -> ScopeMatch:
        why = [unverified] if unverified else []
        return cls(True, True, list(evidence), [], list(expected or []), list(suggest or []), why)

    @classmethod
    def failed(cls, why: str = "") -> ScopeMatch:
        return cls(False, True, [], [why] if why else [])

    @classmethod
    def unknown(cls, missing: str) -> ScopeMatch:
        return cls(False, False, [], [missing])


@lru_cache(maxsize=512)
def spec(text: str) -> SpecifierSet:
    """A rule's version specifier (``ValueError`` for bad syntax or an oversized version)."""
    try:
        return versions.parse(text)
    except InvalidSpecifier:
        raise ValueError(f"invalid version specifier {text!r}") from None


def in_spec(value: str, specifier: str) -> bool:
    v = parse_version(value)
    return v is not None and spec(specifier).contains(v, prereleases=True)


def no_nvidia_driver(snap: Snapshot) -> bool:
    """The snapshot looked for an NVIDIA driver and found none (a fact, unlike a missing
    section in a pasted collect_env output)."""
    acc = snap.accelerators
    imported = (
        acc.source == "collect_env" or snap.tool.command == "collect_env"
    )  # silence in a paste is no proof
    return acc.status == "absent" and bool(acc.looked_for) and not acc.driver_version and not imported
