"""The profile registry: discovery, layering (``extends``), validation and the built-in
catalog (``builtin/*.json``). See ``docs/profiles.md`` for the layering rules."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from stackcheck.catalog.registry import Catalog, ProfileSummary, find_registry, load_catalog
    from stackcheck.catalog.validation import Problem, validate

__all__ = ["Catalog", "Problem", "ProfileSummary", "find_registry", "load_catalog", "validate"]

_FROM = {"Problem": "validation", "validate": "validation"}  # the rest: registry


def __getattr__(name: str):
    # loaded on first use: a warm verdict cache reads catalog.paths without the registry (msgspec
    # models), and validation is only needed by `profiles validate`
    if name in __all__:
        import importlib

        return getattr(importlib.import_module(f"stackcheck.catalog.{_FROM.get(name, 'registry')}"), name)
    raise AttributeError(name)
