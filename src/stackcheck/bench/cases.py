"""What the suite runs: backends × shapes, and the shape files users add their own shapes with.

A *backend* is one path to an operation (SDPA with one kernel forced, ``torch.matmul`` in one
dtype, a block with ``torch.compile`` on …); a *shape* is one input geometry. A case is one
backend on one shape. Nothing here imports torch: the kernels live in
:mod:`stackcheck.bench.backends`, imported only when a case runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

import msgspec

from stackcheck.errors import InputError
from stackcheck.identifiers import name_problem

__all__ = [
    "BACKENDS",
    "BUILTIN_SHAPES",
    "Backend",
    "Shape",
    "ShapeFile",
    "backends_named",
    "builtin_shapes",
    "case_dtype",
    "flops",
    "load_shapes",
    "shapes_for",
]

Op = Literal["attention", "gemm", "block"]
DTYPES = ("float64", "float32", "tfloat32", "bfloat16", "float16", "float8_e4m3fn")
MAX_SHAPES = 256
# any one tensor of a case: 2**28 elements (1 GiB in float32); a bound for any shape file
MAX_ELEMENTS = 1 << 28
MAX_DIM = 1 << 20


class Shape(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """One input geometry. attention: (batch, heads, seq_q, head_dim) queries against
    (batch, kv_heads, seq_k, head_dim) keys and values; gemm: (m, k) @ (k, n); block: a
    residual MLP block of width ``dim`` over (batch, seq_q, dim)."""

    name: str
    op: Op
    dtype: str = "bfloat16"  # attention and block; a GEMM backend fixes its own dtype
    batch: int = 1
    heads: int = 8
    kv_heads: int = 0  # 0: = heads; fewer: grouped-query attention
    seq_q: int = 128
    seq_k: int = 0  # 0: = seq_q
    head_dim: int = 64
    causal: bool = False
    m: int = 0
    n: int = 0
    k: int = 0
    dim: int = 0

    @property
    def kv(self) -> int:
        return self.kv_heads or self.heads

    @property
    def keys(self) -> int:
        return self.seq_k or self.seq_q

    def spec(self) -> dict:
        """The fields that define the inputs (what the workload manifest hashes)."""
        return {k: v for k, v in msgspec.to_builtins(self).items() if k != "name"}

    def label(self) -> str:
        """Short geometry, e.g. ``b1 h8/2 s128 d64 causal`` or ``16x4096x4096``."""
        if self.op == "gemm":
            return f"{self.m}x{self.n}x{self.k}"
        if self.op == "block":
            return f"b{self.batch} s{self.seq_q} dim{self.dim}"
        heads = f"h{self.heads}" + (f"/{self.kv}" if self.kv != self.heads else "")
        seq = f"s{self.seq_q}" + (f"x{self.keys}" if self.keys != self.seq_q else "")
        return f"b{self.batch} {heads} {seq} d{self.head_dim}" + (" causal" if self.causal else "")


class ShapeFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A user's shape file: ``{"schema_version": "1.0", "shapes": [...], "include_builtin": false}``."""

    schema_version: Literal["1.0"] = "1.0"
    shapes: list[Shape] = []
    include_builtin: bool = False


def _attn(name, *, heads=16, kv=0, seq=1024, d=128, causal=False, batch=1, dtype="bfloat16", seq_k=0):
    return Shape(
        name=name,
        op="attention",
        batch=batch,
        heads=heads,
        kv_heads=kv,
        seq_q=seq,
        seq_k=seq_k,
        head_dim=d,
        causal=causal,
        dtype=dtype,
    )


