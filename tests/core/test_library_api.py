"""The library API (issue 10): stackcheck.preflight / snapshot / triage / results.record return
the typed models the commands print, and `import stackcheck` loads none of them."""

from __future__ import annotations

import subprocess
import sys

import pytest

import stackcheck
from stackcheck.environment import load_snapshot
from stackcheck.judge import judge
from stackcheck.models.finding import Report
from stackcheck.models.snapshot import Snapshot
from stackcheck.sources import FactSource
from stackcheck.triage.model import Diagnosis
from tests.factories import SNAPSHOTS

LAPTOP = str(SNAPSHOTS / "cpu-laptop.json")


def test_import_stackcheck_stays_cheap():
    heavy = "('stackcheck.', 'msgspec', 'click')"
    code = f"import sys, stackcheck; print(sorted(m for m in sys.modules if m.startswith({heavy})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"


def test_preflight_is_the_report_the_command_builds():
    report = stackcheck.preflight("TRAIN-CPU", source=FactSource.snapshot(LAPTOP))
    assert isinstance(report, Report)
    from stackcheck.catalog import load_catalog

    expected = judge(load_snapshot(LAPTOP), command="preflight", profile=load_catalog().get("TRAIN-CPU"))
    assert [(c.id, c.verdict) for c in report.checks] == [(c.id, c.verdict) for c in expected.checks]
    assert (report.kind, report.verdict, report.environment["registry"]) == (
        "preflight",
        "ok",
        "built-in",
    )


def test_preflight_skip_is_checked_before_anything_is_probed():
    with pytest.raises(stackcheck.InputError, match=r"^--skip: 'NOPE' is not a check ID or prefix"):
        stackcheck.preflight(source=FactSource.python("/nonexistent/python"), skip=["NOPE"])
    report = stackcheck.preflight("TRAIN-CPU", source=FactSource.snapshot(LAPTOP), skip=["GPU"])
    assert {c.reason for c in report.checks if c.id.startswith("GPU")} == {"skipped by --skip"}


def test_snapshot_of_a_source():
    snap = stackcheck.snapshot(FactSource.snapshot(LAPTOP))
    assert isinstance(snap, Snapshot) and snap == load_snapshot(LAPTOP)


def test_triage_is_callable_and_judges_against_the_source():
    import stackcheck.triage  # the package and the call share the name

    diagnosis = stackcheck.triage(
        "ModuleNotFoundError: No module named 'torch'", source=FactSource.snapshot(LAPTOP)
    )
    assert isinstance(diagnosis, Diagnosis)
    assert ([m.rule_id for m in diagnosis.matches], diagnosis.environment_source) == (
        ["KB101"],
        f"snapshot {LAPTOP}",
    )
    assert stackcheck.triage.triage_text is not None


def test_results_record_takes_a_fact_source(tmp_path):
    import inspect

    from stackcheck.results.recording import _snapshot

    assert stackcheck.results.record is not None
    assert "snapshot" in inspect.signature(stackcheck.results.record).parameters
    assert _snapshot(FactSource.snapshot(LAPTOP)) == load_snapshot(LAPTOP)


def test_public_modules_declare_all():
    import stackcheck.environment
    import stackcheck.models
    import stackcheck.results
    import stackcheck.sources

    for module in (
        stackcheck,
        stackcheck.environment,
        stackcheck.results,
        stackcheck.sources,
        stackcheck.triage,
    ):
        assert all(hasattr(module, name) for name in module.__all__), module.__name__
