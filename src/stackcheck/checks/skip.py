"""``--skip`` values (``skip=`` of the library) → check IDs and prefixes, checked against the
registered checks before anything is probed."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["split_ids"]


def split_ids(values: Iterable[str]) -> list[str]:
    """--skip GPU001 --skip CUDA,PLAT001 → ["GPU001", "CUDA", "PLAT001"]; an ID or prefix that
    names no check is a one-line error with the close matches."""
    ids = [part.strip() for v in values for part in v.split(",") if part.strip()]
    from stackcheck.checks.registry import unknown_skip

    bad = unknown_skip(ids) if ids else None
    if bad:
        from stackcheck.errors import InputError

        name, close = bad
        hint = f"did you mean {', '.join(close)}?" if close else "`stackcheck explain --list` lists them"
        raise InputError(f"--skip: {name!r} is not a check ID or prefix; {hint}")
    return ids
