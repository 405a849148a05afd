"""Each `stackcheck memory` option moves exactly the terms it should, by exactly the amount
its formula says. Qwen2.5-0.5B: P = 494,032,768; 24 layers, hidden 896, MLP 4864, 2 KV heads
of 64, vocabulary 151,936 (tied). Expected figures are derived here from those dimensions."""

from __future__ import annotations

import json

import pytest

from .conftest import CONFIGS

P = 494_032_768
L, H, I, KV_HEADS, HEAD_DIM, V = 24, 896, 4864, 2, 64, 151_936  # noqa: E741 (I: the MLP width)
KV_PER_TOKEN = 2 * L * KV_HEADS * HEAD_DIM  # elements: K and V of every layer
GIB = 1024**3
# (in, out) of the seven Linear layers of one decoder layer: q, k, v, o, gate, up, down
LINEARS = {
    "q": (H, H),
    "k": (H, KV_HEADS * HEAD_DIM),
    "v": (H, KV_HEADS * HEAD_DIM),
    "o": (H, H),
    "gate": (H, I),
    "up": (H, I),
    "down": (I, H),
}


@pytest.fixture
def memory(cli_main):
    def run(*args) -> dict:
        code, out, err = cli_main("memory", "--config", CONFIGS / "Qwen2.5-0.5B.json", "--json", *args)
        assert (code, err) == (0, ""), err
        doc = json.loads(out)
        doc["bytes"] = {t["name"]: t["bytes"] for t in doc["terms"]}
        return doc

    return run


def test_default_inference_terms(memory):
    doc = memory()
    assert doc["workload"]["seq_len"] == 4096 and doc["workload"]["batch"] == 1
    assert doc["bytes"] == {
        "weights": 2 * P,
        "kv_cache": KV_PER_TOKEN * 2 * 4096,
        "activations": 4096 * (2 * H + 3 * I) * 2,
        "logits": V * 4,
        "runtime_overhead": GIB,
    }
    assert doc["total_bytes"] == sum(doc["bytes"].values())


def test_seq_len_scales_kv_cache_and_activations(memory):
    base, short = memory()["bytes"], memory("--seq-len", 1024)["bytes"]
    assert short["kv_cache"] == KV_PER_TOKEN * 2 * 1024 == base["kv_cache"] // 4
    assert short["activations"] == 1024 * (2 * H + 3 * I) * 2 == base["activations"] // 4
    assert {k: v for k, v in short.items() if k not in ("kv_cache", "activations")} == {
        k: v for k, v in base.items() if k not in ("kv_cache", "activations")
    }


def test_batch_scales_kv_activations_and_logits(memory):
    base, four = memory()["bytes"], memory("--batch", 4)["bytes"]
    assert (four["kv_cache"], four["activations"], four["logits"]) == (
        4 * base["kv_cache"],
        4 * base["activations"],
        4 * V * 4,
    )
    assert four["weights"] == base["weights"]


def test_concurrency_scales_the_kv_cache_and_logits_not_the_prefill(memory):
    base, three = memory()["bytes"], memory("--concurrency", 3)["bytes"]
    assert (three["kv_cache"], three["logits"]) == (3 * base["kv_cache"], 3 * V * 4)
    assert three["activations"] == base["activations"]


def test_kv_dtype_sets_the_cache_element_size(memory):
    assert memory("--kv-dtype", "fp8")["bytes"]["kv_cache"] == KV_PER_TOKEN * 1 * 4096
    assert memory("--kv-dtype", "fp32")["bytes"]["kv_cache"] == KV_PER_TOKEN * 4 * 4096
    assert memory("--kv-dtype", "fp8")["bytes"]["weights"] == 2 * P  # weights keep --dtype


def test_gpus_split_weights_and_kv_heads_for_tensor_parallel_inference(memory):
    two = memory("--gpus", 2)["bytes"]
    assert (two["weights"], two["kv_cache"]) == (P, KV_PER_TOKEN * 2 * 4096 // 2)
    assert two["runtime_overhead"] == GIB  # per GPU


@pytest.mark.parametrize("optimizer, per_param", [("adamw", 12), ("adamw8bit", 6), ("sgd", 8)])
def test_optimizer_states_per_parameter(memory, optimizer, per_param):
    """fp32 master weights (4 B) plus AdamW's m and v (4 + 4 B), 8-bit AdamW's (1 + 1 B),
    SGD momentum (4 B)."""
    doc = memory("--mode", "train", "--optimizer", optimizer)
    assert doc["bytes"]["optimizer_states"] == per_param * P
    assert doc["bytes"]["gradients"] == 2 * P and doc["bytes"]["weights"] == 2 * P


def test_zero3_shards_weights_gradients_and_optimizer_over_gpus(memory):
    doc = memory("--mode", "train", "--gpus", 4, "--zero", 3)["bytes"]
    assert (doc["weights"], doc["gradients"], doc["optimizer_states"]) == (
        2 * P // 4,
        2 * P // 4,
        12 * P // 4,
    )


def _lora_params(rank: int, targets=tuple(LINEARS)) -> int:
    return L * rank * sum(i + o for name, (i, o) in LINEARS.items() if name in targets)


@pytest.mark.parametrize(
    "args, params",
    [
        ((), _lora_params(16)),
        (("--lora-rank", 8), _lora_params(8)),
        (("--lora-targets", "q,v"), _lora_params(16, ("q", "v"))),
        (
            ("--lora-rank", 4, "--lora-targets", "q_proj,k_proj,v_proj,o_proj"),
            _lora_params(4, ("q", "k", "v", "o")),
        ),
    ],
)
def test_lora_rank_and_targets_size_the_adapters(memory, args, params):
    """Adapters A (r×in) and B (out×r) per targeted Linear, trained in fp32 with AdamW."""
    doc = memory("--mode", "lora", *args)["bytes"]
    assert (doc["adapter_weights"], doc["gradients"], doc["optimizer_states"]) == (
        4 * params,
        4 * params,
        8 * params,
    )
    assert doc["weights"] == 2 * P  # the frozen base
    assert _lora_params(16) == 8_798_208


def test_invalid_option_value_exits_2(cli_main):
    code, out, err = cli_main("memory", "--config", CONFIGS / "Qwen2.5-0.5B.json", "--seq-len", 0)
    assert (code, out) == (2, "")
    assert "Invalid value for '--seq-len'" in err and "Traceback" not in err
