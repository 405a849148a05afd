"""Environment scope by contrast: which facts tell the cells where a signature failed from the
cells where the same job family ran without it?

A fact *separates* when a condition on it holds in every failing cell and in no clean cell:
for versions the interval between the clean cells' values around the failing ones, with the
simplest bound that fits (``numpy>=2``, not ``numpy>=2.0.2``); for other facts the failing
cells' values (``platform in {windows}``). One separating fact is preferred — one named in
the failure itself (``module 'numpy' has no attribute …``) first — else the fewest that
together separate. When nothing separates, or the signature fails in every cell, or fails
only now and then inside its cells, it is no compatibility rule: a code bug or flakiness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from stackcheck.mining.envfacts import PKG
from stackcheck.models.rule import Scope
from stackcheck.versions import parse_version

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = ["CellStat", "Condition", "ScopeResult", "contrast"]

MIN_RATE_IN_SCOPE = 0.5  # below this failure rate inside its cells, a separation is not trusted
_KIND_ORDER = ("platform", "python", "torch_cuda", "driver", "gpu", "os", "arch")


@dataclass
class CellStat:
    cell: str
    facts: dict[str, str]
    attempts: int
    failures: int
    false_positives: int = 0
    passing: int = 0


@dataclass
class Condition:
    fact: str
    spec: str = ""  # a version specifier (">=2", ">=3.12,<3.13")
    values: tuple[str, ...] = ()  # or a set of values

    @property
    def text(self) -> str:
        name = self.fact[len(PKG) :] if self.fact.startswith(PKG) else self.fact
        if self.spec:
            return f"{name}{self.spec}"
        return (
            f"{name}={self.values[0]}" if len(self.values) == 1 else f"{name} in {{{', '.join(self.values)}}}"
        )

    def holds(self, facts: dict[str, str]) -> bool:
        value = facts.get(self.fact)
        if value is None:
            return False
        if self.spec:
            from packaging.specifiers import SpecifierSet

            v = parse_version(value)
            return v is not None and SpecifierSet(self.spec).contains(v, prereleases=True)
        return value in self.values

    def scope_field(self) -> tuple[str, object] | None:
        """The Scope field expressing this condition, or None where a Scope cannot."""
        if self.fact.startswith(PKG):
            name = self.fact[len(PKG) :]
            if self.spec:
                return "packages", f"{name}{self.spec}"
            return ("packages", f"{name}=={self.values[0]}") if len(self.values) == 1 else None
        if self.fact in ("python", "torch_cuda", "driver"):
            if self.spec:
                return self.fact, self.spec
            return (
                (self.fact, f"=={self.values[0]}")
                if len(self.values) == 1 and parse_version(self.values[0])
                else None
            )
        if self.fact == "platform" and self.values:
            return "platform", list(self.values)
        if self.fact == "gpu" and len(self.values) == 1:
            return "gpu_name", self.values[0]
        return None


@dataclass
class ScopeResult:
    separated: bool
    text: str
    conditions: list[Condition] = field(default_factory=list)
    scope: Scope = field(default_factory=Scope)  # empty when not separated or not expressible
    in_scope: set[str] = field(default_factory=set)  # the cells the scope holds in
    also: list[str] = field(default_factory=list)  # other single facts that separate as well


def _simplest(low: Version, high: Version) -> str | None:
    """The simplest version c with ``low < c <= high``: ``2`` rather than ``2.0.2``."""
    from packaging.version import Version

    candidates = [
        f"{high.major}",
        f"{high.major}.{high.minor}",
        f"{high.major}.{high.minor}.{high.micro}",
        str(high),
    ]
    for text in candidates:
        c = Version(text)
        if low < c <= high:
            return text
    return None


def _condition(fact: str, failing: list[CellStat], clean: list[CellStat]) -> Condition | None:
    values = [v for v in (c.facts.get(fact) for c in failing) if v is not None]
    if len(values) < len(failing):
        return None
    parsed = [parse_version(v) for v in values]
    versions = [v for v in parsed if v is not None]
    parsed_others = [parse_version(c.facts[fact]) for c in clean if fact in c.facts]
    others = [o for o in parsed_others if o is not None]
    # an interval only where every value, failing and clean, is a version
    if fact != "platform" and len(versions) == len(parsed) and len(others) == len(parsed_others):
        lo, hi = min(versions), max(versions)
        below = [o for o in others if o < lo]
        above = [o for o in others if o > hi]
        parts = []
        if below:
            bound = _simplest(max(below), lo)
            parts.append(f">={bound}" if bound else f">={lo}")
        if above:
            bound = _simplest(hi, min(above))
            parts.append(f"<{bound}" if bound else f"<={hi}")
        if parts:
            return Condition(fact, spec=",".join(parts))
        return None
    return Condition(fact, values=tuple(sorted(set(values))))


def _rank(cond: Condition, text: str) -> tuple:
    name = cond.fact[len(PKG) :] if cond.fact.startswith(PKG) else cond.fact
    relevant = name.lower() in text
    kind = _KIND_ORDER.index(cond.fact) if cond.fact in _KIND_ORDER else len(_KIND_ORDER)
    return (cond.scope_field() is None, not relevant, kind, len(cond.values), cond.fact)


def contrast(cells: list[CellStat], text: str = "") -> ScopeResult:
    """The smallest scope separating the cells with failures from the clean ones; ``text`` is
    the signature's own text (exception, message, frames), which makes a fact it names win."""
    text = text.lower()
    failing = [c for c in cells if c.failures > 0]
    clean = [c for c in cells if c.failures == 0]
    if not failing:
        return ScopeResult(False, "never failed")
    if not clean:
        return ScopeResult(
            False,
            f"fails in every cell seen ({len(failing)}): no environment fact separates "
            "failing from passing cells (a code bug or a flaky test, not a compatibility rule)",
        )
    attempts = sum(c.attempts for c in failing)
    rate = sum(c.failures for c in failing) / attempts if attempts else 0
    if rate < MIN_RATE_IN_SCOPE:
        return ScopeResult(
            False,
            f"fails in only {rate:.0%} of the attempts of the cells it fails in: intermittent, "
            "no environment fact explains it (flaky, not a compatibility rule)",
        )
    facts = sorted({f for c in failing for f in c.facts})
    candidates = []
    for fact in facts:
        cond = _condition(fact, failing, clean)
        if cond is not None:
            excluded = {c.cell for c in clean if not cond.holds(c.facts)}
            if excluded:
                candidates.append((cond, excluded))
    clean_ids = {c.cell for c in clean}
    single = sorted((cond for cond, ex in candidates if ex == clean_ids), key=lambda c: _rank(c, text))
    if single:
        chosen = [single[0]]
        also = [c.text for c in single[1:6]]
    else:
        chosen, also, remaining = [], [], set(clean_ids)
        ordered = sorted(candidates, key=lambda ce: _rank(ce[0], text))
        while remaining:
            # the condition excluding most of the clean cells left; among equals the best ranked
            best = max(ordered, key=lambda ce: len(ce[1] & remaining), default=None)
            if best is None or not best[1] & remaining:
                break
            chosen.append(best[0])
            remaining -= best[1]
        if remaining:
            return ScopeResult(
                False,
                f"no environment fact separates its {len(failing)} failing cell(s) from the "
                f"{len(clean)} clean one(s) (a code bug or flakiness, not a compatibility rule)",
            )
    in_scope = {c.cell for c in cells if all(cond.holds(c.facts) for cond in chosen)}
    fields = [cond.scope_field() for cond in chosen]
    present = [f for f in fields if f is not None]
    scope = Scope()
    if len(present) == len(fields):
        packages: list[str] = []
        kwargs: dict[str, Any] = {}  # Scope's own fields, as Condition.scope_field names them
        for name, value in present:
            if name == "packages":
                packages.append(cast(str, value))
                kwargs["packages"] = packages
            else:
                kwargs[name] = value
        scope = Scope(**kwargs)
    text_out = " and ".join(cond.text for cond in chosen)
    if scope == Scope():
        text_out += " (not expressible as a preflight scope: triage only)"
    return ScopeResult(True, text_out, chosen, scope, in_scope, also)
