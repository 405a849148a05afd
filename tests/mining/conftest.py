"""Shared fixtures of the mining tests: the committed CI matrix, stores, mined rules."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from tests.factories import SHARED, missing_prerequisite

MATRIX = Path(__file__).parents[1] / "data" / "mining" / "matrix"
LOGS = SHARED / "data" / "logs"


def matrix_runs() -> list[dict]:
    return [json.loads(line) for line in (MATRIX / "runs.jsonl").read_text().splitlines()]


def extract(archive: str, dest: Path) -> Path:
    """Unpack one of the shared data archives into ``dest`` (the test's tmp dir)."""
    path = LOGS / archive
    if not path.is_file():
        missing_prerequisite(f"{path} is missing (the shared data sets)")
    with tarfile.open(path) as tar:
        tar.extractall(dest, filter="data")
    return dest


def mine_matrix(store_path: Path, runs: set[str] | None = None):
    """Ingest the matrix (or only ``runs``) into a SQLite store and build its rules."""
    from stackcheck.mining.ingest import scan_jobs
    from stackcheck.mining.inputs import discover
    from stackcheck.mining.rules import build_rules
    from stackcheck.mining.store import MineStore

    sources = [s for s in discover(MATRIX) if runs is None or s.run in runs]
    with MineStore(str(store_path)) as store:
        store.ingest(scan_jobs(sources), source=str(MATRIX), now="2026-01-01T00:00:00Z")
        return build_rules(store)


@pytest.fixture(scope="session")
def matrix_mined(tmp_path_factory):
    return mine_matrix(tmp_path_factory.mktemp("matrix") / "store.sqlite")


@pytest.fixture(scope="session")
def matrix_rule_file(tmp_path_factory, matrix_mined):
    import msgspec

    path = tmp_path_factory.mktemp("rules") / "mined.json"
    path.write_bytes(msgspec.json.encode(matrix_mined.rules))
    return path


def by_test(mined, test: str):
    (rule,) = [r for r in mined.rules.rules if any(t.endswith(f"::{test}") for t in r.mined.tests)]
    return rule