# The GPU suite: head dims 64/128/256, causal and not, GQA, short and long sequences.
BUILTIN_SHAPES: dict[str, tuple[Shape, ...]] = {
    "default": (
        _attn("attn-d64-s1024", heads=16, d=64, batch=4),
        _attn("attn-d128-s1024-causal", d=128, causal=True, batch=4),
        _attn("attn-d256-s512", heads=8, d=256, seq=512, batch=4),
        _attn("attn-d128-gqa-s2048-causal", heads=32, kv=8, d=128, seq=2048, causal=True, batch=2),
        _attn("attn-d128-s8192-causal", heads=16, d=128, seq=8192, causal=True),
        _attn("attn-d128-decode-s4096", heads=32, kv=8, d=128, seq=1, seq_k=4096, batch=8),
        Shape(name="gemm-4096", op="gemm", m=4096, n=4096, k=4096),
        Shape(name="gemm-skinny-16x4096", op="gemm", m=16, n=4096, k=4096),
        Shape(name="gemm-8192x1024x8192", op="gemm", m=8192, n=1024, k=8192),
        Shape(name="block-b8-s512-dim1024", op="block", batch=8, seq_q=512, dim=1024),
    ),
    # Tiny shapes for a CPU machine (and the tests): every path, a few milliseconds each.
    "tiny": (
        _attn("attn-d64-s64", heads=4, d=64, seq=64, dtype="float32"),
        _attn("attn-d128-gqa-s64-causal", heads=4, kv=2, d=128, seq=64, causal=True, dtype="float32"),
        Shape(name="gemm-64", op="gemm", m=64, n=64, k=64),
        Shape(name="block-s16-dim32", op="block", batch=2, seq_q=16, dim=32, dtype="float32"),
    ),
}


def builtin_shapes(name: str) -> list[Shape]:
    if name not in BUILTIN_SHAPES:
        raise InputError(f"--shapes: no built-in shape set {name!r} (known: {', '.join(BUILTIN_SHAPES)})")
    return list(BUILTIN_SHAPES[name])


def shapes_for(source: str | os.PathLike | None) -> list[Shape]:
    """A built-in set by name ("default", "tiny"), else a shape file; None: the default set."""
    if source is None:
        return builtin_shapes("default")
    if str(source) in BUILTIN_SHAPES:
        return builtin_shapes(str(source))
    return load_shapes(source)


def load_shapes(path: str | os.PathLike) -> list[Shape]:
    """The shapes of a shape file (JSON), checked field by field: InputError names the file
    and the field (``FILE: shapes[2].head_dim: …``)."""
    from stackcheck.fileio import load_json, source_name

    doc = load_json(path, ShapeFile, "shape file")
    where = source_name(path)
    if not doc.shapes:
        raise InputError(f"{where}: shapes: expected at least one shape")
    if len(doc.shapes) > MAX_SHAPES:
        raise InputError(f"{where}: shapes: at most {MAX_SHAPES} shapes, got {len(doc.shapes)}")
    seen: set[str] = set()
    for i, shape in enumerate(doc.shapes):
        problem = shape_problem(shape)
        if problem is None and shape.name in seen:
            problem = f"name: {shape.name!r} is given twice"
        if problem is not None:
            raise InputError(f"{where}: shapes[{i}].{problem}")
        seen.add(shape.name)
    builtin = [s for s in BUILTIN_SHAPES["default"] if s.name not in seen] if doc.include_builtin else []
    return builtin + list(doc.shapes)


def shape_problem(s: Shape) -> str | None:
    """``field: what is wrong`` for a shape, or None."""
    if (found := name_problem(s.name)) is not None:
        return f"name: {found}"
    if s.dtype not in DTYPES:
        return f"dtype: expected one of {', '.join(DTYPES)}, got {s.dtype!r}"
    used = {
        "attention": ("batch", "heads", "seq_q", "head_dim"),
        "gemm": ("m", "n", "k"),
        "block": ("batch", "seq_q", "dim"),
    }[s.op]
    for field in (*used, "kv_heads", "seq_k"):
        value = getattr(s, field)
        optional = field in ("kv_heads", "seq_k")
        if not (0 if optional else 1) <= value <= MAX_DIM:
            least = "0 (= the default) or more" if optional else "a positive integer"
            return f"{field}: expected {least} up to {MAX_DIM}, got {value}"
    if s.op == "attention" and s.heads % s.kv:
        return f"kv_heads: {s.kv} does not divide heads ({s.heads})"
    if s.op == "attention" and s.causal and s.keys != s.seq_q:
        # kernels disagree on where the diagonal lies then (top-left in SDPA, bottom-right in flash-attn)
        return f"causal: needs seq_k = seq_q, got {s.seq_q} queries and {s.keys} keys"
    biggest = max(_tensor_sizes(s))
    if biggest > MAX_ELEMENTS:
        return f"{used[0]}: a tensor of {biggest} elements is over the limit of {MAX_ELEMENTS}"
    return None


