"""The evidence ladder: each level's proof, the scope rules, promotions as append-only events."""

from __future__ import annotations

import hashlib

import pytest

from stackcheck.errors import InputError, Refused
from tests.results.conftest import DELETE, full_draft


def refusal(fn, *args, **kw) -> str:
    with pytest.raises(Refused) as err:
        fn(*args, **kw)
    return str(err.value)


def test_a_passing_profile_never_raises_the_level_by_itself(record_in, ledger, raw_log):
    done = record_in(full_draft(raw_log))  # everything up to measured is there, claimed smoke
    assert done.record.profile.verdict == "ok"
    assert done.stored.evidence == "smoke"
    assert ledger.level_of(done.record) == "smoke"


def test_mechanism_needs_full_identity(record_in):
    msg = refusal(
        record_in,
        full_draft(
            evidence="mechanism",
            **{"model.thinking_source": "", "model.revision": "", "workload.seed": DELETE},
        ),
    )
    assert "model.revision: model revision pinned" in msg
    assert "model.thinking_source: where the thinking mode came from" in msg
    assert "workload.seed" in msg


def test_mechanism_needs_a_passing_preflight_of_the_declared_profile(record_in):
    msg = refusal(record_in, full_draft(evidence="mechanism", profile="LAB-BROKEN"))
    assert "preflight of LAB-BROKEN must pass at record time, it was blocked (failing: PKG001)" in msg
    assert record_in(full_draft(evidence="mechanism")).stored.evidence == "mechanism"


def test_declared_backend_version_must_match_the_snapshot(record_in):
    msg = refusal(record_in, full_draft(evidence="mechanism", **{"backend.version": "4.40.0"}))
    assert "declared 4.40.0 but the snapshot has transformers 4.57.1" in msg


def test_backend_version_is_filled_from_the_snapshot(record_in):
    done = record_in(full_draft(**{"backend.version": DELETE}))
    assert done.record.backend.version == "4.57.1"


def test_cpu_only_environment_cannot_carry_gpu_evidence(record_in):
    msg = refusal(
        record_in, full_draft(evidence="mechanism", **{"backend.version": "5.16.0"}), snapshot="cpu-laptop"
    )
    assert "a CPU-only environment cannot carry single-gpu evidence" in msg
    # the same claim filed as CPU smoke evidence is fine
    ok = record_in(
        full_draft(evidence="mechanism", profile="LAB-CPU", **{"backend.version": "5.16.0"}),
        snapshot="cpu-laptop",
    )
    assert ok.stored.evidence == "mechanism"


def test_single_gpu_evidence_cannot_stand_for_a_multi_gpu_claim(record_in):
    msg = refusal(record_in, full_draft(evidence="mechanism", profile="LAB-MULTI"), snapshot="h100-single")
    assert "single-GPU evidence cannot stand for a multi-GPU claim (the snapshot has 1 visible GPU)" in msg
    assert (
        record_in(
            full_draft(evidence="mechanism", profile="LAB-MULTI"), snapshot="multi-gpu-8xa100"
        ).stored.evidence
        == "mechanism"
    )


def test_serving_backend_cannot_stand_for_a_training_mechanism(record_in):
    draft = full_draft(
        evidence="mechanism",
        **{"backend.name": "vllm", "backend.version": DELETE, "workload.kind": "training"},
    )
    msg = refusal(record_in, draft, snapshot="vllm-011-h100")
    assert "a serving backend's run (vllm) cannot stand for a training mechanism" in msg
    draft["workload"]["kind"] = "serving"
    assert record_in(draft, snapshot="vllm-011-h100").record.backend.version == "0.11.0"


def test_measured_needs_repetitions_and_the_raw_log(record_in, raw_log):
    msg = refusal(
        record_in, full_draft(evidence="measured", **{"metrics.latency_p50_ms.repetitions": [41.0]})
    )
    assert "metrics.latency_p50_ms.repetitions: at least 3 repetitions with their dispersion, got 1" in msg
    assert 'the raw log with its sha256 (an artifact of kind "raw-log")' in msg
    done = record_in(full_draft(raw_log, evidence="measured"))
    metric = done.record.metrics["latency_p50_ms"]
    assert metric.dispersion.n == 3 and metric.dispersion.min == 41.0 and metric.dispersion.max == 41.9
    assert done.record.artifacts[0].sha256 == hashlib.sha256(raw_log.read_bytes()).hexdigest()


def test_declared_artifact_hash_must_match_the_file(record_in, raw_log):
    draft = full_draft(raw_log)
    draft["artifacts"][0]["sha256"] = "0" * 64
    assert "has sha256" in refusal(record_in, draft)


def test_failed_run_stays_at_smoke(record_in):
    draft = full_draft(evidence="mechanism", status="failed", failure_reason="CUDA out of memory", metrics={})
    assert "a failed run (CUDA out of memory) stays at smoke" in refusal(record_in, draft)
    assert (
        record_in(
            full_draft(status="failed", failure_reason="CUDA out of memory", metrics={})
        ).stored.evidence
        == "smoke"
    )


def test_promotion_is_an_append_only_event(record_in, ledger, raw_log):
    done = record_in(full_draft(raw_log))
    before = open(done.stored.path, "rb").read()
    event = ledger.promote(done.record, "measured")
    assert open(done.stored.path, "rb").read() == before  # the write-once file is untouched
    assert event.kind == "promotion" and event.proof["from"] == "smoke"
    assert ledger.level_of(done.record) == "measured"
    assert "levels only go up" in refusal(ledger.promote, done.record, "mechanism")


