"""A ledger with two topics built once through the real API: a measured throughput series of
two backends (the last transformers run a regression), two candidates of one topic (their
diff), a smoke record with a failing preflight, a decision; plus a mined rule file and a
preflight report that quotes secrets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.results.conftest import REGISTRY, full_draft, snapshot_path

SECRET_TOKEN = "hf_" + "Zq7mKpL2vX9wR4tY8uN3bJ6cD1eF5gH0"
SECRET_PASSWORD = "s3cr3t-Passw0rd-7781"
THROUGHPUT = "bench/qwen2.5-0.5b-throughput"
LATENCY = "inference/qwen2.5-0.5b-latency"


def _bench(run_label: str, backend: dict, value: float, raw_log: Path) -> dict:
    draft = full_draft(raw_log, topic=THROUGHPUT, run_label=run_label, evidence="measured")
    draft["backend"] = backend
    draft["metrics"] = {
        "throughput": {"value": value, "unit": "tok/s", "repetitions": [value * 0.99, value, value * 1.01]}
    }
    return draft


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """(ledger dir, registry file, rule file, preflight report file, record ids by label)."""
    return build_inputs(tmp_path_factory.mktemp("report-ledger"))


def build_inputs(root: Path):
    """The ledger and files of :func:`built` under ``root`` (also what docs/report.md shows)."""
    from stackcheck.catalog import load_catalog
    from stackcheck.results import record
    from stackcheck.results.ledger import Ledger

    registry = root / "environment-profiles.json"
    registry.write_text(json.dumps(REGISTRY))
    catalog = load_catalog(str(registry))
    raw_log = root / "run.log"
    raw_log.write_text("step 1 throughput 1000\nstep 2 throughput 1010\nstep 3 throughput 990\n")
    ids = {}
    with Ledger(root / "ledger") as ledger:

        def put(draft, snapshot="h100-single"):
            done = record(draft, snapshot=snapshot_path(snapshot), ledger=ledger, catalog=catalog, cwd=root)
            ids[draft["run_label"]] = done.stored.id
            return done

        hf = {"name": "transformers", "version": "4.57.1", "args": {"attn_implementation": "sdpa"}}
        put(_bench("hf-run1", hf, 1000.0, raw_log))
        put(_bench("hf-run2", hf, 1040.0, raw_log))
        put(_bench("hf-run3", hf, 700.0, raw_log))  # 33 % slower: a regression
        vllm = {"name": "vllm", "version": "0.11.0", "args": {"max_num_seqs": 64}}
        put(_bench("vllm-run1", vllm, 5200.0, raw_log), snapshot="vllm-011-h100")
        put(_bench("vllm-run2", vllm, 5300.0, raw_log), snapshot="vllm-011-h100")
        put(full_draft(raw_log, evidence="measured"))  # baseline-sdpa, the latency topic
        flash = full_draft(raw_log, run_label="flash-attn", evidence="measured")
        flash["backend"]["args"] = {"attn_implementation": "flash_attention_2"}
        flash["metrics"]["latency_p50_ms"] = {"value": 38.0, "unit": "ms", "repetitions": [37.9, 38.0, 38.3]}
        put(flash)
        broken = full_draft(None, topic="smoke/broken-env", run_label="broken", profile="LAB-BROKEN")
        put(broken)
        oom = full_draft(None, topic="smoke/broken-env", run_label="oom", status="failed", evidence="smoke")
        oom["backend"] = {"name": "vllm", "version": "0.11.0", "args": {"max_num_seqs": 256}}
        oom["failure_reason"] = "CUDA out of memory at max_num_seqs 256"
        put(oom, snapshot="vllm-011-h100")
        ledger.decide(LATENCY, "baseline-sdpa", "ship sdpa; flash-attn gains <10%")

    mined = root / "mined.json"
    mined.write_text(json.dumps(_rule_file()))
    report = root / "node-7.json"
    report.write_text(json.dumps(_secret_report()))
    return root / "ledger", registry, mined, report, ids


@pytest.fixture
def ledger_copy(built, tmp_path) -> Path:
    """A copy of the built ledger a test may damage."""
    target = tmp_path / "ledger"
    shutil.copytree(built[0], target)
    return target


def _rule_file() -> dict:
    def rule(rid: str, title: str, coverage: float, support: int, fp: float, scope: str, separated: bool):
        return {
            "id": rid,
            "title": title,
            "category": "abi-mismatch",
            "signatures": [r"AttributeError: module 'numpy' has no attribute 'float'"],
            "fix": "pip install 'numpy<2'",
            "provenance": "mined",
            "sources": ["mined from the CI logs of the test store"],
            "origin": "mined:ci",
            "mined": {
                "signature": "ab" * 8,
                "support": support,
                "coverage": coverage,
                "attempts": 24,
                "failures": 23,
                "failure_rate": 23 / 24,
                "wilson_lower": 0.79,
                "reproducibility": "flaky",
                "false_positives": 1,
                "passing_jobs": 40,
                "false_positive_rate": fp,
                "env_scope": scope,
                "separated": separated,
            },
        }

    return {
        "schema_version": "1.0",
        "rules": [
            rule("MINED-A1", "numpy 2 removed np.float", 0.6, 12, 0.025, "numpy>=2.0", True),
            rule(
                "MINED-B2", "flaky network test", 0.15, 3, 0.1, "no separating fact: code or flakiness", False
            ),
        ],
    }


def _secret_report() -> dict:
    """A preflight --json report whose texts quote an HF token and an index password."""
    return {
        "schema_version": "1.0",
        "kind": "preflight",
        "profile": "LAB-GPU",
        "verdict": "blocked",
        "snapshot_digest": "sha256:" + "9" * 64,
        "environment": {"source": "live", "captured_at": "2026-11-30T10:00:00Z"},
        "checks": [
            {
                "id": "PKG001",
                "title": "required distributions",
                "verdict": "blocked",
                "observed": f"HF_TOKEN={SECRET_TOKEN} in the environment; transformers missing",
                "expected": "transformers>=4.50",
                "fix": f"pip install --index-url https://ci:{SECRET_PASSWORD}@pypi.example.org/simple "
                "transformers",
            },
            {"id": "PY001", "title": "Python version", "verdict": "ok", "observed": "3.12.3"},
        ],
    }
