"""``stackcheck profiles export``: a resolved profile as a registry entry.

``profiles show --json`` prints the *resolved* profile, whose ``layers`` only the resolver
fills, so a registry refuses it. An export is the same resolution flattened into an entry a
registry accepts: ``extends`` and ``layers`` dropped (the layers are merged in), fields at
their defaults left out, in a registry that keeps the built-in catalog beneath it (a
``forbidden`` entry's ``use_instead`` names a built-in profile). The requirements / pyproject /
conda / pixi exports need the torch build from the knowledge tables: they live in
:mod:`stackcheck.provision.export`.
"""

from __future__ import annotations

import msgspec

from stackcheck.models.profile import PROFILE_SCHEMA_VERSION, Profile

FORMATS = ("registry",)
_RESOLVER_FIELDS = ("extends", "layers")


def export_registry(catalog, profile_ids: list[str]) -> dict:
    """A registry document (JSON-ready) holding the resolved profiles ``profile_ids``."""
    defaults = msgspec.to_builtins(Profile(id=""))
    profiles = []
    for pid in profile_ids:
        entry = msgspec.to_builtins(catalog.get(pid))
        profiles.append(
            {
                k: v
                for k, v in entry.items()
                if k == "id" or (k not in _RESOLVER_FIELDS and v != defaults.get(k))
            }
        )
    return {"schema_version": PROFILE_SCHEMA_VERSION, "include_builtin": True, "profiles": profiles}
