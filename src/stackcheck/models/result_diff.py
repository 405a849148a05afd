"""What ``results diff`` finds between two records: the changed identity, environment and metric
fields, and whether the two numbers may be compared (computed by :mod:`stackcheck.results.compare`,
printed by :mod:`stackcheck.render.results`)."""

from __future__ import annotations

from typing import Any

import msgspec


class Change(msgspec.Struct, kw_only=True):
    field: str
    a: Any = None
    b: Any = None


class MetricChange(msgspec.Struct, kw_only=True):
    name: str
    unit: str = ""
    a: float | None = None
    b: float | None = None
    relative: float | None = None  # (b - a) / |a|
    a_cv: float | None = None
    b_cv: float | None = None


class Diff(msgspec.Struct, kw_only=True):
    a: str
    b: str
    comparable: bool
    varying: list[str] = []
    blocking: list[str] = []  # identity / hardware fields that differ and are not under test
    unused_varying: list[str] = []  # --varying fields that do not differ
    identity: list[Change] = []
    environment: list[Change] = []
    metrics: list[MetricChange] = []


def covered(field: str, varying: list[str]) -> bool:
    """Whether a flattened field is one of the variables under test (or under one of them)."""
    return any(field == v or field.startswith(v + ".") for v in varying)
