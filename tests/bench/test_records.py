"""Each case lands in the evidence ledger as a ResultRecord: measured when ok, failed when wrong."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from stackcheck.bench.cases import backends_named
from stackcheck.bench.suite import run_and_write
from stackcheck.results.ladder import missing
from tests.bench.conftest import ATTN, wrong_by

pytest.importorskip("torch")


def bench_into(
    ledger, tmp_path, cpu, laptop, catalog, profile="LAB-CPU", names=("sdpa-math", "eager", "sdpa-cudnn")
):
    return run_and_write(
        backends_named(list(names)),
        [ATTN],
        out_dir=tmp_path / "run",
        snapshot=laptop,
        ledger=ledger,
        profile=profile,
        run_label="baseline",
        catalog=catalog,
        cwd=tmp_path,
        device=cpu,
        reps=6,
        warmup=1,
        prepare=wrong_by(1.05, "eager"),
    )


def check_records(ledger, outcome, tmp_path, laptop):
    raw = (tmp_path / "run" / "bench.json").read_bytes()
    assert [p.name for p in outcome.written] == [
        "bench.json",
        "matrix.txt",
        "matrix.md",
        "pytest-benchmark.json",
    ]
    filed = {f.case.backend: f for f in outcome.filed}
    assert (filed["sdpa-cudnn"].id, filed["sdpa-cudnn"].note) == (
        "",
        "skipped: CPU-only: no CUDA GPU here for cuDNN attention",
    )
    entries = {e.record.backend.args["path"]: e for e in ledger.entries()}
    assert sorted(entries) == ["eager", "sdpa-math"]  # the skipped case measured nothing

    ok = entries["sdpa-math"].record
    assert (entries["sdpa-math"].level, filed["sdpa-math"].evidence, filed["sdpa-math"].note) == (
        "measured",
        "measured",
        "",
    )
    assert missing(ok, "measured", ledger) == []
    assert ok.topic == "bench/attention/attn-tiny" and ok.run_label == "baseline"
    assert (ok.backend.name, ok.backend.version) == ("torch", laptop.distribution("torch").version)
    assert ok.backend.args == {
        "path": "sdpa-math",
        "group": "attention/sdpa",
        "op": "attention",
        "dtype": "float32",
    }
    assert (ok.workload.kind, ok.workload.samples, ok.workload.seed) == ("kernel", 6, 0)
    assert ok.model.id == "stackcheck-bench/attention" and ok.model.dtype == "float32"
    case = filed["sdpa-math"].case
    assert ok.metrics["time_ms"].repetitions == pytest.approx([t * 1e3 for t in case.times_s])
    assert ok.metrics["time_ms"].dispersion.n == 6
    assert len(ok.metrics["tflops"].repetitions) == 6
    assert [(a.kind, a.sha256) for a in ok.artifacts] == [("raw-log", hashlib.sha256(raw).hexdigest())]
    assert ok.snapshot_digest and ok.profile.id == "LAB-CPU" and ok.profile.verdict in ("ok", "warning")

    bad = entries["eager"].record
    assert (bad.status, entries["eager"].level) == ("failed", "smoke")
    assert (
        bad.failure_reason.startswith("wrong: max error ")
        and "exceeds the float32 bound" in bad.failure_reason
    )
    # another path on the same shape is another candidate of the same topic
    assert bad.topic == ok.topic and bad.identity_key != ok.identity_key
    assert bad.workload.manifest_sha256 == ok.workload.manifest_sha256  # the same inputs


def test_records_land_in_the_sqlite_ledger(ledger, tmp_path, cpu, laptop, bench_catalog):
    outcome = bench_into(ledger, tmp_path, cpu, laptop, bench_catalog)
    check_records(ledger, outcome, tmp_path, laptop)


@pytest.mark.postgres
def test_records_land_in_the_postgresql_ledger(tmp_path, cpu, laptop, bench_catalog):
    import psycopg

    from stackcheck.results.ledger import Ledger
    from tests.results.conftest import postgres_dsn, with_search_path

    dsn = postgres_dsn()
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        with Ledger(tmp_path / "ledger", with_search_path(dsn, schema)) as ledger:
            outcome = bench_into(ledger, tmp_path, cpu, laptop, bench_catalog)
            check_records(ledger, outcome, tmp_path, laptop)
            assert ledger.index.url.startswith("postgresql://")
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_failing_profile_records_at_smoke_saying_why(ledger, tmp_path, cpu, laptop, bench_catalog):
    outcome = bench_into(ledger, tmp_path, cpu, laptop, bench_catalog, "LAB-BROKEN", ["sdpa-math"])
    [filed] = outcome.filed
    assert filed.evidence == "smoke"
    assert filed.note.startswith(
        "the result does not prove evidence level 'measured'; missing: profile: preflight"
    )
    assert "LAB-BROKEN must pass at record time, it was blocked" in filed.note


def test_kernel_workloads_need_no_model_revision_but_inference_does(
    ledger, tmp_path, cpu, laptop, bench_catalog
):
    import msgspec

    [filed] = bench_into(ledger, tmp_path, cpu, laptop, bench_catalog).filed[:1]
    rec = ledger.get(filed.id)[0]
    assert missing(rec, "measured") == []
    as_inference = msgspec.structs.replace(
        rec, workload=msgspec.structs.replace(rec.workload, kind="inference")
    )
    assert missing(as_inference, "measured") == [
        "model.revision: model revision pinned to a 40-hex commit",
        "model.tokenizer_revision: tokenizer revision pinned to a 40-hex commit",
        "model.chat_template_sha256: sha256 of the chat template actually used",
        "model.thinking_source: where the thinking mode came from",
        "workload.concurrency: part of the workload identity",
        "workload.input_tokens: part of the workload identity",
        "workload.output_tokens: part of the workload identity",
    ]
