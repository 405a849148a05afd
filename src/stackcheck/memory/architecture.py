"""Exact parameter counts from a Hugging Face ``config.json``, per architecture family.

The count is what ``AutoModelForCausalLM.from_config(config)`` would allocate (tied weights
once), computed from the config alone, so no torch is needed. Each family states the layout
it assumes: which projections carry biases (Qwen2 has q/k/v biases, Llama none unless
``attention_bias``), whether q/k are normalised per head (Qwen3), how mixture-of-experts
layers are laid out (routed experts, shared experts with their gate, dense layers between
sparse ones), and multi-head latent attention (DeepSeek-V2/V3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from stackcheck.errors import InputError

# model_type → the family that knows its layout. Unknown decoder-only types are counted with
# the Llama layout and the result says so.
FAMILIES: dict[str, str] = {
    "llama": "llama",
    "mistral": "llama",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "mixtral": "mixtral",
    "qwen2_moe": "qwen2_moe",
    "qwen3_moe": "qwen3_moe",
    "deepseek_v2": "deepseek",
    "deepseek_v3": "deepseek",
    "gemma": "llama",
    "gemma2": "gemma2",
    "gemma3_text": "gemma3",
    "explicit": "explicit",  # sizes given on the command line: Llama layout, optional MoE
}

# transformers' per-class default of tie_word_embeddings where the config leaves it out
_TIED_DEFAULT = {
    "llama": False,
    "mistral": False,
    "qwen2": False,
    "qwen3": False,
    "mixtral": False,
    "qwen2_moe": False,
    "qwen3_moe": False,
    "deepseek_v2": False,
    "deepseek_v3": False,
    "explicit": False,
}  # gemma*: True, like PretrainedConfig's default


@dataclass(frozen=True)
class Architecture:
    """The dimensions that decide parameter count and KV-cache size."""

    family: str
    model_type: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int  # dense MLP width
    vocab: int
    tied: bool
    max_positions: int | None = None
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: int = 2  # RMSNorms of width hidden per layer (Gemma 2/3: 4)
    # mixture of experts (experts == 0: dense)
    experts: int = 0
    experts_per_token: int = 0
    moe_intermediate: int = 0
    shared_intermediate: int = 0  # total width of the always-on shared expert(s)
    shared_gate: bool = False  # Qwen2-MoE's sigmoid gate on the shared expert
    sparse_layers: tuple[int, ...] = ()  # indices of MoE layers
    # multi-head latent attention (DeepSeek): 0 when not used
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0
    assumed_layout: bool = False  # model_type unknown: counted as Llama
    source: str = ""

    @property
    def is_moe(self) -> bool:
        return self.experts > 0 and bool(self.sparse_layers)

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @cached_property
    def sparse_set(self) -> frozenset[int]:
        """``sparse_layers`` for membership tests (a tuple scan per layer was quadratic)."""
        return frozenset(self.sparse_layers)


@dataclass
class ParamCount:
    """Parameters by where they live; ``total`` is what the model allocates."""

    embedding: int
    lm_head: int
    attention: int  # all layers
    mlp: int  # dense MLPs + experts + shared experts + routers, all layers
    norms: int  # all RMSNorm weights incl. the final one
    total: int
    active: int  # per token: experts_per_token of the routed experts
    linear: int  # weights of decoder Linear layers (what weight quantization converts)
    biases: int
    per_layer: list[int] = field(default_factory=list)

    @property
    def non_embedding(self) -> int:
        return self.total - self.embedding - self.lm_head


# ---------------------------------------------------------------- config → Architecture

# Upper bounds of config sizes, far above any published model (largest known, 2025: hidden
# 25,600, 126 layers, 128 heads, vocabulary 262,144, 384 experts, 10M positions), so
# arithmetic and the per-layer loops stay bounded: a config past them is an error, not a model.
MAX_SIZE = 1 << 24  # any integer field not named below
_MAX = {
    "num_hidden_layers": 1 << 14,
    "n_layer": 1 << 14,
    "num_layers": 1 << 14,
    "hidden_size": 1 << 20,
    "n_embd": 1 << 20,
    "d_model": 1 << 20,
    "num_attention_heads": 1 << 16,
    "n_head": 1 << 16,
    "num_key_value_heads": 1 << 16,
    "head_dim": 1 << 16,
    "max_position_embeddings": 1 << 32,
    "n_positions": 1 << 32,
    "num_local_experts": 1 << 16,
    "num_experts": 1 << 16,
    "n_routed_experts": 1 << 16,
    "n_shared_experts": 1 << 16,
}


def _shown_int(value: int) -> str:
    return f"{value:,}" if value < 10**18 else "a number of more than 18 digits"


def _field(cfg: dict, source: str, *names: str, default: Any = ..., kind: type = int) -> Any:
    """The first of ``names`` present in ``cfg``, validated; InputError names the field."""
    for name in names:
        if name in cfg and cfg[name] is not None:
            value = cfg[name]
            if kind is int:
                if isinstance(value, bool) or not isinstance(value, int):
                    raise InputError(f"{source}: field {name}: expected an integer, got {value!r}")
                if value < 0:
                    raise InputError(f"{source}: field {name}: expected a non-negative integer, got {value}")
                limit = _MAX.get(name, MAX_SIZE)
                if value > limit:
                    said = f"expected at most {limit:,}, got {_shown_int(value)}"
                    raise InputError(f"{source}: field {name}: {said}")
            elif kind is bool and not isinstance(value, bool):
                raise InputError(f"{source}: field {name}: expected true or false, got {value!r}")
            return value
    if default is ...:
        raise InputError(f"{source}: missing field {names[0]} (needed to count parameters)")
    return default


def _positive(cfg: dict, source: str, *names: str, default: Any = ...) -> int:
    value = _field(cfg, source, *names, default=default)
    if value is not None and value <= 0:
        raise InputError(f"{source}: field {names[0]}: expected a positive integer, got {value}")
    return value


def from_config(cfg: Any, source: str = "config.json") -> Architecture:
    """Read the architecture of a decoder-only model from its config.json contents.

    Multimodal wrappers that keep the language model under ``text_config`` are read there.
    """
    if not isinstance(cfg, dict):
        raise InputError(f"{source}: expected a JSON object (a Hugging Face config.json)")
    if isinstance(cfg.get("text_config"), dict) and "hidden_size" not in cfg:
        cfg = {
            **cfg["text_config"],
            "tie_word_embeddings": cfg.get(
                "tie_word_embeddings", cfg["text_config"].get("tie_word_embeddings")
            ),
        }
    model_type = cfg.get("model_type") or "llama"
    if not isinstance(model_type, str):
        raise InputError(f"{source}: field model_type: expected a string, got {model_type!r}")
    family = FAMILIES.get(model_type, "llama")

    hidden = _positive(cfg, source, "hidden_size", "n_embd", "d_model")
    layers = _positive(cfg, source, "num_hidden_layers", "n_layer", "num_layers")
    heads = _positive(cfg, source, "num_attention_heads", "n_head")
    kv_heads = _positive(cfg, source, "num_key_value_heads", default=heads)
    if heads % kv_heads:
        raise InputError(
            f"{source}: field num_key_value_heads: {kv_heads} does not divide num_attention_heads {heads}"
        )
    head_dim = _positive(cfg, source, "head_dim", default=None)
    if head_dim is None:
        if hidden % heads:
            raise InputError(
                f"{source}: field head_dim: missing, and hidden_size {hidden} is not a multiple "
                f"of num_attention_heads {heads}"
            )
        head_dim = hidden // heads
    vocab = _positive(cfg, source, "vocab_size")
    intermediate = _positive(cfg, source, "intermediate_size", "n_inner", default=4 * hidden)
    tied = _field(cfg, source, "tie_word_embeddings", default=_TIED_DEFAULT.get(model_type, True), kind=bool)
    max_positions = _field(cfg, source, "max_position_embeddings", "n_positions", default=None)
    attention_bias = _field(cfg, source, "attention_bias", default=False, kind=bool)
    mlp_bias = _field(cfg, source, "mlp_bias", default=False, kind=bool)

    arch: dict[str, Any] = dict(
        family=family,
        model_type=model_type,
        hidden=hidden,
        layers=layers,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate=intermediate,
        vocab=vocab,
        tied=tied,
        max_positions=max_positions,
        assumed_layout=model_type not in FAMILIES,
        source=source,
    )
    if family == "llama":
        arch.update(qkv_bias=attention_bias, o_bias=attention_bias, mlp_bias=mlp_bias)
    elif family == "qwen2":
        arch.update(qkv_bias=True)
    elif family in ("qwen3", "qwen3_moe"):
        arch.update(qkv_bias=attention_bias, o_bias=attention_bias, qk_norm=True)
    elif family in ("gemma2", "gemma3"):  # pre/post norms around attention and MLP
        arch.update(
            qkv_bias=attention_bias, o_bias=attention_bias, qk_norm=family == "gemma3", norms_per_layer=4
        )
    elif family == "qwen2_moe":
        arch.update(qkv_bias=True)
    elif family == "explicit":
        arch.update(qkv_bias=_field(cfg, source, "qkv_bias", default=False, kind=bool))
    if family == "mixtral":
        experts = _positive(cfg, source, "num_local_experts")
        arch.update(
            experts=experts,
            experts_per_token=_positive(cfg, source, "num_experts_per_tok", default=2),
            moe_intermediate=intermediate,
            sparse_layers=tuple(range(layers)),
        )
    elif family in ("qwen2_moe", "qwen3_moe", "explicit"):
        experts = _field(cfg, source, "num_experts", default=0)
        step = _positive(cfg, source, "decoder_sparse_step", default=1)
        dense_only = cfg.get("mlp_only_layers") or []
        if not isinstance(dense_only, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in dense_only
        ):
            raise InputError(f"{source}: field mlp_only_layers: expected a list of layer indices")
        dense_only = set(dense_only)
        sparse = tuple(
            i for i in range(layers) if experts > 0 and i not in dense_only and (i + 1) % step == 0
        )
        shared = (
            _field(cfg, source, "shared_expert_intermediate_size", default=0) if family != "qwen3_moe" else 0
        )
        arch.update(
            experts=experts,
            experts_per_token=_positive(cfg, source, "num_experts_per_tok", default=1) if experts else 0,
            moe_intermediate=_positive(cfg, source, "moe_intermediate_size") if experts else 0,
            shared_intermediate=shared,
            shared_gate=shared > 0,
            sparse_layers=sparse,
        )
    elif family == "deepseek":
        arch.update(_deepseek(cfg, source, layers, hidden, attention_bias))
    return Architecture(**arch)


def _deepseek(cfg: dict, source: str, layers: int, hidden: int, attention_bias: bool) -> dict:
    experts = _field(cfg, source, "n_routed_experts", default=0)
    first_dense = _field(cfg, source, "first_k_dense_replace", default=0)
    freq = _positive(cfg, source, "moe_layer_freq", default=1)
    moe_inter = _positive(cfg, source, "moe_intermediate_size") if experts else 0
    n_shared = _field(cfg, source, "n_shared_experts", default=0)
    qk_nope = _positive(cfg, source, "qk_nope_head_dim")
    qk_rope = _positive(cfg, source, "qk_rope_head_dim")
    return dict(
        experts=experts,
        experts_per_token=_positive(cfg, source, "num_experts_per_tok", default=1) if experts else 0,
        moe_intermediate=moe_inter,
        shared_intermediate=moe_inter * n_shared,
        sparse_layers=tuple(i for i in range(layers) if experts and i >= first_dense and i % freq == 0),
        q_lora_rank=_field(cfg, source, "q_lora_rank", default=0),
        kv_lora_rank=_positive(cfg, source, "kv_lora_rank"),
        qk_nope_dim=qk_nope,
        qk_rope_dim=qk_rope,
        v_head_dim=_positive(cfg, source, "v_head_dim"),
        head_dim=qk_rope,  # HF DeepseekV3Config sets head_dim = qk_rope_head_dim
        qkv_bias=attention_bias,
        o_bias=attention_bias,
    )


# ---------------------------------------------------------------- Architecture → counts


def _attention(a: Architecture) -> tuple[int, int, int, int]:
    """(linear weights, biases, norm weights, total) of one attention block."""
    h = a.hidden
    if a.is_mla:
        qk_dim = a.qk_nope_dim + a.qk_rope_dim
        linear = bias = norm = 0
        if a.q_lora_rank:
            linear += h * a.q_lora_rank + a.q_lora_rank * a.heads * qk_dim
            bias += a.q_lora_rank if a.qkv_bias else 0
            norm += a.q_lora_rank
        else:
            linear += h * a.heads * qk_dim
        linear += h * (a.kv_lora_rank + a.qk_rope_dim)
        bias += (a.kv_lora_rank + a.qk_rope_dim) if a.qkv_bias else 0
        norm += a.kv_lora_rank
        linear += a.kv_lora_rank * a.heads * (a.qk_nope_dim + a.v_head_dim)
        linear += a.heads * a.v_head_dim * h
        bias += h if a.o_bias else 0
        return linear, bias, norm, linear + bias + norm
    q, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
    linear = h * q + 2 * h * kv + q * h
    bias = (q + 2 * kv if a.qkv_bias else 0) + (h if a.o_bias else 0)
    norm = 2 * a.head_dim if a.qk_norm else 0
    return linear, bias, norm, linear + bias + norm


def _gated_mlp(h: int, width: int, bias: bool) -> tuple[int, int]:
    """(weights, biases) of a gate/up/down MLP (SwiGLU)."""
    return 3 * h * width, (2 * width + h) if bias else 0


def _mlp(a: Architecture, sparse: bool) -> tuple[int, int, int, int, int]:
    """(linear weights, biases, router weights, total, active per token) of one MLP block."""
    h = a.hidden
    if not sparse:
        w, b = _gated_mlp(h, a.intermediate, a.mlp_bias)
        return w, b, 0, w + b, w + b
    expert, _ = _gated_mlp(h, a.moe_intermediate, False)
    shared, _ = _gated_mlp(h, a.shared_intermediate, False) if a.shared_intermediate else (0, 0)
    # DeepSeek-V3's e_score_correction_bias is a buffer in transformers, not a parameter
    router = h * a.experts + (h if a.shared_gate else 0)
    linear = a.experts * expert + shared
    total = linear + router
    active = a.experts_per_token * expert + shared + router
    return linear, 0, router, total, active


def count_parameters(a: Architecture) -> ParamCount:
    """Exact parameter count of the causal-LM model described by ``a``."""
    att_linear, att_bias, att_norm, att_total = _attention(a)
    embedding = a.vocab * a.hidden
    lm_head = 0 if a.tied else a.vocab * a.hidden
    sparse = set(a.sparse_layers) if a.experts else set()
    per_layer: list[int] = []
    mlp_total = linear = biases = active = 0
    layer_norms = a.norms_per_layer * a.hidden  # input + post-attention RMSNorm (+ Gemma's two more)
    for i in range(a.layers):
        m_linear, m_bias, _router, m_total, m_active = _mlp(a, i in sparse)
        mlp_total += m_total
        linear += att_linear + m_linear
        biases += att_bias + m_bias
        active += att_total + m_active + layer_norms
        per_layer.append(att_total + m_total + layer_norms)
    norms = a.layers * (layer_norms + att_norm) + a.hidden  # + final norm
    total = embedding + lm_head + sum(per_layer) + a.hidden
    return ParamCount(
        embedding=embedding,
        lm_head=lm_head,
        attention=a.layers * (att_total - att_norm),
        mlp=mlp_total,
        norms=norms,
        total=total,
        active=active + embedding + lm_head + a.hidden,
        linear=linear,
        biases=biases,
        per_layer=per_layer,
    )


def kv_elements_per_token(a: Architecture) -> int:
    """Cached elements per token over all layers: K and V per KV head, or for MLA the
    compressed latent plus the shared rotary key (what vLLM caches)."""
    if a.is_mla:
        return a.layers * (a.kv_lora_rank + a.qk_rope_dim)
    return 2 * a.layers * a.kv_heads * a.head_dim


def linear_modules(a: Architecture, layer: int) -> list[tuple[str, int, int, int]]:
    """The Linear layers of one decoder layer as (name, in, out, copies) — what LoRA can
    target. Routed-expert projections appear once with ``copies`` = number of experts."""
    h = a.hidden
    if a.is_mla:
        qk_dim = a.qk_nope_dim + a.qk_rope_dim
        mods = (
            [("q_a_proj", h, a.q_lora_rank, 1), ("q_b_proj", a.q_lora_rank, a.heads * qk_dim, 1)]
            if a.q_lora_rank
            else [("q_proj", h, a.heads * qk_dim, 1)]
        )
        mods += [
            ("kv_a_proj_with_mqa", h, a.kv_lora_rank + a.qk_rope_dim, 1),
            ("kv_b_proj", a.kv_lora_rank, a.heads * (a.qk_nope_dim + a.v_head_dim), 1),
            ("o_proj", a.heads * a.v_head_dim, h, 1),
        ]
    else:
        q, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
        mods = [("q_proj", h, q, 1), ("k_proj", h, kv, 1), ("v_proj", h, kv, 1), ("o_proj", q, h, 1)]
    if a.experts and layer in a.sparse_set:
        width, copies = a.moe_intermediate, a.experts
        if a.shared_intermediate:
            mods += [(n, i, o, 1) for n, i, o in _mlp_shapes(h, a.shared_intermediate)]
    else:
        width, copies = a.intermediate, 1
    mods += [(n, i, o, copies) for n, i, o in _mlp_shapes(h, width)]
    return mods


def _mlp_shapes(h: int, width: int) -> list[tuple[str, int, int]]:
    return [("gate_proj", h, width), ("up_proj", h, width), ("down_proj", width, h)]