def test_promote_refuses_without_proof_and_lists_what_is_missing(record_in, ledger):
    done = record_in(full_draft(**{"model.revision": ""}))
    msg = refusal(ledger.promote, done.record, "measured")
    assert "model.revision" in msg and "raw log" in msg
    assert ledger.level_of(done.record) == "smoke"


def test_reproduced_needs_an_independent_run_within_tolerance(record_in, ledger, raw_log):
    original = record_in(full_draft(raw_log, evidence="measured"), snapshot="h100-single")
    assert "an independent run with the same identity key" in refusal(
        ledger.promote, original.record, "reproduced"
    )
    # a rerun from the same snapshot is not independent
    record_in(full_draft(raw_log, run_label="same-env", evidence="measured"), snapshot="h100-single")
    assert "an independent run" in refusal(ledger.promote, original.record, "reproduced")
    rerun = record_in(
        full_draft(
            raw_log,
            run_label="rerun",
            evidence="measured",
            **{"metrics.latency_p50_ms": {"value": 42.5, "unit": "ms", "repetitions": [42.1, 42.5, 42.9]}},
        ),
        snapshot="vllm-011-h100",
    )
    assert rerun.flags == []
    event = ledger.promote(original.record, "reproduced")
    assert event.proof["reproduced_by"] == rerun.stored.id


def test_reproduced_needs_a_declared_tolerance(record_in, ledger, raw_log):
    original = record_in(full_draft(raw_log, evidence="measured", tolerance={}))
    assert "declares no tolerance" in refusal(ledger.promote, original.record, "reproduced")


def test_rerun_outside_tolerance_flags_the_earlier_record(record_in, ledger, raw_log):
    original = record_in(full_draft(raw_log, evidence="measured"), snapshot="h100-single")
    slow = {"value": 60.0, "unit": "ms", "repetitions": [59.0, 60.0, 61.0]}
    rerun = record_in(
        full_draft(raw_log, run_label="rerun", evidence="measured", **{"metrics.latency_p50_ms": slow}),
        snapshot="vllm-011-h100",
    )
    assert len(rerun.flags) == 1
    assert rerun.flags[0].record_id == original.record.digest.partition(":")[2]
    assert "latency_p50_ms: 41.2 → 60" in rerun.flags[0].text
    entries = {e.record.digest: e for e in ledger.entries()}
    assert entries[original.record.digest].flags and not entries[rerun.record.digest].flags
    msg = refusal(ledger.promote, original.record, "reproduced")
    assert "flag: rerun" in msg


def test_delivery_needs_clean_git_released_versions_and_a_decision(record_in, ledger, raw_log, checkout):
    dirty_tree = checkout / "scratch.py"
    dirty_tree.write_text("x = 1\n")
    dirty = record_in(full_draft(raw_log, evidence="measured", git=DELETE), cwd=checkout)
    assert dirty.record.git.dirty is True and dirty.record.git.source == "observed"
    record_in(full_draft(raw_log, run_label="rerun", evidence="measured"), snapshot="vllm-011-h100")
    ledger.promote(dirty.record, "reproduced")
    msg = refusal(ledger.promote, dirty.record, "delivery")
    assert "git.dirty: a clean git working tree" in msg
    assert "decision: a recorded decision" in msg

    dirty_tree.unlink()
    clean = record_in(full_draft(raw_log, evidence="measured", git=DELETE, notes="clean tree"), cwd=checkout)
    assert clean.record.git.dirty is False and len(clean.record.git.commit) == 40
    ledger.promote(clean.record, "reproduced")
    ledger.decide(clean.record.topic, clean.record.run_label, "ship sdpa")
    event = ledger.promote(clean.record, "delivery")
    assert event.proof["from"] == "reproduced" and event.proof["decision"]


def test_declared_git_state_cannot_carry_delivery(record_in, ledger, raw_log, checkout):
    declared = record_in(full_draft(raw_log, evidence="measured"))  # outside a checkout: declared clean
    assert declared.record.git.source == "declared"
    record_in(full_draft(raw_log, run_label="rerun", evidence="measured"), snapshot="vllm-011-h100")
    ledger.promote(declared.record, "reproduced")
    ledger.decide(declared.record.topic, declared.record.run_label, "ship")
    assert "git.source: the git state observed by `record`" in refusal(
        ledger.promote, declared.record, "delivery"
    )
    with pytest.raises(
        InputError, match="git.commit: the draft declares cccccccccccc but the working tree is at"
    ):
        record_in(full_draft(raw_log), cwd=checkout)


def test_delivery_refuses_prereleases_and_checkouts(record_in, ledger, raw_log):
    from stackcheck.results.ladder import unreleased

    done = record_in(full_draft(raw_log, **{"backend.commit": "d" * 40}))
    rec = done.record
    rec.backend.version = "4.58.0.dev0"
    found = unreleased(rec)
    assert any("4.58.0.dev0 is not a released version" in f for f in found)
    assert any("built from commit" in f for f in found)


def test_an_oversized_backend_version_is_not_released(record_in, raw_log):
    """The bounded parser: Version() of 4,400 digits raises ValueError (int digit limit),
    which the ladder's own try/except InvalidVersion let through."""
    from stackcheck.results.ladder import unreleased

    rec = record_in(full_draft(raw_log)).record
    rec.backend.version = "1" * 4400
    assert unreleased(rec) == [f"backend.version: transformers {'1' * 4400} is not a released version"]
