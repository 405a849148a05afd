"""Knowledge rules as preflight/doctor checks, and their explain text."""

from __future__ import annotations

import msgspec

from stackcheck.checks.registry import DOCTOR, PREFLIGHT, all_checks
from stackcheck.judge import judge
from stackcheck.knowledge import load_knowledge
from tests.factories import dist, make_snapshot, recorded

KB = load_knowledge()


def kb_results(snap, command=PREFLIGHT):
    return {c.id: c for c in judge(snap, command=command).checks if c.id.startswith("KB")}


def test_every_rule_is_registered_and_scoped_ones_run_in_preflight_and_doctor():
    checks = all_checks()
    for rule in KB.rules:
        spec = checks[rule.id]
        assert spec.title == rule.title and spec.sources == tuple(rule.sources)
        scoped = any(msgspec.structs.asdict(rule.scope).values())
        runs = scoped and not rule.checked_by
        assert spec.commands == (frozenset({PREFLIGHT, DOCTOR}) if runs else frozenset()), rule.id


def test_explain_text_is_complete():
    text = all_checks()["KB017"].explain
    rule = KB.rule("KB017")
    for part in (rule.explanation, rule.fix, "confidence: high", "transformers==4.52.1"):
        assert part in text
    assert all_checks()["KB017"].sources == tuple(rule.sources)  # `explain` prints them
    assert "is installed with a DEP its wheel metadata" in all_checks()["KB006"].explain
    assert "Judged in preflight and doctor by CUDA002" in all_checks()["KB003"].explain
    assert "Error texts it explains" in all_checks()["KB004"].explain


def test_vllm_with_wrong_torch_is_blocked_with_a_concrete_fix():
    snap = recorded("vllm-011-h100")
    assert kb_results(snap)["KB006"].verdict == "ok"
    for d in snap.packages.distributions:
        if d.name == "torch":
            d.version = "2.6.0+cu124"
    r = kb_results(snap)["KB006"]
    assert r.verdict == "blocked" and r.category == "abi-mismatch"
    assert "vllm 0.11.0 requires torch==2.8.0" in r.observed
    assert r.expected == "torch==2.8.0 (pinned by vllm 0.11.0)"
    assert r.fix.endswith("-m pip install torch==2.8.0")
    assert r.evidence["rule"] == "KB006"


def test_specifier_rule_reports_evidence_and_expected():
    r = kb_results(recorded("old-driver-470-cu121"))["KB013"]
    assert r.verdict == "warning"
    assert r.observed == "transformers 4.57.1 (>=4.52); torch 2.3.1+cu121 (<2.6)"
    assert r.expected == KB.rule("KB013").expected


def test_not_applicable_is_skipped_with_what_is_missing():
    snap = make_snapshot(dist("vllm", "0.99.0"), torch="2.9.0", torch_cuda="12.8")
    r = kb_results(snap)["KB006"]
    assert r.verdict == "skipped" and "pins of vllm 0.99.0" in r.reason


def test_clean_machines_have_no_knowledge_findings():
    for name in ("h100-single", "h200-drv580-cu130", "multi-gpu-8xa100", "vllm-011-h100", "cpu-laptop"):
        bad = {
            i: c.observed
            for i, c in kb_results(recorded(name), DOCTOR).items()
            if c.verdict in ("warning", "blocked")
        }
        assert bad == {}, name


def test_numpy2_with_old_torch_is_blocked():
    snap = make_snapshot(dist("numpy", "2.0.1"), torch="2.2.2+cu121", torch_cuda="12.1")
    assert kb_results(snap)["KB023"].verdict == "blocked"
