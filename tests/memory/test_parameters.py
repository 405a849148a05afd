"""Exact parameter counts of real configs against their published totals."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.errors import InputError
from stackcheck.memory.architecture import (
    count_parameters,
    from_config,
    kv_elements_per_token,
    linear_modules,
)

from .conftest import load_config

PUBLISHED = {
    # file: (total, active per token or None for dense)
    "Qwen2.5-0.5B": (494_032_768, None),
    "Qwen2.5-7B": (7_615_616_512, None),
    "Llama-3.1-8B": (8_030_261_248, None),
    "Llama-3.2-3B": (3_212_749_824, None),
    "Qwen3-30B-A3B": (30_532_122_624, 3.3e9),
    "Qwen1.5-MoE-A2.7B": (14_315_784_192, 2.7e9),
    "Mixtral-8x7B-v0.1": (46_702_792_704, 12.9e9),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_total_matches_published(name):
    arch = from_config(load_config(name), name)
    counts = count_parameters(arch)
    total, active = PUBLISHED[name]
    assert counts.total == total
    if active is None:
        assert counts.active == counts.total
    else:  # model cards state the activated count to 0.1 B ("3.3B" for 3.35 B)
        assert abs(counts.active - active) < 0.1e9
    # the parts add up, and the Linear shapes LoRA sees are the counted linear weights
    assert counts.attention + counts.mlp + counts.norms + counts.embedding + counts.lm_head == counts.total
    assert (
        sum(i * o * n for layer in range(arch.layers) for _, i, o, n in linear_modules(arch, layer))
        == counts.linear
    )


def test_worked_example_split(worked):
    for key, name in (("Qwen2.5-0.5B-Instruct", "Qwen2.5-0.5B"), ("Qwen2.5-7B(-Instruct)", "Qwen2.5-7B")):
        ref = worked[key]
        counts = count_parameters(from_config(load_config(name)))
        assert counts.total == ref["total"]
        assert counts.embedding == ref["embed"]
        assert counts.lm_head == ref["lm_head"]
        assert counts.per_layer[0] == ref["per_layer"]
        assert sum(counts.per_layer) == ref["layers_total"]


def test_qwen2_has_qkv_bias_and_llama_none():
    qwen = load_config("Qwen2.5-0.5B")
    llama_like = {**qwen, "model_type": "llama"}
    diff = count_parameters(from_config(qwen)).total - count_parameters(from_config(llama_like)).total
    assert diff == 24 * (896 + 2 * 128)  # q, k, v biases per layer
    with_bias = {**llama_like, "attention_bias": True}
    assert count_parameters(from_config(with_bias)).total - count_parameters(
        from_config(llama_like)
    ).total == 24 * (896 + 2 * 128 + 896)


def test_tied_embeddings_counted_once():
    cfg = load_config("Llama-3.2-3B")
    untied = {**cfg, "tie_word_embeddings": False}
    assert (
        count_parameters(from_config(untied)).total - count_parameters(from_config(cfg)).total
        == 128256 * 3072
    )


def test_gqa_kv_cache_per_token(worked):
    for key, name in (("Qwen2.5-0.5B-Instruct", "Qwen2.5-0.5B"), ("Qwen2.5-7B(-Instruct)", "Qwen2.5-7B")):
        assert (
            kv_elements_per_token(from_config(load_config(name))) * 2
            == worked[key]["kv_bytes_per_token_bf16"]
        )


def test_deepseek_mla_and_shared_experts_layout():
    cfg = {
        "model_type": "deepseek_v3",
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "vocab_size": 100,
        "intermediate_size": 96,
        "moe_intermediate_size": 16,
        "n_routed_experts": 8,
        "n_shared_experts": 2,
        "num_experts_per_tok": 2,
        "first_k_dense_replace": 1,
        "q_lora_rank": 24,
        "kv_lora_rank": 32,
        "qk_nope_head_dim": 8,
        "qk_rope_head_dim": 4,
        "v_head_dim": 8,
    }
    arch = from_config(cfg)
    assert arch.sparse_layers == (1, 2) and arch.is_mla
    counts = count_parameters(arch)
    h = 64
    attention = h * 24 + 24 + 24 * 4 * 12 + h * 36 + 32 + 32 * 4 * 16 + 4 * 8 * h
    dense = 3 * h * 96
    sparse = 8 * 3 * h * 16 + 3 * h * 32 + h * 8  # experts, shared (2×16), router
    assert counts.total == 2 * 100 * h + 3 * (attention + 2 * h) + dense + 2 * sparse + h
    assert kv_elements_per_token(arch) == 3 * (32 + 4)


@pytest.mark.parametrize(
    "cfg, field",
    [
        ({}, "hidden_size"),
        ({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}, "vocab_size"),
        (
            {"hidden_size": "64", "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10},
            "hidden_size",
        ),
        (
            {
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "num_key_value_heads": 3,
                "vocab_size": 10,
            },
            "num_key_value_heads",
        ),
        (
            {"hidden_size": 64, "num_hidden_layers": 0, "num_attention_heads": 4, "vocab_size": 10},
            "num_hidden_layers",
        ),
        (
            {
                "model_type": "mixtral",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "vocab_size": 10,
            },
            "num_local_experts",
        ),
        ([1, 2], "JSON object"),
    ],
)
def test_invalid_config_names_the_field(cfg, field):
    with pytest.raises(InputError, match=field):
        from_config(cfg, "bad.json")


_dims = st.fixed_dictionaries(
    {
        "heads": st.integers(1, 16),
        "group": st.integers(1, 4),
        "head_dim": st.integers(1, 64),
        "layers": st.integers(1, 40),
        "inter": st.integers(1, 4096),
        "vocab": st.integers(1, 200_000),
        "tied": st.booleans(),
        "model_type": st.sampled_from(
            ["llama", "qwen2", "qwen3", "mistral", "qwen2_moe", "qwen3_moe", "mixtral", "somethingnew"]
        ),
        "experts": st.integers(1, 64),
        "moe_inter": st.integers(1, 1024),
    }
)


def _config(d: dict, layers: int | None = None, hidden_mult: int = 1) -> dict:
    kv = d["heads"]
    heads = kv * d["group"]
    return {
        "model_type": d["model_type"],
        "hidden_size": heads * d["head_dim"] * hidden_mult,
        "head_dim": d["head_dim"],
        "num_hidden_layers": layers or d["layers"],
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "intermediate_size": d["inter"],
        "vocab_size": d["vocab"],
        "tie_word_embeddings": d["tied"],
        "num_experts": d["experts"],
        "num_local_experts": d["experts"],
        "moe_intermediate_size": d["moe_inter"],
        "num_experts_per_tok": 1,
        "shared_expert_intermediate_size": d["moe_inter"],
    }


@settings(max_examples=150, deadline=None)
@given(_dims, st.integers(1, 8))
def test_count_is_monotone_in_layers_and_hidden(d, extra):
    base = count_parameters(from_config(_config(d))).total
    more_layers = count_parameters(from_config(_config(d, layers=d["layers"] + extra))).total
    wider = count_parameters(from_config(_config(d, hidden_mult=2))).total
    assert 0 < base < more_layers
    assert base < wider


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "model_type",
                "hidden_size",
                "num_hidden_layers",
                "num_attention_heads",
                "num_key_value_heads",
                "vocab_size",
                "intermediate_size",
                "head_dim",
                "num_experts",
                "num_local_experts",
                "moe_intermediate_size",
                "tie_word_embeddings",
                "mlp_only_layers",
                "decoder_sparse_step",
            ]
        ),
        st.one_of(
            st.integers(-2, 300),
            st.booleans(),
            st.text(max_size=5),
            st.none(),
            st.lists(st.integers(0, 4), max_size=3),
        ),
    )
)
def test_random_configs_count_or_fail_cleanly(cfg):
    """Never a traceback: a count, or an InputError naming what is wrong."""
    try:
        counts = count_parameters(from_config(cfg, "random.json"))
    except InputError as exc:
        assert str(exc).startswith("random.json")
    else:
        assert counts.total > 0
