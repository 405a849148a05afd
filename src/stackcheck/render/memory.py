"""Human output of an :class:`~stackcheck.models.memory.Estimate`: counts, the breakdown
with formulas and assumptions, the serving budget, the verdict."""

from __future__ import annotations

import re
import shlex
from typing import Any

from stackcheck.models.memory import GIB, Estimate
from stackcheck.render.color import paint


def _gib(n: float) -> str:
    return f"{n / GIB:8.2f} GiB"


def estimate_text(e: Estimate, *, color: bool = False) -> str:
    m, p, w = e.model, e.parameters, e.workload
    moe = f", MoE {m['experts']} experts, {m['experts_per_token']} per token" if m["experts"] else ""
    out = [
        f"model: {m['model_type']} ({m['source']}): {m['layers']} layers, hidden {m['hidden_size']}, "
        f"{m['attention_heads']} heads / {m['kv_heads']} KV heads × {m['head_dim']}, vocab {m['vocab']:,}, "
        f"{'tied' if m['tied_embeddings'] else 'untied'} embeddings{moe}",
        f"parameters: {p['total']:,} total"
        + (f", {p['active_per_token']:,} active per token" if p["active_per_token"] != p["total"] else "")
        + f" (embedding {p['embedding']:,}, lm_head {p['lm_head']:,}, non-embedding {p['non_embedding']:,})",
    ]
    what = (
        f"{w.mode}, {w.dtype}"
        + (f", {w.quant} weights" if w.quant else "")
        + f", seq {w.seq_len:,} × batch {w.batch}"
    )
    if w.mode in ("infer", "serve"):
        what += f" × concurrency {w.concurrency}"
    if w.mode in ("train", "lora", "qlora"):
        what += f", {w.optimizer}" + (", gradient checkpointing" if w.gradient_checkpointing else "")
        if w.gpus > 1:
            what += f", ZeRO-{w.zero}"
    if w.gpus > 1:
        what += f", {w.gpus} GPUs"
    out.append(f"workload: {what}")
    out.append("memory per GPU:")
    for t in e.terms:
        out.append(f"  {t.name:<18}{_gib(t.bytes)}   {t.formula}")
        out.append(f"  {'':<18}{'':12}   ({t.assumption})")
    out.append(f"  {'total':<18}{_gib(e.total_bytes)}")
    for key, value in e.cross_checks.items():
        out.append(f"  {_cross_check_label(key)}: {value:.2f} GiB")
    if e.serving:
        s = e.serving
        out.append(f"serving (vLLM-style, utilization {w.utilization:g}):")
        out.append(f"  {s.formula}")
        out.append(
            f"  KV budget {s.kv_budget_bytes / GIB:.2f} GiB = {s.max_tokens:,} tokens; "
            f"at max_model_len {s.max_model_len:,}: "
            f"{s.max_concurrency_at_max_model_len:,} concurrent sequences; "
            f"at concurrency {s.concurrency}: up to {s.max_context_at_concurrency:,} tokens each"
        )
    for note in e.notes:
        out.append(f"note: {note}")
    if e.verdict == "no-target":
        out.append("verdict: no target given (--gpu NAME or --gpu-memory SIZE)")
    else:
        tg: dict[str, Any] = e.target  # JSON-shaped: gpu, memory_gib, gpus, usable_gib, utilization
        target = f"{tg['gpu'] + ' ' if tg.get('gpu') else ''}{tg['memory_gib']} GiB" + (
            f" × {tg['gpus']}" if tg["gpus"] > 1 else ""
        )
        if "usable_gib" in tg:
            target += f", {tg['usable_gib']} GiB usable at utilization {tg['utilization']:g}"
        word = paint("FITS" if e.verdict == "fits" else "DOES NOT FIT", e.verdict, color)
        out.append(f"verdict: {word} {target} (headroom {e.headroom_gib:+.2f} GiB)")
    if e.suggestions:
        fitting = any(s.fits for s in e.suggestions)
        out.append(
            "what would fit (each change alone, same estimate):"
            if fitting
            else "no single change fits; the closest (same estimate):"
        )
        for sg in e.suggestions:
            figure = f"{sg.total_gib:8.2f} GiB  headroom {sg.headroom_gib:+.2f} GiB"
            out.append(f"  {shlex.join(sg.options):<28}{figure}  {sg.change}")
    return "\n".join(out) + "\n"


def _cross_check_label(key: str) -> str:
    """The JSON key of a cross-check as a reader says it."""
    if key == "eleutherai_inference_1.2x_weights_gib":
        return "rule of thumb, 1.2 × weights (EleutherAI, inference)"
    m = re.fullmatch(r"weights_(\w+?)_all_params_gib", key)
    if m:
        return f"weights if every parameter were {m.group(1)}"
    return key.removesuffix("_gib").replace("_", " ")
