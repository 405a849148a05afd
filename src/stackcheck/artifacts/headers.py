"""safetensors headers, read without torch and without reading a tensor.

A ``.safetensors`` file is an 8-byte little-endian header length N, N bytes of JSON (UTF-8,
possibly padded with spaces) and then the tensor data. The JSON maps each tensor name to
``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the data that follows the
header) and may hold a ``__metadata__`` object of strings. This reader takes the first
``8 + N`` bytes only; a header length past the end of the file or above
:data:`MAX_HEADER_BYTES` (the cap the safetensors library applies) is refused before anything
is allocated for it.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from math import prod
from typing import Any

from stackcheck.errors import InputError

__all__ = ["DTYPE_BYTES", "MAX_HEADER_BYTES", "Header", "TensorInfo", "read_header", "TORCH_DTYPES"]

MAX_HEADER_BYTES = 100_000_000  # safetensors' own limit on the JSON header

# bytes per element of each safetensors dtype (safetensors' Dtype enum)
DTYPE_BYTES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "F8_E8M0": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "F64": 8,
    "I64": 8,
    "U64": 8,
}
# config.json's torch_dtype / dtype → the safetensors dtype it stores
TORCH_DTYPES = {"float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64"}
FLOAT_DTYPES = frozenset({"F16", "BF16", "F32", "F64", "F8_E5M2", "F8_E4M3"})


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int


@dataclass
class Header:
    path: str
    size: int  # the file's size in bytes
    header_bytes: int
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def data_bytes(self) -> int:
        """What the file holds after its header (the tensors' bytes, as far as they were written)."""
        return self.size - 8 - self.header_bytes

    def past_end(self) -> list[TensorInfo]:
        """Tensors whose data ends beyond the end of the file (a cut-off download or copy)."""
        return [t for t in self.tensors.values() if t.end > self.data_bytes]


def read_header(path: str | os.PathLike) -> Header:
    """The header of the safetensors file ``path``; a malformed one is an InputError naming
    the file and what is wrong with it."""
    name = str(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(8)
            if len(head) < 8:
                raise InputError(
                    f"{name}: {len(head)} bytes, expected a safetensors file (8-byte header length)"
                )
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER_BYTES:
                raise InputError(
                    f"{name}: safetensors header length {length} is above the {MAX_HEADER_BYTES}-byte limit"
                )
            if length > size - 8:
                raise InputError(
                    f"{name}: safetensors header length {length} is larger than the file ({size} bytes)"
                )
            raw = fh.read(length)
    except FileNotFoundError:
        raise InputError(f"{name}: no such safetensors file") from None
    except IsADirectoryError:
        raise InputError(f"{name}: is a directory, expected a safetensors file") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if len(raw) < length:
        raise InputError(f"{name}: truncated safetensors header ({len(raw)} of {length} bytes)")
    return parse_header(raw, name, size)


def parse_header(raw: bytes, name: str, size: int) -> Header:
    import msgspec

    if not raw.lstrip(b" ")[:1] == b"{":
        raise InputError(f"{name}: safetensors header is not a JSON object")
    try:
        doc = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise InputError(f"{name}: safetensors header is not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise InputError(f"{name}: safetensors header is not a JSON object")
    header = Header(path=name, size=size, header_bytes=len(raw))
    for key, value in doc.items():
        if key == "__metadata__":
            header.metadata = _metadata(value, name)
            continue
        header.tensors[key] = _tensor(key, value, name)
    return header


def _metadata(value: Any, name: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise InputError(f"{name}: __metadata__: expected an object of strings")
    return value


def _tensor(key: str, value: Any, name: str) -> TensorInfo:
    where = f"{name}: tensor {key!r}"
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected an object with dtype, shape and data_offsets")
    dtype, shape, offsets = value.get("dtype"), value.get("shape"), value.get("data_offsets")
    if dtype not in DTYPE_BYTES:
        raise InputError(f"{where}: dtype {dtype!r} is not a safetensors dtype")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise InputError(f"{where}: shape: expected a list of non-negative integers")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(type(o) is int and o >= 0 for o in offsets)
        or offsets[0] > offsets[1]
    ):
        raise InputError(f"{where}: data_offsets: expected [begin, end] with 0 <= begin <= end")
    want = prod(shape) * DTYPE_BYTES[dtype]
    if offsets[1] - offsets[0] != want:
        raise InputError(
            f"{where}: data_offsets span {offsets[1] - offsets[0]} bytes, "
            f"its {dtype} shape {shape} needs {want}"
        )
    return TensorInfo(key, dtype, tuple(shape), offsets[0], offsets[1])
