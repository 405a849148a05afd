"""Version facts come from one bounded parser (stackcheck.versions) and the knowledge tables:
CUDA001's fixes name the CUDA builds the release table lists (no list in the check), a
release the table does not know gets every build it lists, tables that do not load make the
check fail closed (the oversized-version cases live in tests/bounded and tests/results)."""

from __future__ import annotations

import json
from pathlib import Path

from stackcheck.checks.context import Context
from stackcheck.checks.registry import all_checks, run_checks
from stackcheck.knowledge import load_knowledge
from tests.factories import make_profile, make_snapshot

DATA = Path(__file__).resolve().parents[2] / "src" / "stackcheck" / "knowledge" / "data"
H100 = [("NVIDIA H100 80GB HBM3", "9.0", 79.6)]


def cuda001(snap, profile):
    return list(all_checks()["CUDA001"].run(Context(snapshot=snap, profile=profile)))


def test_published_cuda_builds_are_every_build_the_release_table_lists():
    releases = json.loads((DATA / "torch_releases.json").read_text())["releases"]
    listed = {c for r in releases for c in (r.get("cuda_builds") or []) + r.get("cuda_experimental", [])}
    found = load_knowledge().published_cuda_builds()
    assert sorted(found) == sorted(listed) and len(found) == len(listed)
    assert found == sorted(found, key=lambda c: tuple(int(p) for p in c.split(".")))  # ascending


def test_a_release_the_table_does_not_know_gets_an_index_the_table_lists():
    """torch 9.9 is in no table: its builds are taken to be every build the table lists for
    any release (12.9 is one only as torch 2.8's experimental build)."""
    prof = make_profile(gpu={"torch_cuda": "==12.9"}, requirements=["torch>=2.7"])
    snap = make_snapshot(gpus=H100, torch="9.9.0+cu121", torch_cuda="12.1", driver_cuda="12.9")
    [o] = cuda001(snap, prof)
    assert (o.verdict, o.fix) == (
        "blocked",
        "/env/bin/python -m pip install torch==9.9.0 --index-url https://download.pytorch.org/whl/cu129",
    )


def test_tables_that_do_not_load_fail_the_check_closed(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCHECK_KNOWLEDGE_DIR", str(tmp_path))  # an empty directory
    prof = make_profile(gpu={"torch_cuda": "==12.8"}, requirements=["torch>=2.7"])
    snap = make_snapshot(gpus=H100, torch="2.3.1+cu121", torch_cuda="12.1", driver_cuda="12.9")
    [result] = [r for r in run_checks(Context(snapshot=snap, profile=prof), "preflight") if r.id == "CUDA001"]
    assert result.verdict == "error"
    assert "cuda_drivers.json" in (result.reason or ""), result.reason
