"""Memory terms of a workload: each term says its formula and the assumption behind it.

Sources of the constants (see docs/memory.md and FACTS.md §6): bytes per parameter for
weights, gradients and optimizer states from EleutherAI "Transformer Math 101"; activations
from Korthikanti et al. (``34·s·b·h·L`` with Flash/SDPA attention, ``+5·a·s²·b·L`` with eager
attention, ``2·s·b·h·L`` with full recomputation); the KV cache as vLLM sizes its pages; the
vLLM budget as ``utilization × total − weights − peak activation − non-torch memory``.
"""

from __future__ import annotations

import math

import msgspec

from stackcheck.errors import InputError
from stackcheck.memory.architecture import Architecture, ParamCount, kv_elements_per_token, linear_modules
from stackcheck.memory.gpus import GIB
from stackcheck.models.memory import Estimate, Mode, Serving, Term, Workload

MODES: tuple[str, ...] = Mode.__args__  # type: ignore[attr-defined]

DTYPE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0}

# Weight quantization of the decoder's Linear layers: bits per weight including the
# per-block constants. Embeddings, lm_head, norms, biases and MoE routers stay in --dtype.
QUANT_BITS = {
    # bitsandbytes LLM.int8(): int8 weights + one fp32 absmax per output row (added below)
    "int8": 8.0,
    # GPTQ/AWQ 4-bit, group size 128: an fp16 scale and a packed 4-bit zero per 128 weights
    "int4": 4.0 + (16 + 4) / 128,
    # bitsandbytes NF4, blocksize 64 with double quantization (the QLoRA recipe): an 8-bit
    # absmax per 64 weights plus one fp32 second-level constant per 256 blocks
    "nf4": 4.0 + 8 / 64 + 32 / (64 * 256),
}
QUANT_NOTE = {
    "int8": "int8 weights + an fp32 scale per output row (bitsandbytes LLM.int8())",
    "int4": "4-bit weights + fp16 scale and 4-bit zero point per group of 128 (GPTQ/AWQ): 4.156 bits/weight",
    "nf4": "NF4 blocks of 64 with double-quantized absmax (QLoRA recipe): 4.127 bits/weight",
}

OPTIMIZERS = ("adamw", "adamw8bit", "sgd")
# optimizer bytes per trained parameter: (with a separate fp32 master copy, states only)
_OPT_STATE_BYTES = {"adamw": 8.0, "adamw8bit": 2.0, "sgd": 4.0}
_OPT_NOTE = {
    "adamw": "AdamW: fp32 momentum + variance (8 B)",
    "adamw8bit": "8-bit AdamW (bitsandbytes): 1 B momentum + 1 B variance",
    "sgd": "SGD with momentum: fp32 momentum (4 B)",
}

LORA_TARGET_ALIASES = {
    "q": "q_proj",
    "k": "k_proj",
    "v": "v_proj",
    "o": "o_proj",
    "gate": "gate_proj",
    "up": "up_proj",
    "down": "down_proj",
}


def _term(name: str, value: float, formula: str, assumption: str) -> Term:
    b = int(math.ceil(value))
    return Term(name=name, bytes=b, gib=round(b / GIB, 3), formula=formula, assumption=assumption)


def _validate(w: Workload) -> None:
    if w.dtype not in DTYPE_BYTES:
        raise InputError(f"--dtype: {w.dtype!r} is not one of {', '.join(DTYPE_BYTES)}")
    if w.kv_dtype is not None and w.kv_dtype not in DTYPE_BYTES:
        raise InputError(f"--kv-dtype: {w.kv_dtype!r} is not one of {', '.join(DTYPE_BYTES)}")
    if w.quant is not None and w.quant not in QUANT_BITS:
        raise InputError(f"--quant: {w.quant!r} is not one of {', '.join(QUANT_BITS)}")
    if w.mode == "train" and w.quant:
        raise InputError(
            "--quant: full training updates every weight and cannot train quantized weights; use --mode qlora"
        )
    if w.optimizer not in OPTIMIZERS:
        raise InputError(f"--optimizer: {w.optimizer!r} is not one of {', '.join(OPTIMIZERS)}")
    if not 0 <= w.zero <= 3:
        raise InputError(f"--zero: stage {w.zero} does not exist (0-3)")
    if w.gpus < 1 or w.batch < 1 or w.concurrency < 1 or w.lora_rank < 1:
        raise InputError("--gpus, --batch, --concurrency and --lora-rank must be at least 1")
    if w.seq_len is not None and w.seq_len < 1:
        raise InputError("--seq-len must be at least 1")
    if w.offload_optimizer and w.mode not in ("train", "lora", "qlora"):
        raise InputError("--offload-optimizer: only training has optimizer states (--mode train/lora/qlora)")
    if not 0 < w.utilization <= 1:
        raise InputError(f"--gpu-memory-utilization: {w.utilization} must be in (0, 1]")


