"""The everyday-error rules (KB101–KB149): well-formed, sourced, and each example is diagnosed
as that rule by the whole triage pipeline while its counter-examples are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackcheck.knowledge import load_knowledge
from stackcheck.models.rule import CATEGORIES
from stackcheck.triage import triage_text
from stackcheck.triage.signatures import SignatureIndex

RULES_FILE = Path(__import__("stackcheck").__file__).parent / "knowledge" / "data" / "rules" / "everyday.json"
EVERYDAY = [r for r in load_knowledge().rules if 101 <= int(r.id[2:]) <= 149]


def test_everyday_file_is_the_source_of_these_rules():
    ids = [r["id"] for r in json.loads(RULES_FILE.read_text(encoding="utf-8"))["rules"]]
    assert ids == sorted(ids) and ids == [r.id for r in EVERYDAY]
    assert len(ids) >= 12


@pytest.mark.parametrize("rule", EVERYDAY, ids=lambda r: r.id)
def test_rule_is_sourced_and_complete(rule):
    assert rule.category in CATEGORIES
    assert rule.signatures and rule.examples and rule.counter_examples
    assert rule.explanation and rule.fix
    assert rule.sources and all(s.startswith("https://github.com/") for s in rule.sources)


@pytest.mark.parametrize("rule", EVERYDAY, ids=lambda r: r.id)
def test_signatures_match_examples_and_not_counter_examples(rule):
    index = SignatureIndex([rule])
    for text in rule.examples:
        assert index.search(text), f"{rule.id} must match: {text[:80]!r}"
    for text in rule.counter_examples:
        assert not index.search(text), f"{rule.id} must not match: {text[:80]!r}"


@pytest.mark.parametrize(
    ("rule", "example"),
    [(r, i) for r in EVERYDAY for i in range(len(r.examples))],
    ids=lambda v: v.id if hasattr(v, "id") else str(v),
)
def test_triage_ranks_the_rule_first_on_its_examples(rule, example):
    d = triage_text(rule.examples[example])
    assert d.matches and d.matches[0].rule_id == rule.id, [m.rule_id for m in d.matches]
    assert d.matches[0].evidence[0].startswith("line ")


@pytest.mark.parametrize("rule", EVERYDAY, ids=lambda r: r.id)
def test_triage_does_not_diagnose_the_rule_on_counter_examples(rule):
    for text in rule.counter_examples:
        assert rule.id not in [m.rule_id for m in triage_text(text).matches]


def test_every_rule_of_the_knowledge_base_is_found_by_triage_on_its_examples(kb):
    """Region extraction must not lose any rule's own example (curated rules included)."""
    lost = [
        (rule.id, text[:60])
        for rule in kb.rules
        for text in rule.examples
        if rule.signatures and rule.id not in [m.rule_id for m in triage_text(text).matches]
    ]
    assert not lost
