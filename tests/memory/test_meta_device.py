"""Our count against transformers' own model built on the meta device (no weights, no download).

Runs where torch and transformers are installed (they are not stackcheck dependencies)."""

import pytest

from stackcheck.memory.architecture import count_parameters, from_config

from .conftest import load_config

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")


def _meta_count(cfg: dict) -> int:
    config = transformers.AutoConfig.for_model(**cfg)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    seen, total = set(), 0
    for p in model.parameters():  # tied weights are one Parameter: count it once
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def _shrunk(name: str) -> dict:
    """The real config with fewer layers (and experts), so building it stays cheap."""
    cfg = load_config(name)
    cfg = {k: v for k, v in cfg.items() if k not in ("architectures", "transformers_version", "torch_dtype")}
    cfg["num_hidden_layers"] = 2
    for key in ("num_experts", "num_local_experts"):
        if key in cfg:
            cfg[key] = min(cfg[key], 8)
    return cfg


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["Qwen2.5-0.5B", "Qwen2.5-7B", "Llama-3.2-3B", "Qwen3-30B-A3B", "Qwen1.5-MoE-A2.7B", "Mixtral-8x7B-v0.1"],
)
def test_matches_meta_device_model(name):
    cfg = _shrunk(name)
    assert count_parameters(from_config(cfg, name)).total == _meta_count(cfg)


@pytest.mark.slow
def test_full_size_qwen_0_5b_on_meta_device():
    cfg = {k: v for k, v in load_config("Qwen2.5-0.5B").items() if k != "architectures"}
    assert _meta_count(cfg) == 494_032_768 == count_parameters(from_config(cfg)).total


@pytest.mark.slow
def test_deepseek_v3_on_meta_device():
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
        "n_group": 2,
        "topk_group": 1,
    }
    assert count_parameters(from_config(cfg)).total == _meta_count(cfg)


@pytest.mark.slow
@pytest.mark.parametrize(
    "cfg",
    [
        # Gemma: tied by default (no tie_word_embeddings key), MQA, head_dim ≠ hidden/heads
        dict(
            model_type="gemma",
            hidden_size=2048,
            num_hidden_layers=2,
            num_attention_heads=8,
            num_key_value_heads=1,
            head_dim=256,
            intermediate_size=16384,
            vocab_size=256000,
        ),
        # Gemma 2: four norms per layer
        dict(
            model_type="gemma2",
            hidden_size=2304,
            num_hidden_layers=2,
            num_attention_heads=8,
            num_key_value_heads=4,
            head_dim=256,
            intermediate_size=9216,
            vocab_size=256000,
        ),
        # Gemma 3 text: four norms per layer + q/k norms
        dict(
            model_type="gemma3_text",
            hidden_size=1152,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=256,
            intermediate_size=6912,
            vocab_size=262144,
        ),
        # Llama with every bias switched on
        dict(
            model_type="llama",
            hidden_size=256,
            num_hidden_layers=2,
            num_attention_heads=8,
            num_key_value_heads=2,
            intermediate_size=512,
            vocab_size=1000,
            attention_bias=True,
            mlp_bias=True,
        ),
    ],
    ids=["gemma", "gemma2", "gemma3_text", "llama-biases"],
)
def test_other_families_on_meta_device(cfg):
    assert count_parameters(from_config(cfg)).total == _meta_count(cfg)
