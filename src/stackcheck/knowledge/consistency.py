"""Profile consistency against the knowledge base (placeholder until the knowledge base lands)."""

from __future__ import annotations


def profile_problems(profile) -> list[tuple[str, str]]:
    """(field, message) pairs for what in a resolved profile contradicts known facts."""
    return []
