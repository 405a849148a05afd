"""Finding and loading the profile registry: ``--registry FILE``, else
``requirements/environment-profiles.json`` found by walking up from the working directory,
else the built-in catalog. A user registry sits on top of the built-in catalog unless it says
``"include_builtin": false``; a user profile with a built-in ID replaces the built-in one."""

from __future__ import annotations

import os

import msgspec

from stackcheck import identifiers
from stackcheck.catalog.paths import builtin_files, builtin_names, find_registry
from stackcheck.errors import InputError
from stackcheck.models.profile import BASE_CATEGORY, Profile, ProfileSummary, Registry

# re-exported: they moved to models.profile and catalog.paths
__all__ = [
    "BASE_CATEGORY",
    "BUILTIN_DIR",
    "REGISTRY_PATH",
    "ProfileSummary",
    "builtin_files",
    "find_registry",
]

BUILTIN = "built-in"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from stackcheck.catalog.paths import BUILTIN_DIR, REGISTRY_PATH


def __getattr__(name: str):
    # BUILTIN_DIR and REGISTRY_PATH (Paths) on first use: a cold preflight loads no pathlib
    if name in ("BUILTIN_DIR", "REGISTRY_PATH"):
        from stackcheck.catalog import paths

        return getattr(paths, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Entry(msgspec.Struct, frozen=True):
    profile: Profile  # as written (unresolved)
    file: str
    index: int  # position in the file's "profiles" array


def read_registry(path: str | os.PathLike) -> Registry:
    from stackcheck.fileio import load_json

    return load_json(path, Registry, "profile registry")


def _add(entries: dict[str, Entry], registry: Registry, file: str, replace: set[str]) -> None:
    seen: dict[str, int] = {}
    for index, profile in enumerate(registry.profiles):
        # one rule for every ID (they appear in printed commands); `profiles validate` lists them all
        identifiers.require(profile.id, f"{file}: profiles[{index}].id")
        if profile.id in seen:
            raise InputError(
                f"{file}: profiles[{index}].id: duplicate profile ID {profile.id!r} (also "
                f"profiles[{seen[profile.id]}])"
            )
        if profile.id in entries and profile.id not in replace:
            raise InputError(
                f"{file}: profiles[{index}].id: profile ID {profile.id!r} is also defined in "
                f"{entries[profile.id].file}"
            )
        seen[profile.id] = index
        entries[profile.id] = Entry(profile, file, index)


def builtin_label(path: str | os.PathLike) -> str:
    """How problems and listings name a built-in file: stable across installs."""
    return f"stackcheck/catalog/builtin/{os.path.basename(path)}"


def builtin_entries() -> dict[str, Entry]:
    entries: dict[str, Entry] = {}
    for path in builtin_names():  # builtin_files() as str: no pathlib
        _add(entries, read_registry(path), builtin_label(path), replace=set())
    return entries


class Catalog:
    """The effective set of profiles with lazy, cached resolution."""

    def __init__(self, entries: dict[str, Entry], source: str):
        self.source = source
        self._entries = entries
        self._resolved: dict[str, Profile] = {}

    # ----- lookups -----
    def ids(self, include_bases: bool = False) -> list[str]:
        """Profile IDs, sorted; hidden base layers (category "base") only on request."""
        return sorted(
            i for i, e in self._entries.items() if include_bases or e.profile.category != BASE_CATEGORY
        )

    def __contains__(self, profile_id: str) -> bool:
        return profile_id in self._entries

    def raw(self, profile_id: str) -> Profile:
        """The profile as written, ``extends`` unresolved."""
        return self._entry(profile_id).profile

    def file(self, profile_id: str) -> str:
        """The registry file that defines the profile."""
        return self._entry(profile_id).file

    def get(self, profile_id: str) -> Profile:
        """The fully resolved profile (layers merged, ``extends`` empty, ``layers`` root → leaf)."""
        if profile_id not in self._resolved:
            from stackcheck.catalog.layering import ProfileError, resolve

            entry = self._entry(profile_id)
            try:
                self._resolved[profile_id] = resolve(profile_id, self._lookup)
            except ProfileError as exc:
                raise exc.located(
                    self._entries[exc.profile].file if exc.profile in self._entries else entry.file
                ) from None
        return self._resolved[profile_id]

    def summaries(self, include_bases: bool = False) -> list[ProfileSummary]:
        rows = []
        for pid in self.ids(include_bases):
            p = self.get(pid)
            rows.append(
                ProfileSummary(
                    id=pid,
                    title=p.title,
                    category=p.category,
                    evidence_scope=p.evidence_scope,
                    purpose=p.purpose,
                    file=self.file(pid),
                )
            )
        return rows

    @property
    def digest(self) -> str:
        """sha256 of the canonical registry content (sorted keys, profiles sorted by ID)."""
        import hashlib

        return "sha256:" + hashlib.sha256(msgspec.json.encode(self.registry(), order="sorted")).hexdigest()

    def registry(self) -> Registry:
        """The effective registry as one document (unresolved profiles, sorted by ID)."""
        return Registry(
            profiles=[self._entries[i].profile for i in sorted(self._entries)], include_builtin=False
        )

    # ----- internals -----
    def _lookup(self, profile_id: str) -> Profile | None:
        entry = self._entries.get(profile_id)
        return entry.profile if entry else None

    def _entry(self, profile_id: str) -> Entry:
        identifiers.require(profile_id, "profile ID")
        try:
            return self._entries[profile_id]
        except KeyError:
            import difflib

            same = [i for i in self._entries if i.casefold() == profile_id.casefold()]
            folded = {i.casefold(): i for i in self._entries}
            near = difflib.get_close_matches(profile_id.casefold(), list(folded), n=3, cutoff=0.5)
            close = same or [folded[c] for c in near]
            hint = f"; did you mean {', '.join(close)}?" if close else "; see `stackcheck profiles list`"
            where = "the built-in catalog" if self.source == BUILTIN else self.source
            raise InputError(f"unknown profile ID {profile_id!r} in {where}{hint}") from None


def load_entries(path: Path | None) -> tuple[dict[str, Entry], str]:
    """Entries of the built-in catalog, a user registry, or both layered; and the source."""
    if path is None:
        return builtin_entries(), BUILTIN
    registry = read_registry(path)
    entries = builtin_entries() if registry.include_builtin else {}
    from stackcheck.fileio import source_name

    _add(entries, registry, source_name(path), replace=set(entries))
    return entries, source_name(path)


def load_catalog(registry: str | None = None, cwd: str | None = None) -> Catalog:
    """The catalog from ``registry`` (a file), else the nearest
    ``requirements/environment-profiles.json`` above ``cwd``, else the built-in catalog."""
    if registry:
        from pathlib import Path

        path: Path | None = Path(registry)
    else:
        path = find_registry(cwd)
    entries, source = load_entries(path)
    return Catalog(entries, source)