def _lora_params(a: Architecture, targets: list[str], rank: int) -> int:
    wanted = {LORA_TARGET_ALIASES.get(t, t) for t in targets}
    every = "all-linear" in wanted
    known = {name for layer in range(a.layers) for name, *_ in linear_modules(a, layer)}
    unknown = wanted - known - {"all-linear"}
    if unknown:
        raise InputError(
            f"--lora-targets: {', '.join(sorted(unknown))} not in this model (its linear layers: "
            f"{', '.join(sorted(known))}, or all-linear)"
        )
    return sum(
        rank * (i + o) * copies
        for layer in range(a.layers)
        for name, i, o, copies in linear_modules(a, layer)
        if every or name in wanted
    )


def _weights(a: Architecture, p: ParamCount, w: Workload, quant: str | None) -> tuple[float, str, str]:
    d = DTYPE_BYTES[w.dtype]
    if not quant:
        return p.total * d, f"P × {d:g} B = {p.total:,} × {d:g}", f"every parameter in {w.dtype}"
    bits = QUANT_BITS[quant]
    rows = sum(o * copies for layer in range(a.layers) for _, _, o, copies in linear_modules(a, layer))
    extra = rows * 4 if quant == "int8" else 0
    rest = p.total - p.linear
    value = p.linear * bits / 8 + extra + rest * d
    formula = (
        f"linear {p.linear:,} × {bits:.3f}/8 B"
        + (f" + {rows:,} rows × 4 B" if extra else "")
        + f" + other {rest:,} × {d:g} B"
    )
    return (
        value,
        formula,
        f"{QUANT_NOTE[quant]}; embeddings, lm_head, norms, biases and routers stay in {w.dtype}",
    )


