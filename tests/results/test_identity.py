"""Identity and candidates: which changes make a new candidate and which are another run."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackcheck.results.contract import Draft
from stackcheck.results.identity import identity_key
from tests.results.conftest import full_draft

IDENTITY_CHANGES = [
    ("topic", "inference/other"),
    ("profile", "LAB-CPU"),
    ("model.id", "Qwen/Qwen2.5-1.5B-Instruct"),
    ("model.revision", "e" * 40),
    ("model.tokenizer_revision", "f" * 40),
    ("model.chat_template_sha256", "3" * 64),
    ("model.thinking", "on"),
    ("model.dtype", "float16"),
    ("model.quantization", "awq"),
    ("backend.name", "vllm"),
    ("backend.version", "4.57.2"),
    ("backend.args", {"attn_implementation": "flash_attention_2"}),
    ("backend.build", {"TORCH_CUDA_ARCH_LIST": "9.0"}),
    ("backend.commit", "d" * 40),
    ("workload.manifest_sha256", "4" * 64),
    ("workload.samples", 100),
    ("workload.concurrency", 8),
    ("workload.input_tokens", 1024),
    ("workload.output_tokens", 256),
    ("workload.seed", 1),
    ("workload.kind", "serving"),
]

NOT_IDENTITY = [
    ("run_label", "baseline-sdpa-again"),
    ("metrics", {"latency_p50_ms": {"value": 99.0, "unit": "ms"}}),
    ("evidence", "mechanism"),
    ("notes", "second try after reboot"),
    ("model.thinking_source", "model default"),
    ("tolerance", {"*": 0.5}),
    ("git", {"commit": "9" * 40, "dirty": True}),
]


def key(draft: dict) -> str:
    d = msgspec.convert(draft, Draft)
    return identity_key(d, d.profile)


@pytest.mark.parametrize(("field", "value"), IDENTITY_CHANGES, ids=[f for f, _ in IDENTITY_CHANGES])
def test_each_identity_field_changes_the_key(field, value):
    assert key(full_draft(**{field: value})) != key(full_draft())


@pytest.mark.parametrize(("field", "value"), NOT_IDENTITY, ids=[f for f, _ in NOT_IDENTITY])
def test_labels_metrics_and_claims_do_not(field, value):
    assert key(full_draft(**{field: value})) == key(full_draft())


def test_same_key_is_another_run_of_the_same_candidate(record_in, ledger):
    first = record_in(full_draft())
    again = record_in(full_draft(run_label="rerun"), snapshot="vllm-011-h100")
    assert again.stored.candidate == first.stored.candidate
    assert again.stored.id != first.stored.id
    assert len(ledger.same_candidate(first.record)) == 2


@pytest.mark.parametrize(
    "field", ["model.revision", "model.tokenizer_revision", "model.chat_template_sha256", "model.thinking"]
)
def test_changed_model_tokenizer_template_or_thinking_is_a_new_candidate(record_in, field):
    value = {
        "model.revision": "e" * 40,
        "model.tokenizer_revision": "f" * 40,
        "model.chat_template_sha256": "3" * 64,
        "model.thinking": "on",
    }[field]
    first = record_in(full_draft())
    second = record_in(full_draft(**{field: value}))
    assert second.stored.candidate != first.stored.candidate


def test_environment_does_not_enter_the_key(record_in):
    a = record_in(full_draft(), snapshot="h100-single")
    b = record_in(full_draft(), snapshot="cpu-laptop")
    assert a.record.snapshot_digest != b.record.snapshot_digest
    assert a.record.identity_key == b.record.identity_key


json_leaf = st.one_of(st.integers(-5, 5), st.booleans(), st.text(max_size=4), st.none())


@given(args=st.dictionaries(st.text(min_size=1, max_size=6), json_leaf, max_size=6), data=st.data())
def test_key_is_canonical_over_argument_order_and_sensitive_to_any_argument(args, data):
    draft = full_draft(**{"backend.args": args})
    shuffled = dict(reversed(list(args.items())))
    assert key(full_draft(**{"backend.args": shuffled})) == key(draft)
    if args:
        name = data.draw(st.sampled_from(sorted(args)))
        changed = {**args, name: [args[name]]}  # any different value
        assert key(full_draft(**{"backend.args": changed})) != key(draft)
