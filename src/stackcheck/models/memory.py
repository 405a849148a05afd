"""The memory estimate's data: the workload asked about, the terms of the sum, the serving
budget, the verdict and the suggestions (computed by :mod:`stackcheck.memory.estimate`, printed by
:mod:`stackcheck.render.memory`)."""

from __future__ import annotations

from typing import Literal

import msgspec

GIB = 1024**3

Mode = Literal["infer", "serve", "train", "lora", "qlora"]


class Workload(msgspec.Struct, kw_only=True):
    """What will run, and where."""

    mode: Mode = "infer"
    dtype: str = "bf16"
    quant: str | None = None  # int8 | int4 | nf4
    kv_dtype: str | None = None  # default: dtype
    seq_len: int | None = None  # default: 4096 (train/infer), the model's max for serve
    batch: int = 1  # sequences per forward pass (per GPU for training)
    concurrency: int = 1  # concurrent requests (infer/serve)
    gradient_checkpointing: bool = False
    attention: Literal["sdpa", "eager"] = "sdpa"
    optimizer: str = "adamw"
    gpus: int = 1
    zero: int = 0
    lora_rank: int = 16
    lora_targets: list[str] = msgspec.field(default_factory=lambda: ["all-linear"])
    offload_optimizer: bool = False  # optimizer states and fp32 master weights in CPU RAM (ZeRO-Offload)
    gpu_memory_bytes: int | None = None
    gpu_name: str | None = None
    gpu_compute_capability: str | None = None  # of the target GPU, when known (bf16 / fp8 notes)
    utilization: float = 0.9
    overhead_bytes: int = GIB  # CUDA context + allocator/cuBLAS workspace per GPU
    serve_activation_bytes: int = 5 * GIB  # vLLM profiling peak (measured 4.8-7.4 GiB)
    serve_non_torch_bytes: int = int(0.15 * GIB)


class Term(msgspec.Struct, kw_only=True):
    name: str
    bytes: int  # per GPU
    gib: float
    formula: str
    assumption: str


class Serving(msgspec.Struct, kw_only=True):
    """vLLM-style KV budget and what it holds."""

    budget_bytes: int
    kv_budget_bytes: int
    kv_bytes_per_token: int  # per GPU
    max_tokens: int  # whole 16-token blocks
    max_model_len: int
    max_concurrency_at_max_model_len: int
    max_context_at_concurrency: int  # for the requested concurrency, capped at the model's max
    concurrency: int
    formula: str


class Estimate(msgspec.Struct, kw_only=True):
    model: dict[str, object]
    parameters: dict[str, int]
    workload: Workload
    terms: list[Term]
    total_bytes: int  # per GPU
    total_gib: float
    target: dict[str, object] = {}
    verdict: Literal["fits", "does-not-fit", "no-target"] = "no-target"
    headroom_gib: float | None = None
    serving: Serving | None = None
    cross_checks: dict[str, float] = {}
    notes: list[str] = []
    # when it does not fit: single changes that would (or, when none does, the closest three)
    suggestions: list[Suggestion] = []


class Suggestion(msgspec.Struct, kw_only=True):
    """One change to the workload and what the same estimate says with it."""

    options: list[str]  # the command-line options that make the change, e.g. ["--quant", "int8"]
    change: str  # the change in words
    total_gib: float
    headroom_gib: float
    fits: bool