def estimate(a: Architecture, p: ParamCount, w: Workload) -> Estimate:
    """The per-GPU memory of workload ``w`` on the model ``a`` with counts ``p``; when it does
    not fit (and ``suggest``), the single changes that would."""
    _validate(w)
    mode = w.mode
    quant = w.quant or ("nf4" if mode == "qlora" else None)
    d = DTYPE_BYTES[w.dtype]
    n = w.gpus
    model_max = a.max_positions or 4096
    seq = w.seq_len or (model_max if mode == "serve" else min(model_max, 4096))
    sequences = w.batch * (w.concurrency if mode in ("infer", "serve") else 1)
    terms: list[Term] = []
    notes: list[str] = []
    if a.max_positions and seq > a.max_positions:
        notes.append(f"--seq-len {seq:,} exceeds the model's max_position_embeddings {a.max_positions:,}")
    if a.assumed_layout:
        notes.append(
            f"model_type {a.model_type!r} is not a known family: counted with the Llama layout "
            "(no biases, gated MLP)"
        )
    notes += _dtype_notes(w)

    weights, wf, wa = _weights(a, p, w, quant)
    training = mode in ("train", "lora", "qlora")
    shard_weights = n if (mode in ("infer", "serve") or w.zero == 3) else 1
    if shard_weights > 1:
        wf += f" ÷ {n} GPUs"
        wa += "; " + ("tensor parallel across the GPUs" if not training else "ZeRO-3 shards the weights")
    terms.append(_term("weights", weights / shard_weights, wf, wa))

    if mode in ("infer", "serve"):
        terms += _inference_terms(a, w, seq, sequences)
    else:
        terms += _training_activation_terms(a, w, seq) + _training_terms(a, p, w)
    if mode == "serve":
        terms.append(
            _term(
                "runtime_overhead",
                w.serve_non_torch_bytes,
                f"{w.serve_non_torch_bytes / GIB:g} GiB per GPU",
                "vLLM's non-torch memory: CUDA context, NCCL, CUDA graphs (0.13 GiB measured on "
                "H100; --non-torch-gib)",
            )
        )
    else:
        terms.append(
            _term(
                "runtime_overhead",
                w.overhead_bytes,
                f"{w.overhead_bytes / GIB:g} GiB per GPU",
                "CUDA context, cuBLAS/cuDNN workspaces and allocator slack (0.3-2 GiB in "
                "practice; --overhead-gib to change)",
            )
        )
    total = sum(t.bytes for t in terms)
    result = Estimate(
        model={
            "model_type": a.model_type,
            "family": a.family,
            "hidden_size": a.hidden,
            "layers": a.layers,
            "attention_heads": a.heads,
            "kv_heads": a.kv_heads,
            "head_dim": a.head_dim,
            "vocab": a.vocab,
            "tied_embeddings": a.tied,
            "experts": a.experts,
            "experts_per_token": a.experts_per_token,
            "max_position_embeddings": a.max_positions,
            "source": a.source,
        },
        parameters={
            "total": p.total,
            "active_per_token": p.active,
            "embedding": p.embedding,
            "lm_head": p.lm_head,
            "attention": p.attention,
            "mlp": p.mlp,
            "norms": p.norms,
            "non_embedding": p.non_embedding,
            "decoder_linear": p.linear,
        },
        workload=msgspec.structs.replace(w, seq_len=seq, quant=quant),
        terms=terms,
        total_bytes=total,
        total_gib=round(total / GIB, 3),
        notes=notes,
        cross_checks={
            "eleutherai_inference_1.2x_weights_gib": round(1.2 * weights / shard_weights / GIB, 3),
            f"weights_{w.dtype}_all_params_gib": round(p.total * d / GIB, 3),
        },
    )
    if mode in ("infer", "serve") and w.gpu_memory_bytes:
        result.serving = serving_budget(a, w, weights / shard_weights, seq)
    _judge(result, w)
    return result


# Native support per compute capability (CUDA C++ Programming Guide; bf16 tensor cores from
# Ampere, fp8 from Ada/Hopper): below it a dtype is emulated, upcast or refused.
_NATIVE_FROM = {
    "bf16": ("8.0", "Ampere or newer", "kernels emulate it slowly or refuse it; --dtype fp16 runs natively"),
    "fp8": ("8.9", "Ada/Hopper or newer", "fp8 runs weight-only (upcast per matmul) or not at all"),
}


def _dtype_notes(w: Workload) -> list[str]:
    """What the target GPU cannot run natively among the workload's dtypes."""
    from packaging.version import InvalidVersion, Version

    try:
        cc = Version(w.gpu_compute_capability) if w.gpu_compute_capability else None
    except InvalidVersion:
        cc = None
    notes = []
    for dtype in dict.fromkeys(d for d in (w.dtype, w.kv_dtype) if d in _NATIVE_FROM):
        floor, generation, consequence = _NATIVE_FROM[dtype]
        if cc is not None and cc < Version(floor):
            gpu = f"{w.gpu_name} (compute capability {w.gpu_compute_capability})"
            notes.append(f"{gpu} has no native {dtype} (it needs {floor}, {generation}): {consequence}")
    return notes


