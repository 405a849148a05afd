"""Correctness before timing: a float64 reference for every case and dtype-appropriate tolerances.

The reference is computed from the very inputs the backend received (already rounded to its
dtype), upcast to float64, so the comparison measures the kernel's error, not the rounding of
its inputs. The bound is ``atol + rtol · max|reference|``: a GEMM or attention output is a sum
over K terms, so an error is judged against the scale of the output, not element by element.
Torch is imported inside the functions that compute.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TOLERANCES", "Correctness", "judge", "reference"]

# dtype → (atol, rtol). Output rounding alone is 2^-24 (float32), 2^-11 (float16, and TF32's
# 10-bit mantissa on the products), 2^-8 (bfloat16), 2^-4 (e4m3); the bounds leave headroom
# for accumulation order, an online softmax and, for fp8, the rounding of scaled inputs.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-12, 1e-10),
    "float32": (1e-5, 1e-4),
    "tfloat32": (1e-4, 1e-2),
    "float16": (1e-4, 1e-2),
    "bfloat16": (1e-3, 3e-2),
    "float8_e4m3fn": (1e-2, 1e-1),
}


@dataclass(frozen=True)
class Correctness:
    ok: bool
    max_error: float  # max |output - reference|
    bound: float  # atol + rtol · max |reference|
    why: str = ""  # why it is wrong ("" when ok)


def judge(output, expected, dtype: str) -> Correctness:
    """``output`` (any dtype) against the float64 ``expected``."""
    import torch

    ref = expected.detach().to(torch.float64)
    out = output.detach().to(device=ref.device, dtype=torch.float64)
    if out.shape != ref.shape:
        return Correctness(False, float("inf"), 0.0, f"shape {tuple(out.shape)}, expected {tuple(ref.shape)}")
    atol, rtol = TOLERANCES[dtype]
    bound = atol + rtol * float(ref.abs().max()) if ref.numel() else atol
    finite = bool(torch.isfinite(out).all())
    if not finite:
        return Correctness(False, float("inf"), bound, "the output holds NaN or inf")
    err = float((out - ref).abs().max()) if ref.numel() else 0.0
    if err > bound:
        return Correctness(False, err, bound, f"max error {err:.3g} exceeds the {dtype} bound {bound:.3g}")
    return Correctness(True, err, bound)


def reference(shape, inputs: dict):
    """The float64 result of one case from its inputs (``q, k, v`` / ``a, b`` (+ scales) / ``x``
    and the block's weights)."""
    import torch

    d = {name: t.detach().to(torch.float64) for name, t in inputs.items() if torch.is_tensor(t)}
    if shape.op == "gemm":
        a, b = d["a"], d["b"]
        if "scale_a" in d:  # fp8: the values the kernel sees are the scaled-down ones
            return (a * d["scale_a"]) @ (b * d["scale_b"])
        return a @ b
    if shape.op == "block":
        return block_reference(d)
    return attention_reference(d["q"], d["k"], d["v"], causal=shape.causal)


def attention_reference(q, k, v, *, causal: bool):
    """softmax(Q Kᵀ / √d + mask) V in float64, one (batch, query head) at a time so the
    scores held at once are seq_q × seq_k; query head h reads key/value head h // groups (GQA)."""
    import torch

    groups = q.shape[1] // k.shape[1]
    mask = None
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
    out = torch.empty_like(q)
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            scores = (q[b, h] @ k[b, h // groups].T) / (q.shape[-1] ** 0.5)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            out[b, h] = torch.softmax(scores, dim=-1) @ v[b, h // groups]
    return out


def block_reference(d: dict):
    """x + W2 · gelu(W1 · layernorm(x)) in float64 (the block of :mod:`stackcheck.bench.backends`)."""
    import torch

    x = d["x"]
    h = torch.nn.functional.layer_norm(x, x.shape[-1:])
    h = torch.nn.functional.gelu(h @ d["w1"].T + d["b1"])
    return x + h @ d["w2"].T + d["b2"]
