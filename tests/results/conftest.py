"""Fixtures for the ledger tests: recorded snapshots, a registry of test profiles judged by
the real catalog and preflight, complete drafts, and throwaway ledgers."""

from __future__ import annotations

import copy
import json
import os
import uuid
from pathlib import Path

import pytest

from tests.factories import SNAPSHOTS, missing_prerequisite

HEX40_A, HEX40_B = "a" * 40, "b" * 40
TEMPLATE = "1" * 64
MANIFEST = "2" * 64

# Test profiles: satisfiable by the recorded snapshots (transformers 4.57.1 on h100-single).
REGISTRY = {
    "schema_version": "1.0",
    "include_builtin": False,
    "profiles": [
        {
            "id": "LAB-GPU",
            "title": "single-GPU inference",
            "requirements": ["transformers>=4.50"],
            "evidence_scope": "single-gpu",
        },
        {
            "id": "LAB-MULTI",
            "title": "multi-GPU training",
            "requirements": ["transformers>=4.50"],
            "evidence_scope": "multi-gpu",
        },
        {"id": "LAB-CPU", "title": "CPU smoke", "evidence_scope": "cpu-smoke"},
        {
            "id": "LAB-BROKEN",
            "title": "needs what no snapshot has",
            "requirements": ["nonexistent-package>=1"],
            "evidence_scope": "single-gpu",
        },
    ],
}


@pytest.fixture(scope="session")
def registry_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("registry") / "environment-profiles.json"
    path.write_text(json.dumps(REGISTRY))
    return path


@pytest.fixture(scope="session")
def catalog(registry_file):
    from stackcheck.catalog import load_catalog

    return load_catalog(str(registry_file))


def snapshot_path(name: str) -> Path:
    return SNAPSHOTS / f"{name}.json"


@pytest.fixture
def raw_log(tmp_path) -> Path:
    path = tmp_path / "run.log"
    path.write_text("step 1 latency 41.0\nstep 2 latency 41.2\nstep 3 latency 41.9\n")
    return path


def full_draft(raw_log: Path | None = None, **changes) -> dict:
    """A draft with everything up to 'measured' (raw log, 3 repetitions, full identity)."""
    draft = {
        "topic": "inference/qwen2.5-0.5b-latency",
        "run_label": "baseline-sdpa",
        "profile": "LAB-GPU",
        "model": {
            "id": "Qwen/Qwen2.5-0.5B-Instruct",
            "revision": HEX40_A,
            "tokenizer_revision": HEX40_B,
            "chat_template_sha256": TEMPLATE,
            "thinking": "off",
            "thinking_source": "chat_template_kwargs.enable_thinking=false",
            "dtype": "bfloat16",
        },
        "backend": {"name": "transformers", "version": "4.57.1", "args": {"attn_implementation": "sdpa"}},
        "workload": {
            "kind": "inference",
            "manifest_sha256": MANIFEST,
            "samples": 200,
            "concurrency": 1,
            "input_tokens": 512,
            "output_tokens": 128,
            "seed": 0,
        },
        "metrics": {"latency_p50_ms": {"value": 41.2, "unit": "ms", "repetitions": [41.0, 41.2, 41.9]}},
        "tolerance": {"*": 0.05},
        "status": "ok",
        "evidence": "smoke",
        "git": {"commit": "c" * 40, "dirty": False},
    }
    if raw_log is not None:
        draft["artifacts"] = [{"path": str(raw_log), "kind": "raw-log"}]
    for dotted, value in changes.items():
        set_field(draft, dotted, value)
    return draft


def set_field(draft: dict, dotted: str, value) -> None:
    """``set_field(d, "model__revision", x)`` or ``set_field(d, "model.revision", x)``."""
    keys = dotted.replace("__", ".").split(".")
    target = draft
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    if value is DELETE:
        target.pop(keys[-1], None)
    else:
        target[keys[-1]] = copy.deepcopy(value)


DELETE = object()


@pytest.fixture
def ledger(tmp_path):
    from stackcheck.results.ledger import Ledger

    with Ledger(tmp_path / "ledger") as led:
        yield led


def postgres_dsn() -> str:
    """The test PostgreSQL server's DSN. Without one the PostgreSQL tests skip, saying why —
    and fail when CI=true: CI starts the server (.ci/postgres.sh), so no DSN there means the
    server did not start, and a skip would pass a ledger path nobody tested."""
    dsn = os.environ.get("STACKCHECK_TEST_POSTGRES_DSN")
    if not dsn:
        missing_prerequisite(
            "STACKCHECK_TEST_POSTGRES_DSN is not set: the PostgreSQL server did not start "
            "(source .ci/postgres.sh to start a throwaway server)"
        )
    return dsn


@pytest.fixture
def pg_ledger(tmp_path):
    """A ledger indexed in a fresh schema of the test PostgreSQL server."""
    dsn = postgres_dsn()
    import psycopg

    from stackcheck.results.ledger import Ledger

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = with_search_path(dsn, schema)
    with Ledger(tmp_path / "ledger", url) as led:
        yield led
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def with_search_path(dsn: str, schema: str) -> str:
    """A postgresql:// URL whose sessions use ``schema`` (so tests never share tables)."""
    sep = "&" if "?" in dsn else "?"
    return f"{dsn}{sep}options=-csearch_path%3D{schema}"


@pytest.fixture
def record_in(ledger, catalog, tmp_path):
    """record_in(draft, snapshot="h100-single", into=ledger) → Recorded, through the real API."""
    from stackcheck.results import record

    def _record(draft: dict, snapshot: str | Path = "h100-single", into=None, cwd=None):
        snap = snapshot_path(snapshot) if isinstance(snapshot, str) else snapshot
        return record(draft, snapshot=snap, ledger=into or ledger, catalog=catalog, cwd=cwd or tmp_path)

    return _record


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_ledger(request):
    """The same tests over the SQLite index and the PostgreSQL index."""
    return request.getfixturevalue("ledger" if request.param == "sqlite" else "pg_ledger")


@pytest.fixture
def results_cli(tmp_path, registry_file, capsys, monkeypatch):
    """results_cli(*args, ledger_dir=DIR, ledger=DSN) → (exit code, stdout, stderr) through the
    real entry point, from tmp_path (``record`` gets the test registry)."""
    monkeypatch.chdir(tmp_path)

    def run(*args, ledger_dir, ledger=None):
        return cli_runner(capsys, registry_file, "--ledger-dir", str(ledger_dir))(*args, ledger=ledger)

    return run


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A clean git checkout to record from (the ledger lives outside it)."""
    import subprocess

    repo = tmp_path / "checkout"
    repo.mkdir()
    (repo / "train.py").write_text("print('experiment')\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    for argv in (["init", "-q"], ["add", "train.py"], ["commit", "-q", "-m", "experiment"]):
        subprocess.run(["git", "-C", str(repo), *argv], check=True, env=env, capture_output=True)
    return repo


def cli_runner(capsys, registry_file, *extra: str):
    """run(*args, ledger=None) → (exit code, stdout, stderr) of ``stackcheck results ARGS
    EXTRA`` through the real entry point; ``record`` gets the test registry."""
    from stackcheck.cli import main

    def run(*args, ledger=None):
        argv = ["results", *args, *extra]
        if ledger:
            argv += ["--ledger", ledger]
        if args[0] == "record":
            argv += ["--registry", str(registry_file)]
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            main(argv)
        out = capsys.readouterr()
        return done.value.code, out.out, out.err

    return run
