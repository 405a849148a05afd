"""The profile registry: discovery, layering (``extends``), validation and the built-in
catalog (``builtin/*.json``). See ``docs/profiles.md`` for the layering rules."""

from stackcheck.catalog.registry import Catalog, ProfileSummary, find_registry, load_catalog
from stackcheck.catalog.validation import Problem, validate

__all__ = ["Catalog", "Problem", "ProfileSummary", "find_registry", "load_catalog", "validate"]
