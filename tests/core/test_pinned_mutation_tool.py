"""benchmarks/mutation.py, the mutation runner: the mutants it writes are the one-line bugs
it names, every one compiles, and lines keep their numbers (survivor locations are right)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "benchmarks" / "mutation.py")
mutation = sys.modules.setdefault("mutation_tool", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(mutation)

SOURCE = '''"""Doc."""
POINTS = {"agrees": 25, "contradicts": -25}


@check("PKG003", "title")
def forbidden(ctx, limit=1):
    for entry in ctx.profile.forbidden:
        if entry.state in ("satisfied",) and not entry.optional:
            yield entry
        total = (entry.a +
                 entry.b)
    return total * 2
'''


def test_mutants_are_the_named_one_line_bugs():
    found = {
        (m.line, m.what): mutation.apply(SOURCE, m).splitlines()[m.line - 1].strip()
        for m in mutation.find_mutants(SOURCE)
    }
    assert found[(2, "25 -> 0")] == 'POINTS = {"agrees": (0), "contradicts": -25}'
    assert found[(2, "-25 -> -0")] == 'POINTS = {"agrees": 25, "contradicts": -(0)}'
    assert found[(8, "in -> not in")] == "if (entry.state not in ('satisfied',)) and not entry.optional:"
    assert found[(8, "drop not")] == 'if entry.state in ("satisfied",) and (entry.optional):'
    assert found[(8, "and -> or")] == "if (entry.state in ('satisfied',) or not entry.optional):"
    assert found[(9, "delete Expr")] == "pass"
    assert found[(12, "return None")] == "return None"
    assert found[(12, "* -> /")] == "return (total / 2)"
    assert found[(6, "1 -> 0")] == "def forbidden(ctx, limit=(0)):"
    # decorators (check IDs and titles) and docstrings are never mutated
    assert not any(line in (1, 5) for line, _ in found)


def test_every_mutant_compiles_and_keeps_line_numbers():
    for name in ("checks/packages.py", "checks/hardware.py", "triage/ranking.py"):
        path = ROOT / "src" / "stackcheck" / name
        source = path.read_text(encoding="utf-8")
        for m in mutation.find_mutants(source):
            mutated = mutation.apply(source, m)
            compile(mutated, str(path), "exec")
            assert mutated.count("\n") == source.count("\n"), (path.name, m.line, m.what)


def test_multi_line_expression_keeps_its_line_count():
    [m] = [m for m in mutation.find_mutants(SOURCE) if m.what == "+ -> -"]
    mutated = mutation.apply(SOURCE, m).splitlines()
    assert mutated[9:11] == ["        total = ((entry.a - entry.b", "))"]  # inside brackets: any indentation


def test_sample_spreads_evenly_and_deterministically():
    items = list(range(10))
    assert mutation.sample(items, 4) == [0, 2, 5, 7]
    assert mutation.sample(items, None) == items and mutation.sample(items, 20) == items


def test_targets_resolve_and_missing_modules_are_noted():
    files, notes = mutation.resolve_targets(
        ["checks/packages.py", "stackcheck.checks.hardware", "results/ledger.py", "nope.py"]
    )
    assert [f.as_posix() for f in files] == ["checks/packages.py", "checks/hardware.py", "results/ledger.py"]
    assert notes == ["skipped nope.py: no such module under src/stackcheck"]
    assert mutation.tests_for(Path("checks/packages.py"))[:2] == [
        "tests/core/test_profile_checks.py",
        "tests/core/test_pinned_checks.py",
    ]
    assert "tests/results" in mutation.tests_for(Path("results/ledger.py"))
