"""``stackcheck memory``: parameter count and memory breakdown of a model workload."""

from __future__ import annotations

import click

from stackcheck.cli.common import emit_json, finish, json_option

_EXPLICIT = (
    # option, config.json key
    ("hidden_size", "hidden_size"),
    ("layers", "num_hidden_layers"),
    ("heads", "num_attention_heads"),
    ("kv_heads", "num_key_value_heads"),
    ("head_dim", "head_dim"),
    ("intermediate_size", "intermediate_size"),
    ("vocab_size", "vocab_size"),
    ("experts", "num_experts"),
    ("experts_per_token", "num_experts_per_tok"),
    ("moe_intermediate_size", "moe_intermediate_size"),
    ("shared_expert_intermediate_size", "shared_expert_intermediate_size"),
)


_MAX_GIB = float(1 << 20)  # a bound for the GiB options: inf and 1e400 are not sizes


def _int(name: str, help: str):
    return click.option(f"--{name.replace('_', '-')}", name, type=click.IntRange(min=1), help=help)


@click.command(context_settings={"max_content_width": 100})
@click.option(
    "--config",
    "config_file",
    metavar="FILE",
    help="A Hugging Face config.json ('-' for stdin; nothing is downloaded).",
)
@_int("hidden_size", "Explicit size: hidden size (instead of --config).")
@_int("layers", "Explicit size: decoder layers.")
@_int("heads", "Explicit size: attention heads.")
@_int("kv_heads", "Explicit size: key/value heads (GQA/MQA; default = heads).")
@_int("head_dim", "Explicit size: head dimension (default hidden/heads).")
@_int("intermediate_size", "Explicit size: MLP width (default 4×hidden).")
@_int("vocab_size", "Explicit size: vocabulary.")
@_int("experts", "Explicit size: routed experts per MoE layer.")
@_int("experts_per_token", "Explicit size: experts routed per token.")
@_int("moe_intermediate_size", "Explicit size: width of one expert.")
@_int("shared_expert_intermediate_size", "Explicit size: width of the shared expert.")
@click.option(
    "--tied/--untied", "tied", default=None, help="Explicit size: input and output embeddings shared."
)
@click.option("--qkv-bias", is_flag=True, help="Explicit size: q/k/v projections carry biases (Qwen2-style).")
@click.option(
    "--mode",
    type=click.Choice(["infer", "serve", "train", "lora", "qlora"]),
    default="infer",
    show_default=True,
    help=(
        "infer: HF-style generation; serve: vLLM-style KV budget; train: full fine-tuning; "
        "lora/qlora: adapters on a frozen (NF4) base."
    ),
)
@click.option(
    "--dtype",
    type=click.Choice(["fp32", "bf16", "fp16", "fp8"]),
    default="bf16",
    show_default=True,
    help="Weights and activations dtype.",
)
@click.option(
    "--quant",
    type=click.Choice(["int8", "int4", "nf4"]),
    help="Weight quantization of the decoder Linear layers (qlora: nf4 by default).",
)
@click.option(
    "--kv-dtype",
    type=click.Choice(["fp32", "bf16", "fp16", "fp8"]),
    help="KV cache dtype (default: --dtype).",
)
@click.option(
    "--seq-len",
    type=click.IntRange(1, 1 << 32),
    help="Tokens per sequence (default 4096, capped at the model's maximum; serve: the model's maximum).",
)
@click.option(
    "--batch",
    type=click.IntRange(1, 1 << 20),
    default=1,
    show_default=True,
    help="Sequences per forward pass (per GPU when training).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1 << 20),
    default=1,
    show_default=True,
    help="Concurrent requests (infer/serve).",
)
@click.option(
    "--gradient-checkpointing", is_flag=True, help="Full activation recomputation (train/lora/qlora)."
)
@click.option(
    "--attention",
    type=click.Choice(["sdpa", "eager"]),
    default="sdpa",
    show_default=True,
    help="eager materialises the s×s attention matrix.",
)
@click.option(
    "--optimizer", type=click.Choice(["adamw", "adamw8bit", "sgd"]), default="adamw", show_default=True
)
@click.option(
    "--gpus",
    type=click.IntRange(1, 1 << 16),
    default=1,
    show_default=True,
    help="GPUs (tensor parallel for infer/serve, data parallel for training).",
)
@click.option(
    "--zero",
    type=click.IntRange(0, 3),
    default=0,
    show_default=True,
    help="DeepSpeed ZeRO stage for training.",
)
@click.option(
    "--offload-optimizer",
    is_flag=True,
    help="Optimizer states and fp32 master weights in CPU RAM (ZeRO-Offload; training).",
)
@click.option("--lora-rank", type=click.IntRange(1, 1 << 16), default=16, show_default=True)
@click.option(
    "--lora-targets",
    default="all-linear",
    show_default=True,
    help="Comma-separated Linear names (q,k,v,o,gate,up,down or q_proj,...), or all-linear.",
)
@click.option(
    "--gpu",
    "gpu_name",
    metavar="NAME",
    help="Target GPU by name (H100, A100-80GB, T4, RTX-4090 …, "
    "or as nvidia-smi prints it: 'NVIDIA H100 80GB HBM3').",
)
@click.option(
    "--gpu-memory", metavar="SIZE", help="Target memory per GPU, e.g. 80GiB, 24GB (bare number: GiB)."
)
@click.option(
    "--gpu-memory-utilization",
    "utilization",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.9,
    show_default=True,
    help="vLLM-style fraction of GPU memory the engine may use (serve).",
)
@click.option(
    "--overhead-gib",
    type=click.FloatRange(0, _MAX_GIB),
    default=1.0,
    show_default=True,
    help="CUDA context + workspaces per GPU.",
)
@click.option(
    "--serve-activation-gib",
    type=click.FloatRange(0, _MAX_GIB),
    default=5.0,
    show_default=True,
    help="vLLM peak activation during profiling (serve).",
)
@click.option(
    "--non-torch-gib",
    type=click.FloatRange(0, _MAX_GIB),
    default=0.15,
    show_default=True,
    help="vLLM non-torch memory: NCCL, CUDA graphs … (serve).",
)
@json_option
def memory(
    config_file,
    tied,
    qkv_bias,
    mode,
    dtype,
    quant,
    kv_dtype,
    seq_len,
    batch,
    concurrency,
    gradient_checkpointing,
    attention,
    optimizer,
    gpus,
    zero,
    offload_optimizer,
    lora_rank,
    lora_targets,
    gpu_name,
    gpu_memory,
    utilization,
    overhead_gib,
    serve_activation_gib,
    non_torch_gib,
    as_json,
    **sizes,
):
    """Estimate model memory: exact parameter count, then weights, KV cache, activations,
    gradients, optimizer states, logits and runtime overhead, each with its formula.

    \b
    Examples:
      stackcheck memory --config config.json --gpu H100
      stackcheck memory --config config.json --mode serve --gpu A100-80GB --seq-len 32768
      stackcheck memory --config config.json --mode qlora --gpu T4 --seq-len 2048
      stackcheck memory --hidden-size 4096 --layers 32 --heads 32 --kv-heads 8 \\
          --intermediate-size 14336 --vocab-size 128256 --mode train --gpus 8 --zero 3

    Exit codes: 0 fits (or no target given), 1 does not fit the target, 2 unreadable or
    invalid config / options.
    """
    from stackcheck.errors import InputError
    from stackcheck.memory import architecture
    from stackcheck.memory.estimate import Workload
    from stackcheck.memory.gpus import GIB, find_gpu, parse_size
    from stackcheck.memory.suggest import advise

    explicit = {key: sizes[opt] for opt, key in _EXPLICIT if sizes.get(opt) is not None}
    if tied is not None:
        explicit["tie_word_embeddings"] = tied
    if config_file and (explicit or qkv_bias):
        raise InputError("--config and explicit sizes (--hidden-size …) cannot be combined")
    if config_file:
        from stackcheck.fileio import load_json_any, source_name

        cfg = load_json_any(config_file, "Hugging Face config.json")
        source = source_name(config_file)
    elif explicit:
        cfg = {"model_type": "explicit", "tie_word_embeddings": False, "qkv_bias": qkv_bias, **explicit}
        source = "explicit sizes"
    else:
        raise InputError(
            "give --config FILE or explicit sizes "
            "(--hidden-size, --layers, --heads, --vocab-size …); see --help"
        )
    try:
        arch = architecture.from_config(cfg, source)
    except InputError as exc:
        if config_file:
            raise
        message = str(exc)  # name the command-line option, not the config.json key
        for opt, key in _EXPLICIT:
            message = message.replace(f"field {key}", f"--{opt.replace('_', '-')}")
        raise InputError(message) from None
    counts = architecture.count_parameters(arch)

    memory_bytes = compute_capability = None
    if gpu_name and gpu_memory:
        raise InputError("--gpu and --gpu-memory cannot be combined: give one target")
    if gpu_name:
        gpu = find_gpu(gpu_name)
        memory_bytes, gpu_name, compute_capability = gpu.memory_bytes, gpu.name, gpu.compute_capability
    elif gpu_memory:
        memory_bytes = parse_size(gpu_memory)
    work = Workload(
        mode=mode,
        dtype=dtype,
        quant=quant,
        kv_dtype=kv_dtype,
        seq_len=seq_len,
        batch=batch,
        concurrency=concurrency,
        gradient_checkpointing=gradient_checkpointing,
        attention=attention,
        optimizer=optimizer,
        gpus=gpus,
        zero=zero,
        offload_optimizer=offload_optimizer,
        lora_rank=lora_rank,
        lora_targets=[t.strip() for t in lora_targets.split(",") if t.strip()],
        gpu_memory_bytes=memory_bytes,
        gpu_name=gpu_name,
        gpu_compute_capability=compute_capability,
        utilization=utilization,
        overhead_bytes=int(overhead_gib * GIB),
        serve_activation_bytes=int(serve_activation_gib * GIB),
        serve_non_torch_bytes=int(non_torch_gib * GIB),
    )
    result = advise(arch, counts, work)
    if as_json:
        emit_json(result)
    else:
        from stackcheck.cli.common import echo_text, use_color
        from stackcheck.render.memory import estimate_text

        color = use_color()
        echo_text(estimate_text(result, color=color), color)
    finish(1 if result.verdict == "does-not-fit" else 0)