def _inference_terms(a: Architecture, w: Workload, s: int, sequences: int) -> list[Term]:
    """KV cache, activations and logits of generation (infer) or of a vLLM-style engine (serve)."""
    d, kv_d, n = DTYPE_BYTES[w.dtype], DTYPE_BYTES[w.kv_dtype or w.dtype], w.gpus
    per_token = kv_elements_per_token(a) * kv_d
    # tensor parallelism splits KV heads (replicated when fewer than GPUs); the MLA latent is
    # replicated on every rank
    kv_share = 1.0 if a.is_mla else math.ceil(a.kv_heads / n) / a.kv_heads
    terms = [
        _term(
            "kv_cache",
            per_token * kv_share * s * sequences,
            (
                f"L·(kv_lora_rank + rope_dim) × {kv_d:g} B"
                if a.is_mla
                else f"2·L·kv_heads·head_dim × {kv_d:g} B"
            )
            + f" = {per_token:,.0f} B/token × {s:,} tokens × {sequences} sequence"
            + ("s" if sequences != 1 else "")
            + (f" × {kv_share:g} per GPU" if kv_share != 1 else ""),
            f"cache in {w.kv_dtype or w.dtype}; every sequence at the full length"
            + ("; MLA caches the compressed latent (as vLLM does)" if a.is_mla else ""),
        )
    ]
    if w.mode == "serve":
        terms.append(
            _term(
                "activations",
                w.serve_activation_bytes,
                f"{w.serve_activation_bytes / GIB:g} GiB per GPU",
                "vLLM's profiled peak activation, logits included (4.8-7.4 GiB measured on H100 "
                "at max-model-len 16k; --serve-activation-gib)",
            )
        )
        return terms
    i_act = (a.experts_per_token * a.moe_intermediate + a.shared_intermediate) if a.is_moe else a.intermediate
    terms.append(
        _term(
            "activations",
            s * w.batch * (2 * a.hidden + 3 * i_act) * d,
            f"s·b·(2h + 3·I) × {d:g} B = {s:,}·{w.batch}·(2·{a.hidden} + 3·{i_act}) × {d:g}",
            "prefill of one batch, one layer live at a time (inference frees as it goes), "
            "Flash/SDPA attention (no s² matrix); I = active MLP width",
        )
    )
    terms.append(
        _term(
            "logits",
            sequences * a.vocab * 4,
            f"sequences·V × 4 B = {sequences}·{a.vocab:,} × 4",
            "fp32 logits of the last position only (HF generate keeps 1 position, vLLM samples the last)",
        )
    )
    return terms


def _training_activation_terms(a: Architecture, w: Workload, s: int) -> list[Term]:
    """Activations kept for the backward pass (Korthikanti et al.) and the fp32 logits."""
    b, h, L = w.batch, a.hidden, a.layers
    if w.gradient_checkpointing:
        act, af, aa = (
            2 * s * b * h * L,
            f"2·s·b·h·L = 2·{s}·{b}·{h}·{L}",
            "full recomputation: only each layer's input is kept (Korthikanti et al.)",
        )
    else:
        act, af, aa = (
            34 * s * b * h * L,
            f"34·s·b·h·L = 34·{s}·{b}·{h}·{L}",
            "no recomputation, 16-bit activations, Flash/SDPA attention (Korthikanti et al.; "
            "constants assume a 4h MLP and MHA, approximate for SwiGLU/GQA)",
        )
        if w.attention == "eager":
            act += 5 * a.heads * s * s * b * L
            af += f" + 5·a·s²·b·L = 5·{a.heads}·{s}²·{b}·{L}"
            aa += "; eager attention materialises the s×s score matrix"
    return [
        _term("activations", act, af, aa + "; b is the per-GPU micro-batch"),
        _term(
            "logits",
            s * b * a.vocab * 4,
            f"s·b·V × 4 B = {s}·{b}·{a.vocab:,} × 4",
            "fp32 logits of every position for the loss (the upcast copy is often larger than "
            "the activations for 150k vocabularies)",
        ),
    ]


