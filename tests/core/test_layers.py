"""The import contracts of pyproject.toml (`lint-imports`, also run by .ci/run) hold for the
tree, and they are not vacuous: one upward import added to a copy of the package, even inside
a function, breaks exactly the contracts that forbid it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = {
    "layers": "Layers point down (a | b: independent siblings)",
    "knowledge": "Knowledge: scope over predicates over facts over the tables",
    "pure": "Checks are pure: no probe, environment or importer, not even indirectly",
    "acyclic": "No import cycles between the modules of a package",
}


def lint(src: Path) -> tuple[int, dict[str, str], str]:
    """(exit code, contract name → KEPT/BROKEN, output) of lint-imports over the package in ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "200"}
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    argv = [sys.executable, "-c", code, "--no-cache", str(ROOT / "pyproject.toml")]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    states = dict(re.findall(r"^(.+) (KEPT|BROKEN)$", out, re.MULTILINE))
    return done.returncode, states, out


def test_every_contract_is_kept():
    code, states, out = lint(ROOT / "src")
    assert states == {name: "KEPT" for name in CONTRACTS.values()}, out
    assert code == 0 and "Contracts: 4 kept, 0 broken." in out, out


@pytest.mark.parametrize(
    ("module", "added", "broken", "message"),
    [
        # knowledge below deps: the DistIndex it needs lives in stackcheck.requirements
        (
            "knowledge/scope.py",
            "def _late():\n    from stackcheck.deps import graph\n",
            {"layers"},
            "stackcheck.knowledge is not allowed to import stackcheck.deps",
        ),
        # models at the bottom: the result contract lives in models, not results
        (
            "models/schemas.py",
            "def _late():\n    from stackcheck.results import ledger\n",
            {"layers", "acyclic"},
            "stackcheck.models is not allowed to import stackcheck.results",
        ),
        # the verdicts of other commands are declared beside their code, never imported by checks
        (
            "checks/registry.py",
            "def _late():\n    from stackcheck.accept import steps\n",
            {"layers", "pure", "acyclic"},
            "stackcheck.checks is not allowed to import stackcheck.accept",
        ),
        # the circle facts -> scope -> facts that knowledge/match.py broke
        (
            "knowledge/facts.py",
            "def _late():\n    from stackcheck.knowledge import scope\n",
            {"knowledge", "acyclic"},
            "stackcheck.knowledge.facts is not allowed to import stackcheck.knowledge.scope",
        ),
        # environment sits beside the checks, which never read environments themselves
        (
            "checks/python.py",
            "def _late():\n    from stackcheck import environment\n",
            {"pure"},
            "stackcheck.checks is not allowed to import stackcheck.environment",
        ),
    ],
)
def test_an_upward_import_breaks_its_contract(tmp_path, module, added, broken, message):
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "src" / "stackcheck", tmp_path / "stackcheck", ignore=skip)
    with open(tmp_path / "stackcheck" / module, "a", encoding="utf-8") as f:
        f.write("\n\n" + added)
    code, states, out = lint(tmp_path)
    assert states == {CONTRACTS[k]: "BROKEN" if k in broken else "KEPT" for k in CONTRACTS}, out
    assert code == 1 and message in out, out
