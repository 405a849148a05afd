"""The profile registry: discovery, layering (``extends``), validation and the built-in
catalog (``builtin/*.json``). See ``docs/profiles.md`` for the layering rules."""

from stackcheck.catalog.registry import Catalog, ProfileSummary, find_registry, load_catalog

__all__ = ["Catalog", "Problem", "ProfileSummary", "find_registry", "load_catalog", "validate"]


def __getattr__(name: str):
    # validation is only needed by `profiles validate`: keep it off preflight's import path
    if name in ("Problem", "validate"):
        from stackcheck.catalog import validation

        return getattr(validation, name)
    raise AttributeError(name)