def _training_terms(a: Architecture, p: ParamCount, w: Workload) -> list[Term]:
    """Adapters (lora/qlora), gradients and optimizer states, sharded by the ZeRO stage."""
    n, z, d = w.gpus, w.zero, DTYPE_BYTES[w.dtype]
    terms: list[Term] = []
    mixed = w.dtype != "fp32"
    if w.mode == "train":
        trained, what = p.total, "every parameter"
        grad_b = d
        master = 4.0 if mixed else 0.0
    else:
        trained = _lora_params(a, w.lora_targets, w.lora_rank)
        what = f"LoRA adapters r={w.lora_rank} on {','.join(w.lora_targets)} ({trained:,} params)"
        grad_b, master = 4.0, 0.0  # PEFT keeps adapters in fp32 (autocast_adapter_dtype)
        terms.append(
            _term(
                "adapter_weights",
                trained * 4.0 / (n if z == 3 else 1),
                f"{trained:,} × 4 B",
                "adapters r·(in+out) per targeted Linear, kept in fp32"
                + ("; ZeRO-3 sharded" if z == 3 else ""),
            )
        )
    grad_shard = n if z >= 2 else 1
    terms.append(
        _term(
            "gradients",
            trained * grad_b / grad_shard,
            f"{trained:,} × {grad_b:g} B" + (f" ÷ {n} (ZeRO-{z})" if grad_shard > 1 else ""),
            f"gradients of {what} in {'fp32' if grad_b == 4 else w.dtype}",
        )
    )
    state = _OPT_STATE_BYTES[w.optimizer] + master
    opt_shard = n if z >= 1 else 1
    what = _OPT_NOTE[w.optimizer] + (" + fp32 master weights (4 B) for mixed precision" if master else "")
    if w.offload_optimizer:
        cpu = trained * state / opt_shard / GIB
        terms.append(
            _term(
                "optimizer_states",
                0,
                f"0 B on the GPU ({cpu:.2f} GiB in CPU RAM)",
                f"{what}, offloaded to CPU RAM and updated there (ZeRO-Offload)",
            )
        )
    else:
        formula = f"{trained:,} × {state:g} B" + (f" ÷ {n} (ZeRO-{z})" if opt_shard > 1 else "")
        terms.append(_term("optimizer_states", trained * state / opt_shard, formula, what))
    return terms


def serving_budget(a: Architecture, w: Workload, weights_per_gpu: float, max_model_len: int) -> Serving:
    """How many tokens of KV cache a vLLM-style engine gets, and what they hold."""
    n = w.gpus
    total = w.gpu_memory_bytes or 0
    budget = total * w.utilization
    kv_budget = budget - weights_per_gpu - w.serve_activation_bytes - w.serve_non_torch_bytes
    kv_d = DTYPE_BYTES[w.kv_dtype or w.dtype]
    if a.is_mla:
        per_token = kv_elements_per_token(a) * kv_d
    else:
        per_token = 2 * a.layers * math.ceil(a.kv_heads / n) * a.head_dim * kv_d
    block = 16
    max_tokens = max(0, int(kv_budget // (per_token * block)) * block)
    blocks_per_seq = math.ceil(max_model_len / block)
    max_conc = max_tokens // (blocks_per_seq * block)
    per_req = max_tokens // w.concurrency // block * block
    cap = a.max_positions or per_req
    return Serving(
        budget_bytes=int(budget),
        kv_budget_bytes=int(max(kv_budget, 0)),
        kv_bytes_per_token=int(per_token),
        max_tokens=max_tokens,
        max_model_len=max_model_len,
        max_concurrency_at_max_model_len=max_conc,
        max_context_at_concurrency=min(per_req, cap),
        concurrency=w.concurrency,
        formula=(
            f"KV budget = {w.utilization:g} × {total / GIB:.2f} GiB − weights {weights_per_gpu / GIB:.2f} GiB"
            f" − peak activation {w.serve_activation_bytes / GIB:.2f} GiB"
            f" − non-torch {w.serve_non_torch_bytes / GIB:.2f} GiB; "
            f"tokens = budget ÷ {per_token:,.0f} B/token, in blocks of {block}"
        ),
    )


def _judge(e: Estimate, w: Workload) -> None:
    if not w.gpu_memory_bytes:
        e.verdict = "no-target"
        return
    e.target = {
        "gpu": w.gpu_name,
        "memory_bytes": w.gpu_memory_bytes,
        "memory_gib": round(w.gpu_memory_bytes / GIB, 2),
        "gpus": w.gpus,
    }
    if w.mode == "serve" and e.serving is not None:
        e.target["utilization"] = w.utilization
        e.target["usable_gib"] = round(e.serving.budget_bytes / GIB, 2)
        # whole 16-token blocks for every sequence, as the engine allocates them
        e.verdict = "fits" if e.serving.max_concurrency_at_max_model_len >= w.concurrency else "does-not-fit"
        e.headroom_gib = round((e.serving.budget_bytes - e.total_bytes) / GIB, 3)
        return
    e.headroom_gib = round((w.gpu_memory_bytes - e.total_bytes) / GIB, 3)
    e.verdict = "fits" if e.total_bytes <= w.gpu_memory_bytes else "does-not-fit"