def _tensor_sizes(s: Shape) -> tuple[int, ...]:
    if s.op == "gemm":
        return (s.m * s.k, s.k * s.n, s.m * s.n)
    if s.op == "block":
        return (s.batch * s.seq_q * s.dim * 4, s.dim * s.dim * 4)
    scores = s.seq_q * s.keys  # the float64 reference holds one head's scores at a time
    return (s.batch * s.heads * s.seq_q * s.head_dim, s.batch * s.kv * s.keys * s.head_dim, scores)


@dataclass(frozen=True)
class Backend:
    """One path to an operation. ``identity``: the BackendIdentity name its records carry
    (torch, flash-attn, xformers); ``module``: what must be importable; ``dtype``: the dtype a
    GEMM path fixes ("" = the shape's)."""

    name: str
    op: str
    group: str
    identity: str = "torch"
    module: str = "torch"
    dtype: str = ""
    cuda_only: str = ""  # why it cannot run on a CPU ("" = it may)
    min_capability: tuple[int, int] = (0, 0)  # the oldest GPU architecture it runs on
    dtypes: tuple[str, ...] = ()  # the dtypes it supports (empty: any)


_HALF = ("bfloat16", "float16")
BACKENDS: tuple[Backend, ...] = (
    Backend("sdpa-math", "attention", "attention/sdpa"),
    Backend("sdpa-efficient", "attention", "attention/sdpa"),
    Backend("sdpa-flash", "attention", "attention/sdpa"),
    Backend("sdpa-cudnn", "attention", "attention/sdpa", cuda_only="cuDNN attention", min_capability=(8, 0)),
    Backend("eager", "attention", "attention/eager"),
    Backend("flex", "attention", "attention/flex"),
    Backend(
        "flash-attn",
        "attention",
        "attention/flash-attn",
        identity="flash-attn",
        module="flash_attn",
        cuda_only="flash-attn",
        min_capability=(8, 0),
        dtypes=_HALF,
    ),
    Backend(
        "xformers",
        "attention",
        "attention/xformers",
        identity="xformers",
        module="xformers",
        cuda_only="xformers memory-efficient attention",
    ),
    Backend("matmul-fp32", "gemm", "gemm/matmul", dtype="float32"),
    Backend("matmul-tf32", "gemm", "gemm/matmul", dtype="tfloat32", cuda_only="TF32 tensor cores"),
    Backend("matmul-bf16", "gemm", "gemm/matmul", dtype="bfloat16"),
    Backend("matmul-fp16", "gemm", "gemm/matmul", dtype="float16"),
    Backend(
        "scaled-mm-fp8",
        "gemm",
        "gemm/scaled-mm",
        dtype="float8_e4m3fn",
        cuda_only="fp8 scaled matmul (cuBLASLt)",
        min_capability=(8, 9),
    ),
    Backend("block-eager", "block", "block/compile"),
    Backend("block-compile", "block", "block/compile"),
)


def backends_named(names: list[str] | tuple[str, ...] = ()) -> list[Backend]:
    """The backends named (a name, or a group such as ``attention/sdpa`` or ``gemm``); all when none."""
    if not names:
        return list(BACKENDS)
    out: list[Backend] = []
    for name in names:
        found = [
            b
            for b in BACKENDS
            if name in (b.name, b.group, b.op) or b.group.startswith(f"{name.rstrip('/')}/")
        ]
        if not found:
            known = ", ".join(b.name for b in BACKENDS)
            raise InputError(f"--backend: no backend or group {name!r} (known: {known})")
        out.extend(b for b in found if b not in out)
    return out


def case_dtype(backend: Backend, shape: Shape) -> str:
    return backend.dtype or shape.dtype


def flops(shape: Shape) -> float:
    """Floating-point operations of one forward pass (multiply-add = 2)."""
    if shape.op == "gemm":
        return 2.0 * shape.m * shape.n * shape.k
    if shape.op == "block":
        # two linears dim → 4·dim → dim over batch·seq tokens
        return 2.0 * 2 * shape.batch * shape.seq_q * shape.dim * 4 * shape.dim
    # QKᵀ and PV; a causal mask halves the work when queries and keys align
    full = 4.0 * shape.batch * shape.heads * shape.seq_q * shape.keys * shape.head_dim
    return full / 2 if shape.causal and shape.seq_q == shape.keys else full
