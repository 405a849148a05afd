"""Triage on real error texts from public issues (tests/data/triage, see ORIGINS.md), whose
wording differs from the texts the rules were written from."""

from __future__ import annotations

import pytest

from stackcheck.environment import load_snapshot
from stackcheck.triage import triage_stream

from .conftest import SNAPSHOTS, TRIAGE_DATA, cases


@pytest.mark.parametrize("case", cases(), ids=lambda c: c["file"])
def test_real_error_text(case):
    snapshot = load_snapshot(str(SNAPSHOTS / case["snapshot"])) if case.get("snapshot") else None
    with open(TRIAGE_DATA / case["file"], "rb") as fh:
        d = triage_stream(fh, source=case["file"], snapshot=snapshot)
    if case["first"] is None:
        assert d.matches == []
        for text in case.get("region", []):
            assert text in d.failure_region
        return
    best = d.matches[0]
    assert best.rule_id == case["first"], [(m.rule_id, m.score) for m in d.matches]
    joined = "\n".join(best.evidence)
    for text in case.get("evidence", []):
        assert text in joined
    for text in case.get("fix", []):
        assert text in best.fix
    if "environment" in case:
        assert best.environment == case["environment"]
    if "environment_source" in case:
        assert case["environment_source"] in d.environment_source
    assert best.evidence[0].startswith(f"line {best.line}:")
    first, last = d.failure_region_lines
    assert first <= best.line <= last


def test_reworded_variants_of_one_failure_all_reach_the_same_rule():
    """Three generations of the CUDA OOM message (2019 'cached', 2021 'reserved', 2024
    'GPU 0 has a total capacity') give the same diagnosis."""
    from stackcheck.triage import triage_text

    texts = [
        (
            "RuntimeError: CUDA out of memory. Tried to allocate 26.00 MiB "
            "(GPU 0; 1024.00 MiB total capacity; 435.61 MiB already allocated; "
            "24.17 MiB free; 26.39 MiB cached)"
        ),
        (TRIAGE_DATA / "oom-legacy-wording.txt").read_text(),
        (TRIAGE_DATA / "oom-fragmentation.txt").read_text(),
    ]
    assert {triage_text(t).matches[0].rule_id for t in texts} == {"KB102"}
