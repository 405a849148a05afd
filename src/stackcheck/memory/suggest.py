"""What would fit: single changes to a workload that does not fit, each judged by the same
estimate (:func:`stackcheck.memory.estimate.estimate`), never by a rule of thumb.

Inference and serving: quantized weights (int8, 4-bit), an fp8 KV cache, the longest context
and the most concurrent sequences that fit, tensor parallelism over more GPUs. Training:
gradient checkpointing, a higher ZeRO stage, optimizer states offloaded to CPU RAM, QLoRA,
the longest context and the largest micro-batch that fit, more GPUs with ZeRO-3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec

from stackcheck.memory.architecture import Architecture, ParamCount
from stackcheck.memory.estimate import QUANT_NOTE, estimate
from stackcheck.models.memory import Estimate, Suggestion, Workload

MIN_CONTEXT = 256  # a shorter context is not a next step worth offering
MORE_GPUS = (2, 4, 8)
CLOSEST = 3  # shown when no single change fits


def advise(a: Architecture, p: ParamCount, w: Workload) -> Estimate:
    """The estimate, with what would fit instead when it does not (what ``memory`` prints)."""
    result = estimate(a, p, w)
    if result.verdict == "does-not-fit":
        result.suggestions = suggestions(a, p, result.workload)
    return result


def suggestions(a: Architecture, p: ParamCount, w: Workload) -> list[Suggestion]:
    """The single changes that make ``w`` fit, in the order above; when none does, the
    ``CLOSEST`` changes with the most headroom."""

    def judged(changes: dict) -> Estimate:
        return estimate(a, p, msgspec.structs.replace(w, **changes))

    found = []
    for options, change, changes in _candidates(w, judged):
        e = judged(changes)
        found.append(
            Suggestion(
                options=options,
                change=change,
                total_gib=e.total_gib,
                headroom_gib=e.headroom_gib or 0.0,
                fits=e.verdict == "fits",
            )
        )
    fitting = [s for s in found if s.fits]
    return fitting or sorted(found, key=lambda s: -s.headroom_gib)[:CLOSEST]


def _candidates(w: Workload, judged: Callable[[dict], Estimate]) -> Iterator[tuple[list[str], str, dict]]:
    """(options, change in words, Workload changes) for each change worth judging."""
    fits = lambda changes: judged(changes).verdict == "fits"  # noqa: E731
    seq = w.seq_len or 1
    if w.mode in ("infer", "serve"):
        if w.quant is None:
            yield ["--quant", "int8"], QUANT_NOTE["int8"], {"quant": "int8"}
        if w.quant in (None, "int8"):
            yield ["--quant", "int4"], QUANT_NOTE["int4"], {"quant": "int4"}
        if (w.kv_dtype or w.dtype) != "fp8":
            yield ["--kv-dtype", "fp8"], "an fp8 KV cache (half of a 16-bit one)", {"kv_dtype": "fp8"}
        if (n := _largest(MIN_CONTEXT, seq - 1, lambda s: fits({"seq_len": s}))) is not None:
            yield ["--seq-len", str(n)], f"the longest context that fits: {n:,} tokens", {"seq_len": n}
        if (
            w.concurrency > 1
            and (n := _largest(1, w.concurrency - 1, lambda c: fits({"concurrency": c}))) is not None
        ):
            yield (
                ["--concurrency", str(n)],
                f"{n} concurrent sequence{'s' if n > 1 else ''}",
                {"concurrency": n},
            )
        if w.batch > 1 and (n := _largest(1, w.batch - 1, lambda b: fits({"batch": b}))) is not None:
            yield ["--batch", str(n)], f"a batch of {n}", {"batch": n}
        gpus = next((n for n in MORE_GPUS if n > w.gpus and fits({"gpus": n})), None)
        if gpus:
            yield ["--gpus", str(gpus)], f"tensor parallel over {gpus} GPUs", {"gpus": gpus}
        return
    if not w.gradient_checkpointing:
        yield (
            ["--gradient-checkpointing"],
            "recompute activations in the backward pass",
            {"gradient_checkpointing": True},
        )
    if w.gpus > 1:
        zero = next((z for z in range(w.zero + 1, 4) if fits({"zero": z})), None)
        if zero is not None:
            yield ["--zero", str(zero)], f"ZeRO stage {zero} over the {w.gpus} GPUs", {"zero": zero}
    if not w.offload_optimizer:
        yield (
            ["--offload-optimizer"],
            "optimizer states (and fp32 master weights) in CPU RAM (ZeRO-Offload)",
            {"offload_optimizer": True},
        )
    if w.mode in ("train", "lora"):
        yield (
            ["--mode", "qlora"],
            "QLoRA: LoRA adapters on a 4-bit (NF4) base, a different recipe",
            {"mode": "qlora", "quant": None},
        )
    if (n := _largest(MIN_CONTEXT, seq - 1, lambda s: fits({"seq_len": s}))) is not None:
        yield ["--seq-len", str(n)], f"the longest context that fits: {n:,} tokens", {"seq_len": n}
    if w.batch > 1 and (n := _largest(1, w.batch - 1, lambda b: fits({"batch": b}))) is not None:
        yield ["--batch", str(n)], f"a micro-batch of {n} per GPU", {"batch": n}
    gpus = next((n for n in MORE_GPUS if n > w.gpus and fits({"gpus": n, "zero": 3})), None)
    if gpus and w.zero < 3:
        yield (
            ["--gpus", str(gpus), "--zero", "3"],
            f"ZeRO-3 over {gpus} GPUs (weights, gradients, states sharded)",
            {"gpus": gpus, "zero": 3},
        )
    elif gpus:
        yield ["--gpus", str(gpus)], f"ZeRO-3 over {gpus} GPUs", {"gpus": gpus}


def _largest(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """The largest n in [lo, hi] with ok(n), for ok true below some bound (monotone); None
    when even ``lo`` fails."""
    if hi < lo or not ok(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo
