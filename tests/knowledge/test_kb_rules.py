"""Every rule's signatures match its real error texts and reject its near misses; the rule set
covers every fact family and stays inside its ID range and vocabulary."""

from __future__ import annotations

import pytest
import re2

from stackcheck.knowledge import load_knowledge
from stackcheck.knowledge.loader import DATA_DIR, load_rules
from stackcheck.models.rule import CATEGORIES

KB = load_knowledge()
CURATED = [r for r in load_rules(DATA_DIR / "rules") if int(r.id[2:]) < 100]


def matches(rule, text: str) -> bool:
    return any(re2.search(sig, text) for sig in rule.signatures)


@pytest.mark.parametrize("rule", [r for r in KB.rules if r.examples or r.signatures], ids=lambda r: r.id)
def test_examples_match_and_counter_examples_do_not(rule):
    for text in rule.examples:
        assert matches(rule, text), f"{rule.id}: no signature matches its example {text!r}"
    for text in rule.counter_examples:
        assert not matches(rule, text), f"{rule.id}: a signature matches its counter-example {text!r}"


@pytest.mark.parametrize("rule", [r for r in CURATED if r.signatures], ids=lambda r: r.id)
def test_every_curated_signature_is_exercised_by_a_real_example(rule):
    assert rule.examples, f"{rule.id} has signatures but no real error text"
    assert rule.counter_examples, f"{rule.id} has signatures but no near miss"
    for sig in rule.signatures:
        assert any(re2.search(sig, t) for t in rule.examples), (
            f"{rule.id}: signature {sig!r} matches none of its examples"
        )


def test_curated_rules_cover_the_reference_and_stay_in_their_id_range():
    ids = [r.id for r in CURATED]
    assert len(ids) >= 30
    assert all(re2.fullmatch(r"KB0\d\d", i) for i in ids)
    assert ids == sorted(ids)
    assert all(r.category in CATEGORIES for r in CURATED)
    assert all(r.sources and r.explanation and r.fix for r in CURATED)
    # every fact family of the reference is represented by at least one scoped rule
    predicates = " ".join(r.scope.predicate or "" for r in CURATED)
    for family in (
        "driver-below-cuda-floor",
        "gpu-arch-not-in-torch-build",
        "pin-mismatch:vllm:torch",
        "pin-mismatch:sglang",
        "pin-mismatch:xformers",
        "pin-mismatch:transformers:tokenizers",
        "pin-mismatch:bitsandbytes",
        "companion-mismatch:torchvision",
        "python-outside-torch-window",
        "glibc-below-wheel",
    ):
        assert family in predicates, family
    assert any("flash-attn" in " ".join(r.scope.packages) for r in CURATED)


def test_rules_are_sorted_and_unique_across_files():
    ids = [r.id for r in KB.rules]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    assert KB.rule("kb006").id == "KB006"
    assert KB.rule("KB999") is None


def test_signatures_are_tolerant_of_wording_variants():
    # the same failure as written by older releases / other wrappers
    assert matches(
        KB.rule("KB001"), "RuntimeError: CUDA error: no kernel image is available for execution on device"
    )
    assert matches(
        KB.rule("KB015"),
        "ImportError: tokenizers>=0.11.1,!=0.11.3,<0.14 is required for a normal functioning of "
        "this module, but found tokenizers==0.15.0.",
    )
    assert matches(KB.rule("KB012"), "Disabling PyTorch because PyTorch >= 2.4 is required but found 2.3.1")
    assert matches(KB.rule("KB024"), "undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12")
    assert matches(
        KB.rule("KB006"),
        "ImportError: /x/vllm/_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN5torch3jit17parseSchemaOrNameERKSsb",
    )
