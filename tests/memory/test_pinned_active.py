"""Exact active-per-token parameter counts of the mixture-of-experts configs.

The model cards round the activated count to 0.1 B, which hides the routers (12.6 M in
Qwen3-30B-A3B, 1 M in Mixtral): these pin the exact figure, and derive it a second way from
the config alone (every parameter, less the routed experts a token does not use).
"""

from __future__ import annotations

import pytest

from stackcheck.memory.architecture import count_parameters, from_config

from .conftest import load_config

# name: (exact total, exact active per token); the routers in all layers are 48·2048·128,
# 24·2048·(60 + 1) (with the shared-expert gate) and 32·4096·8 of these.
EXACT = {
    "Qwen3-30B-A3B": (30_532_122_624, 3_353_032_704),
    "Qwen1.5-MoE-A2.7B": (14_315_784_192, 2_689_173_504),
    "Mixtral-8x7B-v0.1": (46_702_792_704, 12_879_925_248),
}


def _idle_experts(cfg: dict) -> int:
    """Weights of the routed experts a token does not use, from the config's own fields."""
    hidden, layers = cfg["hidden_size"], cfg["num_hidden_layers"]
    experts = cfg.get("num_local_experts") or cfg["num_experts"]
    width = cfg.get("moe_intermediate_size") or cfg["intermediate_size"]
    step = cfg.get("decoder_sparse_step", 1)
    sparse = [i for i in range(layers) if i not in cfg.get("mlp_only_layers", []) and (i + 1) % step == 0]
    return (experts - cfg["num_experts_per_tok"]) * 3 * hidden * width * len(sparse)


@pytest.mark.parametrize("name", sorted(EXACT))
def test_active_parameters_are_exact(name):
    total, active = EXACT[name]
    cfg = load_config(name)
    counts = count_parameters(from_config(cfg, name))
    assert (counts.total, counts.active) == (total, active)
    # every parameter a token passes through, routers included, is active
    assert counts.active == counts.total - _idle_experts(cfg)


def test_router_weights_count_in_active_parameters():
    """A tiny Mixtral: 2 layers, hidden 8, 4 experts of width 16, 2 per token."""
    cfg = {
        "model_type": "mixtral",
        "hidden_size": 8,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "vocab_size": 10,
        "intermediate_size": 16,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
        "tie_word_embeddings": False,
    }
    counts = count_parameters(from_config(cfg))
    attention = 8 * 8 + 2 * 8 * 4 + 8 * 8  # q, k+v (one kv head of dim 4), o
    expert = 3 * 8 * 16
    router = 8 * 4
    layer_norms = 2 * 8
    per_layer_active = attention + 2 * expert + router + layer_norms
    assert counts.active == 2 * per_layer_active + 2 * 10 * 8 + 8
    assert counts.total == counts.active + 2 * 2 * expert
