"""The judging side's small value classes (frozen msgspec Structs, cheap to create at start-up)
keep what the frozen dataclasses they replaced gave: construction by position and keyword,
defaults, equality and hash by value, read-only fields, fresh default lists, and a repr that
names every field in order."""

from __future__ import annotations

import pytest

from stackcheck.catalog.registry import Entry
from stackcheck.checks.registry import PREFLIGHT, CheckSpec
from stackcheck.deps.graph import Problem
from stackcheck.knowledge.base import DriverRequirement
from stackcheck.knowledge.facts import DriverFit, TorchBuild
from stackcheck.knowledge.match import ScopeMatch
from stackcheck.models.profile import Profile
from stackcheck.requirements import RequirementStatus


def run(ctx):
    return ()


BUILD = TorchBuild("2.6.0+cu124", "12.4", True, "torch/version.py")
CASES = [
    (Problem("a", "1.0", "b>=2", "b", "mismatch", "1.0", None), "package", "x"),
    (RequirementStatus("b>=2", "b", "missing"), "state", "satisfied"),
    (BUILD, "cuda", "12.1"),
    (DriverFit(BUILD, "550.54", DriverRequirement("525.60", "550.54", "12.4", "linux")), "driver", ""),
    (ScopeMatch(True, True, ["torch 2.6"]), "matches", False),
    (Entry(Profile(id="P-1"), "built-in", 0), "index", 1),
    (CheckSpec("X001", "title", "explain", run), "title", "other"),
]


@pytest.mark.parametrize(("value", "field", "other"), CASES, ids=[type(c[0]).__name__ for c in CASES])
def test_values_compare_hash_and_stay_read_only(value, field, other):
    kind = type(value)
    names = kind.__struct_fields__
    same = kind(**{n: getattr(value, n) for n in names})
    assert same == value and same is not value
    changed = kind(**{n: (other if n == field else getattr(value, n)) for n in names})
    assert changed != value
    if kind not in (ScopeMatch, Entry):  # lists / a mutable Profile: unhashable, as the dataclass was
        assert hash(same) == hash(value)
    with pytest.raises(AttributeError):
        setattr(value, field, other)
    assert repr(value) == f"{kind.__name__}(" + ", ".join(f"{n}={getattr(value, n)!r}" for n in names) + ")"


def test_defaults():
    spec = CheckSpec("X001", "title", "explain", run)
    assert (spec.commands, spec.needs_profile, spec.sources, spec.verdict, spec.expected) == (
        frozenset({PREFLIGHT}),
        False,
        (),
        None,
        "",
    )
    assert (RequirementStatus("b", "b", "invalid").installed, RequirementStatus("b", "b", "x").dist) == (
        None,
        None,
    )
    assert (
        RequirementStatus("b", "b", "mismatch").problem
        and not RequirementStatus("b", "b", "satisfied").problem
    )
    first, second = ScopeMatch(False, True), ScopeMatch(False, True)
    first.evidence.append("seen")
    assert second.evidence == [] and first.missing is not second.missing
    assert (BUILD.hip, BUILD.unverified) == (None, "")
    with pytest.raises(TypeError):
        hash(ScopeMatch(True, True))
