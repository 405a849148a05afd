"""Small, bounded file reads for probes: a missing or unreadable file is an empty string."""

from __future__ import annotations


def read_small(path: str, limit: int = 1 << 16) -> str:
    """Up to ``limit`` characters of a text file; "" when it cannot be read (absent facts)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return ""
