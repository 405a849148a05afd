"""The kernels: each backend of :data:`stackcheck.bench.cases.BACKENDS` as a torch call.

:func:`prepare` builds one case's inputs from a seeded generator (float32 draws rounded to the
case's dtype) and returns a zero-argument callable that runs the path once and returns its
output. Everything here imports torch, so this module is imported only to run cases.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

from stackcheck.bench.cases import Backend, Shape, case_dtype

__all__ = ["Device", "NoKernel", "device_info", "prepare"]

_SDPA = {
    "sdpa-math": "MATH",
    "sdpa-efficient": "EFFICIENT_ATTENTION",
    "sdpa-flash": "FLASH_ATTENTION",
    "sdpa-cudnn": "CUDNN_ATTENTION",
}
FP8_MAX = 448.0  # largest finite float8_e4m3fn


class NoKernel(Exception):
    """The path has no kernel for these inputs here (a skip, with torch's reason)."""


@dataclass(frozen=True)
class Device:
    kind: str  # cpu | cuda
    name: str = ""
    capability: tuple[int, int] = (0, 0)
    torch: str = ""
    threads: int = 0  # torch's intra-op threads (OMP_NUM_THREADS): CPU timings depend on it

    @property
    def cuda(self) -> bool:
        return self.kind == "cuda"

    def as_dict(self) -> dict:
        arch = f"sm{self.capability[0]}{self.capability[1]}" if self.cuda else ""
        out = {"kind": self.kind, "name": self.name, "arch": arch, "torch": self.torch}
        return {**out, "threads": str(self.threads)} if self.threads else out


def device_info(want: str = "auto") -> Device:
    """The device cases run on: the first CUDA GPU when there is one (``auto``), else the CPU."""
    import platform

    import torch

    if want in ("auto", "cuda") and torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability(0)
        return Device("cuda", torch.cuda.get_device_name(0), (major, minor), str(torch.__version__))
    name = platform.processor() or platform.machine()
    return Device("cpu", name, (0, 0), str(torch.__version__), torch.get_num_threads())


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _dtype(name: str):
    import torch

    return {"tfloat32": torch.float32}.get(name) or getattr(torch, name)


def prepare(
    backend: Backend, shape: Shape, device: Device, seed: int = 0
) -> tuple[Callable[[], object], dict]:
    """(run once → output, the inputs the reference needs)."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(seed)
    dev = "cuda" if device.cuda else "cpu"
    dtype = case_dtype(backend, shape)

    def draw(*size, scale=1.0):
        return (torch.randn(*size, generator=gen) * scale).to(dev)

    if shape.op == "gemm":
        return _gemm(backend, shape, dtype, draw)
    if shape.op == "block":
        return _block(backend, shape, dtype, draw)
    t = _dtype(dtype)
    q = draw(shape.batch, shape.heads, shape.seq_q, shape.head_dim).to(t)
    k = draw(shape.batch, shape.kv, shape.keys, shape.head_dim).to(t)
    v = draw(shape.batch, shape.kv, shape.keys, shape.head_dim).to(t)
    return _attention(backend.name, q, k, v, shape.causal), {"q": q, "k": k, "v": v}


def _attention(name: str, q, k, v, causal: bool) -> Callable[[], object]:
    import torch
    import torch.nn.functional as F

    gqa = q.shape[1] != k.shape[1]
    if name in _SDPA:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        kernel = getattr(SDPBackend, _SDPA[name])

        def call():
            with sdpa_kernel([kernel]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

        def sdpa():
            try:
                return call()
            except RuntimeError as exc:
                if "No viable backend" not in str(exc) and "No available kernel" not in str(exc):
                    raise
                why = _sdpa_warnings(call)
                where = f"{q.device.type}, {str(q.dtype).removeprefix('torch.')}"
                raise NoKernel(
                    f"torch has no {name} kernel for these inputs ({where})" + (f": {why}" if why else "")
                ) from exc

        return sdpa
    if name == "eager":
        groups = q.shape[1] // k.shape[1]

        def eager():
            kk = k.repeat_interleave(groups, dim=1) if groups > 1 else k
            vv = v.repeat_interleave(groups, dim=1) if groups > 1 else v
            scores = (q @ kk.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
            if causal:
                mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
                scores = scores.masked_fill(~mask, float("-inf"))
            return torch.softmax(scores.float(), dim=-1).to(q.dtype) @ vv

        return eager
    if name == "flex":
        return _flex(q, k, v, causal, gqa)
    if name == "flash-attn":
        from flash_attn import flash_attn_func

        qt, kt, vt = (x.transpose(1, 2).contiguous() for x in (q, k, v))  # (batch, seq, heads, dim)
        return lambda: flash_attn_func(qt, kt, vt, causal=causal).transpose(1, 2)
    if name == "xformers":
        import xformers.ops as xops

        groups = q.shape[1] // k.shape[1]
        qt = q.transpose(1, 2).contiguous()
        kt = k.repeat_interleave(groups, dim=1).transpose(1, 2).contiguous()
        vt = v.repeat_interleave(groups, dim=1).transpose(1, 2).contiguous()
        bias = xops.LowerTriangularMask() if causal else None
        return lambda: xops.memory_efficient_attention(qt, kt, vt, attn_bias=bias).transpose(1, 2)
    raise NoKernel(f"no implementation for attention backend {name!r}")


def _sdpa_warnings(call) -> str:
    """Why SDPA refused its forced kernel, from the warnings torch gives when it does (one line)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except RuntimeError:
            pass
    lines = [str(w.message).strip().splitlines()[0] for w in caught if str(w.message).strip()]
    return "; ".join(dict.fromkeys(line[:160] for line in lines))[:400]


def _flex(q, k, v, causal: bool, gqa: bool) -> Callable[[], object]:
    import warnings

    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    mask = None
    if causal:
        mask = create_block_mask(
            lambda b, h, qi, ki: qi >= ki, None, None, q.shape[-2], k.shape[-2], device=q.device.type
        )

    def flex():
        with warnings.catch_warnings():  # "called without torch.compile()": measured as it is
            warnings.simplefilter("ignore", UserWarning)
            return flex_attention(q, k, v, block_mask=mask, enable_gqa=gqa)

    return flex


def _gemm(backend: Backend, shape: Shape, dtype: str, draw) -> tuple[Callable[[], object], dict]:
    import torch

    a32, b32 = draw(shape.m, shape.k), draw(shape.k, shape.n)
    if dtype == "float8_e4m3fn":
        fp8 = torch.float8_e4m3fn
        scale_a = (a32.abs().max() / FP8_MAX).float().reshape(1)
        scale_b = (b32.abs().max() / FP8_MAX).float().reshape(1)
        a8 = (a32 / scale_a).to(fp8)
        b8 = (b32 / scale_b).to(fp8).t().contiguous().t()  # column-major, as cuBLASLt wants it

        def scaled():
            return torch._scaled_mm(a8, b8, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)

        return scaled, {"a": a8, "b": b8, "scale_a": scale_a, "scale_b": scale_b}
    t = _dtype(dtype)
    a, b = a32.to(t), b32.to(t)
    if a.is_cuda:  # TF32 exactly when the path asks for it, whatever the process set
        tf32 = dtype == "tfloat32"

        def cuda_matmul():
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = tf32
            try:
                return a @ b
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old

        return cuda_matmul, {"a": a, "b": b}
    return (lambda: torch.matmul(a, b)), {"a": a, "b": b}


def _block(backend: Backend, shape: Shape, dtype: str, draw) -> tuple[Callable[[], object], dict]:
    import torch
    import torch.nn.functional as F

    t = _dtype(dtype)
    dim = shape.dim
    x = draw(shape.batch, shape.seq_q, dim).to(t)
    w1, b1 = draw(4 * dim, dim, scale=dim**-0.5).to(t), draw(4 * dim, scale=0.1).to(t)
    w2, b2 = draw(dim, 4 * dim, scale=(4 * dim) ** -0.5).to(t), draw(dim, scale=0.1).to(t)

    def block(x, w1, b1, w2, b2):
        h = F.layer_norm(x, x.shape[-1:])
        return x + F.linear(F.gelu(F.linear(h, w1, b1)), w2, b2)

    fn = torch.compile(block, dynamic=False) if backend.name == "block-compile" else block
    return (lambda: fn(x, w1, b1, w2, b2)), {"x": x, "w1": w1, "b1": b1, "w2": w2, "b2": b2}
