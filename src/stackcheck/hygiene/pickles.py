"""What loading a pickle would import, read from its opcodes — never by unpickling.

``pickletools.genops`` decodes the opcode stream; a small stack simulation (the one
``pickletools.dis`` does) resolves the operands of STACK_GLOBAL, including strings fetched
back from the memo. A torch checkpoint is either a zip archive whose ``*.pkl`` members are
pickles, or (legacy format) several pickles back to back followed by raw storage bytes.
"""

from __future__ import annotations

import io
import pickletools
import zipfile
from dataclasses import dataclass, field

# Largest pickle stream read from one file or archive member; the tensor data of a torch
# checkpoint lives outside the pickle, so real streams are far smaller.
MAX_STREAM_BYTES = 64 * 1024 * 1024

# What torch.load(weights_only=True) and numpy's array pickling need; nothing here runs code.
_SAFE_EXACT = {
    ("collections", "OrderedDict"),
    ("collections", "Counter"),
    ("collections", "defaultdict"),
    ("torch", "Size"),
    ("torch", "Tensor"),
    ("torch", "device"),
    ("torch", "dtype"),
    ("torch", "layout"),
    ("torch", "memory_format"),
    ("torch.nn.parameter", "Parameter"),
    ("torch.serialization", "_get_layout"),
    ("torch._tensor", "_rebuild_from_type_v2"),
    ("_codecs", "encode"),
    ("copyreg", "_reconstructor"),
    ("copy_reg", "_reconstructor"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
}
_SAFE_BUILTINS = {"set", "frozenset", "bytearray", "bytes", "complex", "slice", "range", "object", "dict", "list", "tuple", "int", "float", "bool", "str"}
_TORCH_VALUES = {  # dtypes and layouts pickled by name
    "float16", "float32", "float64", "bfloat16", "half", "float", "double", "complex32", "complex64",
    "complex128", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "bool",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "strided", "sparse_coo",
    "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn", "contiguous_format",
    "channels_last", "channels_last_3d", "preserve_format", "qint8", "quint8", "qint32",
}
# Known code-execution primitives get a plainer explanation (all non-allow-listed imports block).
_DANGEROUS_MODULES = {"os", "posix", "nt", "subprocess", "sys", "shutil", "socket", "runpy", "importlib", "pty", "webbrowser", "ctypes", "code", "marshal", "pickle", "_pickle", "commands", "platform", "requests", "urllib", "http"}
_DANGEROUS_BUILTINS = {"eval", "exec", "compile", "__import__", "getattr", "setattr", "open", "breakpoint", "input", "globals", "vars"}


def is_safe(module: str, name: str) -> bool:
    if (module, name) in _SAFE_EXACT:
        return True
    if module in ("builtins", "__builtin__"):
        return name in _SAFE_BUILTINS
    if module == "torch._utils":
        return name.startswith("_rebuild_")
    if module == "torch":
        return name.endswith("Storage") or name in _TORCH_VALUES
    if module == "numpy.dtypes":
        return name.endswith("DType")
    # TorchScript archives (torch.jit.save) name their compiled classes __torch__.*; the
    # TorchScript loader builds those from the archive's code, it imports no Python module.
    return module == "__torch__" or module.startswith("__torch__.")


def is_dangerous(module: str, name: str) -> bool:
    top = module.split(".", 1)[0]
    return top in _DANGEROUS_MODULES or (module in ("builtins", "__builtin__") and name in _DANGEROUS_BUILTINS)


@dataclass
class PickleScan:
    imports: list[str] = field(default_factory=list)  # "module name" in stream order, unique
    unresolved: int = 0  # STACK_GLOBAL / EXT* operands that are not plain strings
    streams: int = 0  # complete pickle streams read
    error: str | None = None  # why reading stopped early, when it did

    @property
    def is_pickle(self) -> bool:
        return self.streams > 0 or bool(self.imports)

    def unsafe(self) -> list[tuple[str, str]]:
        """(module, name) of every import outside the allow-list."""
        pairs = [tuple(q.split(" ", 1)) if " " in q else (q, "") for q in self.imports]
        return [p for p in pairs if not is_safe(*p)]


_STRING_OPS = {"STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8"}


def _scan_stream(fh, found: list[str]) -> tuple[int, bool]:
    """Read one pickle stream from ``fh``, appending its imports ("module name") to
    ``found``; returns (unresolved STACK_GLOBAL/EXT operands, ended with STOP)."""
    stack: list = []
    marks: list[int] = []
    memo: dict = {}
    mark = object()
    unresolved = 0
    for op, arg, _pos in pickletools.genops(fh):
        name = op.name
        if name in ("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"):  # store the top, leave it there
            memo[len(memo) if name == "MEMOIZE" else arg] = stack[-1] if stack else None
            continue
        before, after = op.stack_before, list(op.stack_after)
        popped: list = []
        n = len(before)
        if pickletools.markobject in before or (name == "POP" and stack and stack[-1] is mark):
            if marks:
                del stack[marks.pop() :]
            n = before.index(pickletools.markobject) if pickletools.markobject in before else 0
        if n:
            popped, stack[-n:] = stack[-n:], []
        if name in ("GLOBAL", "INST"):
            found.append(arg)
        elif name == "STACK_GLOBAL":
            if len(popped) == 2 and all(isinstance(v, str) for v in popped):
                found.append(f"{popped[0]} {popped[1]}")
            else:
                unresolved += 1
        elif name in ("EXT1", "EXT2", "EXT4"):
            unresolved += 1  # the copyreg extension registry picks the callable
        if name in ("GET", "BINGET", "LONG_BINGET"):
            after = [memo.get(arg)]
        elif name in _STRING_OPS:
            after = [arg if isinstance(arg, str) else None]
        elif pickletools.markobject in after:
            marks.append(len(stack))
            after = [mark]
        else:
            after = [None] * len(after)
        stack.extend(after)
        if name == "STOP":
            return unresolved, True
    return unresolved, False


def scan_bytes(data: bytes, *, pickle_expected: bool = False, truncated: bool = False) -> PickleScan:
    """Back-to-back pickle streams at the start of ``data`` (legacy torch.save writes five
    before the raw storage bytes). A stream that starts with a PROTO opcode, or any stream
    when ``pickle_expected`` (a .pkl file), counts even when it breaks off: pickle runs
    each opcode as it reads, so a truncated malicious stream still executes. Otherwise only
    complete streams count, so random binary data is not mistaken for a pickle."""
    scan = PickleScan()
    buf = io.BytesIO(data)
    while buf.tell() < len(data):
        head = data[buf.tell() : buf.tell() + 1]
        if scan.streams and head != b"\x80":
            break  # raw tensor data follows the pickles
        found: list[str] = []
        error = None
        try:
            unresolved, complete = _scan_stream(buf, found)
        except Exception as exc:  # genops raises ValueError, EOFError, UnicodeDecodeError …
            unresolved, complete, error = 0, False, f"{type(exc).__name__}: {exc}"
        trusted = complete or ((head == b"\x80" or pickle_expected) and (found or scan.streams))
        if not trusted:
            break
        for q in found:
            if q not in scan.imports:
                scan.imports.append(q)
        scan.unresolved += unresolved
        if not complete:
            scan.error = "stream larger than the scan limit" if truncated else (error or "no STOP opcode")
            break
        scan.streams += 1
    return scan


def scan_file(path: str, *, pickle_expected: bool = False) -> PickleScan:
    """A checkpoint file: a zip archive (every ``*.pkl`` member) or raw pickles."""
    try:
        if zipfile.is_zipfile(path):
            return _scan_zip(path)
        with open(path, "rb") as fh:
            data = fh.read(MAX_STREAM_BYTES + 1)
    except (OSError, zipfile.BadZipFile) as exc:
        return PickleScan(error=f"unreadable: {exc}")
    truncated = len(data) > MAX_STREAM_BYTES
    return scan_bytes(data[:MAX_STREAM_BYTES], pickle_expected=pickle_expected, truncated=truncated)


def _scan_zip(path: str) -> PickleScan:
    total = PickleScan()
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if not info.filename.endswith(".pkl"):
                continue
            with zf.open(info) as member:
                data = member.read(MAX_STREAM_BYTES + 1)
            part = scan_bytes(data[:MAX_STREAM_BYTES], pickle_expected=True, truncated=len(data) > MAX_STREAM_BYTES)
            total.imports += [q for q in part.imports if q not in total.imports]
            total.unresolved += part.unresolved
            total.streams += part.streams
            total.error = total.error or (f"{info.filename}: {part.error}" if part.error else None)
    return total
