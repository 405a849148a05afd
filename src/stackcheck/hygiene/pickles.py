"""What loading a pickle would import, read from its opcodes — never by unpickling.

A pickle is recognised by its content, whatever the file is called: a PROTO opcode (protocol
2+), or for protocol 0/1 a bounded opcode walk that reaches STOP. It is also looked for inside
what loaders open for you: gzip / bz2 / xz / lzma / zlib streams (joblib's compressors), zip
archives (torch's checkpoint format ``*/data.pkl``, numpy's ``.npz``), and numpy ``.npy``
files whose dtype holds objects (the payload after the header is a pickle).

``pickletools.genops`` decodes the opcode stream; a small stack machine follows what each
opcode does to the unpickler's stack, memo and MARK levels — without calling anything — so the
operands of STACK_GLOBAL are resolved even when they come back from the memo, and joblib's
array wrappers can be stepped over (joblib writes each array's raw bytes into the middle of
its pickle). A torch checkpoint is either a zip archive whose ``*.pkl`` members are pickles,
or (legacy format) five pickles back to back followed by raw storage bytes.

Every read goes through :class:`_Reader`, which charges what it returns (and what a seek in a
compressed stream has to decompress) to the file's budget and never asks for more than is
left: a decompression bomb is read up to the budget, not into memory.
"""

from __future__ import annotations

import ast
import io
import os
import pickletools
import struct
import zipfile
import zlib
from dataclasses import dataclass, field

# Largest pickle stream read from one file or archive member; the tensor data of a torch
# checkpoint lives outside the pickle, so real streams are far smaller.
MAX_STREAM_BYTES = 64 * 1024 * 1024
# Read or decompressed from one file in all, every stream, member and layer together.
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_OPCODES = 1 << 24  # opcodes walked in one file (about 1 µs each): bounds the time a file takes
MAX_RUN_BYTES = 4 << 30  # read and decompressed for pickles in one whole scan (RunBudget)
MAX_RUN_OPCODES = 1 << 27  # opcodes walked in one whole scan: about two minutes at most
MAX_MEMBERS = 100_000  # archive members looked at in one file (a zip's directory is refused beyond)
MAX_DEPTH = 4  # containers inside containers: zip > gzip > npy > pickle
MAX_STACK = 1 << 20  # values on the simulated unpickler stack, all MARK levels together
MAX_MEMO = 1 << 19  # memo entries kept; once full, every value read back from the memo is unknown
MAX_NPY_HEADER = 1 << 20
SNIFF_BYTES = 8192  # what decides whether a file is a pickle or a container of one
PICKLE_NAMES = {"pkl", "pickle", "joblib", "sav"}  # names that promise a pickle (joblib: maybe compressed)
_COMPRESSED_NAMES = {"gz", "gzip", "bz2", "xz", "lzma", "z", "zlib"}

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
    # joblib's stand-in for an array whose bytes follow the pickle opcodes; it carries a shape
    # and a dtype, its subclass is an import of its own
    ("joblib.numpy_pickle", "NumpyArrayWrapper"),
    ("sklearn.externals.joblib.numpy_pickle", "NumpyArrayWrapper"),
}
_SAFE_BUILTINS = {
    "set",
    "frozenset",
    "bytearray",
    "bytes",
    "complex",
    "slice",
    "range",
    "xrange",
    "object",
    "dict",
    "list",
    "tuple",
    "int",
    "float",
    "bool",
    "str",
}
_TORCH_VALUES = {  # dtypes and layouts pickled by name
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "half",
    "float",
    "double",
    "complex32",
    "complex64",
    "complex128",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "bool",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "strided",
    "sparse_coo",
    "sparse_csr",
    "sparse_csc",
    "sparse_bsr",
    "sparse_bsc",
    "_mkldnn",
    "contiguous_format",
    "channels_last",
    "channels_last_3d",
    "preserve_format",
    "qint8",
    "quint8",
    "qint32",
}
_TORCHSCRIPT_PICKLE = {
    "build_intlist",
    "build_tensorlist",
    "build_doublelist",
    "build_boollist",
    "build_tensor_from_id",
    "restore_type_tag",
}
# Known code-execution primitives get a plainer explanation (all non-allow-listed imports block).
_DANGEROUS_MODULES = {
    "os",
    "posix",
    "nt",
    "subprocess",
    "_posixsubprocess",
    "sys",
    "shutil",
    "socket",
    "runpy",
    "importlib",
    "pty",
    "webbrowser",
    "ctypes",
    "code",
    "codeop",
    "marshal",
    "pickle",
    "_pickle",
    "commands",
    "platform",
    "requests",
    "urllib",
    "http",
    "multiprocessing",
    "asyncio",
    "pdb",
    "timeit",
    "cProfile",
    "profile",
    "trace",
    "pydoc",
}
_DANGEROUS_BUILTINS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "getattr",
    "setattr",
    "open",
    "breakpoint",
    "input",
    "globals",
    "vars",
}


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
    if module == "torch.jit._pickle":  # TorchScript's *.debug_pkl: functions that return their argument
        return name in _TORCHSCRIPT_PICKLE
    # TorchScript archives (torch.jit.save) name their compiled classes __torch__.*; the
    # TorchScript loader builds those from the archive's code, it imports no Python module.
    return module == "__torch__" or module.startswith("__torch__.")


def is_dangerous(module: str, name: str) -> bool:
    top = module.split(".", 1)[0]
    return top in _DANGEROUS_MODULES or (
        module in ("builtins", "__builtin__") and name in _DANGEROUS_BUILTINS
    )


def expected_by_name(name: str) -> bool:
    """Whether a file's name promises a pickle (``model.pkl``, ``clf.joblib``, ``x.pkl.gz``)."""
    parts = name.rsplit("/", 1)[-1].lower().split(".")[1:]
    while parts and parts[-1] in _COMPRESSED_NAMES:
        parts.pop()
    return bool(parts) and parts[-1] in PICKLE_NAMES


@dataclass
class PickleScan:
    imports: list[str] = field(default_factory=list)  # "module name" in stream order, unique
    unresolved: int = 0  # STACK_GLOBAL / EXT* operands that are not plain strings
    streams: int = 0  # complete pickle streams read
    error: str | None = None  # why a pickle broke off or is corrupt (the unpickler stops there too)
    limit: str | None = None  # a scan limit stopped reading: what lies beyond was not checked
    found_in: list[str] = field(default_factory=list)  # "gzip > pickle protocol 4", unique

    @property
    def is_pickle(self) -> bool:
        return self.streams > 0 or bool(self.imports)

    def unsafe(self) -> list[tuple[str, str]]:
        """(module, name) of every import outside the allow-list."""
        pairs = [tuple(q.split(" ", 1)) if " " in q else (q, "") for q in self.imports]
        return [p for p in pairs if not is_safe(*p)]

    def _stop(self, attr: str, text: str) -> None:
        if getattr(self, attr) is None:
            setattr(self, attr, text)


# ---- the budget every read is charged to -------------------------------------------------


class RunBudget:
    """What one whole scan may spend on pickles, over all its files; a file met after it is
    spent is reported as not checked."""

    def __init__(self) -> None:
        self.left = MAX_RUN_BYTES
        self.opcodes = MAX_RUN_OPCODES

    def spent(self) -> bool:
        return self.left <= 0 or self.opcodes <= 0


class _Budget:
    def __init__(self, run: RunBudget | None = None) -> None:
        self.left = MAX_FILE_BYTES if run is None else min(MAX_FILE_BYTES, run.left)
        self.members = MAX_MEMBERS
        self.opcodes = MAX_OPCODES if run is None else min(MAX_OPCODES, run.opcodes)
        self.opcodes_spent = (
            f"more than {MAX_OPCODES} opcodes in one file"
            if self.opcodes == MAX_OPCODES
            else f"this scan's budget for pickles ({MAX_RUN_OPCODES} opcodes) is spent"
        )


class _Reader:
    """The file-like object genops reads from. Each stream may read MAX_STREAM_BYTES (and the
    file's budget what is left); a read never asks the file for more than that, so a declared
    length of 2**60 allocates nothing. ``exhausted`` tells a stream cut by the limit from one
    that really ends; ``cheap_seek`` is False for a decompressing file, where a forward seek
    costs what it skips."""

    def __init__(
        self, f, budget: _Budget, *, size: int | None = None, cheap_seek: bool = True, cut: bool = False
    ):
        self.f, self.budget, self.size, self.cheap_seek = f, budget, size, cheap_seek
        self.cut = cut  # the bytes behind f were themselves cut at a limit
        self.allowance = 0
        self.exhausted = False

    def start_stream(self) -> None:
        self.allowance = min(MAX_STREAM_BYTES, self.budget.left)
        self.exhausted = False

    def _charge(self, n: int) -> None:
        self.allowance -= n
        self.budget.left -= n

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self.allowance + 1
        want = min(n, self.allowance)
        data = self.f.read(want) if want > 0 else b""
        self._charge(len(data))
        if len(data) < n and ((len(data) == want and want < n) or self.cut):
            self.exhausted = True  # short because of a limit, not because the data ends
        return data

    def readline(self) -> bytes:
        data = self.f.readline(self.allowance) if self.allowance > 0 else b""
        self._charge(len(data))
        if not data.endswith(b"\n") and (self.allowance <= 0 or self.cut):
            self.exhausted = True
        return data

    def tell(self) -> int:
        return self.f.tell()

    def skip(self, n: int) -> bool:
        """Step over ``n`` bytes (a joblib array); False when the data ends first."""
        target = self.f.tell() + n
        if self.size is not None and target > self.size:
            self.exhausted = self.cut
            return False
        if not self.cheap_seek:
            if n > self.allowance:
                self.exhausted = True
                return False
            self._charge(n)
        self.f.seek(target)
        if self.f.tell() != target:
            self.exhausted = self.cut
            return False
        return True


# ---- the stack machine ---------------------------------------------------------------------


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "?"


UNKNOWN = _Unknown()  # a value the scan does not follow


@dataclass(eq=False)
class _Global:
    module: str
    name: str


@dataclass(eq=False)
class _Obj:  # what the unpickler would build by calling cls(*args), then BUILD(state)
    cls: object
    args: object
    state: object = None


class _Bad(Exception):
    """The unpickler would stop here too."""


class _Limit(Exception):
    """A scan limit stops the walk; what follows is not checked."""


class _NotStarted(Exception):
    """The bytes after a complete pickle are not another one (no PROTO opcode)."""


_STRING_OPS = {
    "STRING",
    "BINSTRING",
    "SHORT_BINSTRING",
    "UNICODE",
    "BINUNICODE",
    "SHORT_BINUNICODE",
    "BINUNICODE8",
}
_VALUE_OPS = _STRING_OPS | {
    "INT",
    "BININT",
    "BININT1",
    "BININT2",
    "LONG",
    "LONG1",
    "LONG4",
    "FLOAT",
    "BINFLOAT",
    "BINBYTES",
    "SHORT_BINBYTES",
    "BINBYTES8",
}
_CONSTANTS = {"NONE": None, "NEWTRUE": True, "NEWFALSE": False, "EMPTY_TUPLE": ()}
_OPAQUE = {"EMPTY_SET", "BYTEARRAY8", "NEXT_BUFFER", "PERSID", "EXT1", "EXT2", "EXT4"}
_PUT = {"PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"}
_GET = {"GET", "BINGET", "LONG_BINGET"}
_KEEP = 64  # items kept per list / dict / tuple value: joblib's array header needs six
# The first opcode of a protocol 0/1 pickle pushes something (or is a MARK).
_STARTERS = {op.code.encode("latin-1") for op in pickletools.opcodes if not op.stack_before}
_TORCH_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C  # the first of the five pickles of a legacy torch.save


@dataclass
class _Stream:
    complete: bool = False  # reached STOP
    clean: bool = False  # ... with one value on the stack and no open MARK (what pickletools.dis demands)
    protocol: int | None = None
    unresolved: int = 0
    error: str | None = None
    eof: bool = False  # the error is the data running out
    limit: str | None = None
    value: object = UNKNOWN  # what STOP returned, when the scan followed it
    arrays: int = 0  # joblib arrays stepped over
    calls: int = 0  # REDUCE / INST / OBJ / NEWOBJ reached on an imported callable (what runs code)


class _Machine:
    """The unpickler's stack, MARK levels and memo, with values only where the scan needs them
    (strings for STACK_GLOBAL, small ints / tuples / dicts for joblib's array headers)."""

    def __init__(self, reader: _Reader, found: dict, depth: int, stream: _Stream):
        self.reader, self.found, self.depth, self.s = reader, found, depth, stream
        self.stack: list = []
        self.meta: list[list] = []
        self.below = 0  # values held by the lists in meta
        self.memo: dict = {}
        self.memo_full = False
        self.started = False

    def pop(self, what: str):
        if not self.stack:
            raise _Bad(f"{what} finds the stack empty")
        return self.stack.pop()

    def top(self, what: str):
        if not self.stack:
            raise _Bad(f"{what} finds the stack empty")
        return self.stack[-1]

    def pop_mark(self, what: str) -> list:
        if not self.meta:
            raise _Bad(f"{what} without a MARK")
        items, self.stack = self.stack, self.meta.pop()
        self.below -= len(self.stack)
        return items

    def run(self, need_proto: bool) -> None:
        self.started = False
        budget = self.reader.budget
        while True:
            wrapper = None
            for op, arg, pos in pickletools.genops(self.reader):
                name = op.name
                budget.opcodes -= 1
                if budget.opcodes < 0:
                    raise _Limit(budget.opcodes_spent)
                if not self.started:
                    if name != "PROTO" and need_proto:
                        raise _NotStarted
                    self.started = True
                if name == "PROTO" and self.s.protocol is None:
                    self.s.protocol = arg
                push = self.stack.append
                if name in _VALUE_OPS:
                    push(arg)
                elif name in _CONSTANTS:
                    push(_CONSTANTS[name])
                elif name == "EMPTY_LIST":
                    push([])
                elif name == "EMPTY_DICT":
                    push({})
                elif name in _OPAQUE:
                    if name.startswith("EXT"):
                        self.s.unresolved += 1  # the copyreg extension registry picks the callable
                    push(UNKNOWN)
                elif name == "MARK":
                    self.meta.append(self.stack)
                    self.below += len(self.stack)
                    self.stack = []
                elif name in _PUT:
                    value = self.top(name)
                    key = len(self.memo) if name == "MEMOIZE" else arg
                    if key in self.memo or len(self.memo) < MAX_MEMO:
                        self.memo[key] = value
                    else:
                        self.memo_full = True
                elif name in _GET:
                    if arg in self.memo:
                        push(self.memo[arg])
                    elif self.memo_full:
                        push(UNKNOWN)
                    else:
                        raise _Bad(f"{name} {arg} at byte {pos} reads a memo entry never written")
                elif name in ("GLOBAL", "INST"):
                    module, _, attr = arg.partition(" ")
                    self.found.setdefault(f"{module} {attr}")
                    target = _Global(module, attr)
                    if name == "INST":
                        target = _Obj(target, _small(tuple, self.pop_mark(name)))
                        self.s.calls += 1
                    self.stack.append(target)
                elif name == "STACK_GLOBAL":
                    attr, module = self.pop(name), self.pop(name)
                    if isinstance(module, str) and isinstance(attr, str):
                        self.found.setdefault(f"{module} {attr}")
                        push(_Global(module, attr))
                    else:
                        self.s.unresolved += 1
                        push(UNKNOWN)
                else:
                    wrapper = self.structure(name, pos)
                    if name == "STOP":
                        return
                    if wrapper is not None:
                        break
                if len(self.stack) + self.below > MAX_STACK:
                    raise _Limit(f"more than {MAX_STACK} values on the pickle stack at byte {pos}")
            else:  # genops raises before it runs out; kept for safety
                raise _Bad("the opcode stream ends without STOP")
            self.skip_array(wrapper)
            need_proto = False

    def structure(self, name: str, pos: int):
        """Opcodes that build containers and objects; returns a joblib array wrapper just built."""
        stack = self.stack
        if name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            if len(stack) < n:
                raise _Bad(f"{name} at byte {pos} finds the stack too short")
            items = tuple(stack[-n:])
            del stack[-n:]
            stack.append(items)
        elif name in ("TUPLE", "LIST", "FROZENSET"):
            items = self.pop_mark(name)
            kind = tuple if name == "TUPLE" else list
            self.stack.append(UNKNOWN if name == "FROZENSET" else _small(kind, items))
        elif name == "DICT":
            items = self.pop_mark(name)
            d: dict = {}
            _update(d, items)
            self.stack.append(d)
        elif name == "APPEND":
            value = self.pop(name)
            target = self.top(name)
            if isinstance(target, list) and len(target) < _KEEP:
                target.append(value)
        elif name in ("APPENDS", "SETITEMS", "ADDITEMS"):
            items = self.pop_mark(name)
            target = self.top(name)
            if name == "APPENDS" and isinstance(target, list):
                target.extend(items[: max(0, _KEEP - len(target))])
            elif name == "SETITEMS" and isinstance(target, dict):
                _update(target, items)
        elif name == "SETITEM":
            value, key = self.pop(name), self.pop(name)
            target = self.top(name)
            if isinstance(target, dict):
                _update(target, [key, value])
        elif name == "POP":
            if stack:
                stack.pop()
            else:
                self.pop_mark(name)  # what the unpickler does with a POP right after a MARK
        elif name == "POP_MARK":
            self.pop_mark(name)
        elif name == "DUP":
            stack.append(self.top(name))
        elif name == "REDUCE":
            args, func = self.pop(name), self.pop(name)
            self.s.calls += isinstance(func, (_Global, _Obj))
            stack.append(_reduce(func, args))
        elif name in ("NEWOBJ", "NEWOBJ_EX"):
            if name == "NEWOBJ_EX":
                self.pop(name)
            args, cls = self.pop(name), self.pop(name)
            self.s.calls += isinstance(cls, (_Global, _Obj))
            stack.append(_Obj(cls, args))
        elif name == "OBJ":
            items = self.pop_mark(name)
            if not items:
                raise _Bad(f"OBJ at byte {pos} has no class")
            self.s.calls += isinstance(items[0], (_Global, _Obj))
            self.stack.append(_Obj(items[0], _small(tuple, items[1:])))
        elif name == "BUILD":
            state = self.pop(name)
            obj = self.top(name)
            if isinstance(obj, _Obj):
                obj.state = state
                if _is_array_wrapper(obj):
                    return obj
        elif name == "BINPERSID":
            self.pop(name)
            stack.append(UNKNOWN)  # the loader's persistent_load (torch: a storage)
        elif name == "READONLY_BUFFER":
            self.top(name)
        elif name in ("PROTO", "FRAME"):
            pass
        elif name == "STOP":
            self.s.value = self.pop(name)
            self.s.complete = True
            self.s.clean = not self.stack and not self.meta
        else:
            raise _Bad(f"opcode {name} at byte {pos} is not understood by this scan")
        return None

    def skip_array(self, wrapper: _Obj) -> None:
        """Step over the bytes joblib wrote after an array wrapper: the raw array (behind one
        padding-length byte when the header says so), or, for an object array, a pickle of
        its own (read like any other)."""
        state = wrapper.state if isinstance(wrapper.state, dict) else {}
        where = self.reader.tell()
        size = _dtype_size(state.get("dtype"))
        if size is not None and size[1]:
            if self.depth + 1 >= MAX_DEPTH:
                raise _Limit(f"joblib object arrays nested deeper than {MAX_DEPTH}")
            inner = _walk(self.reader, self.found, self.depth + 1)
            self.s.unresolved += inner.unresolved
            if inner.limit:
                raise _Limit(inner.limit)
            if not inner.complete:
                self.s.eof = inner.eof
                raise _Bad(f"the object array pickled at byte {where} {inner.error}")
            self.s.arrays += 1
            return
        shape = state.get("shape")
        if size is None or not (isinstance(shape, tuple) and all(_is_count(n) for n in shape)):
            raise _Limit(f"a joblib array at byte {where} whose size its header does not give")
        count = 1
        for n in shape:
            count *= n
        pad = 0
        if state.get("numpy_array_alignment_bytes") is not None:
            byte = self.reader.read(1)
            if not byte:
                self.s.eof = True
                raise _Bad(f"ends inside the joblib array at byte {where}")
            pad = byte[0]
        if not self.reader.skip(pad + count * size[0]):
            self.s.eof = True
            raise _Bad(f"ends inside the joblib array at byte {where}")
        self.s.arrays += 1


def _small(kind, items):
    return kind(items) if len(items) <= _KEEP else UNKNOWN


def _update(d: dict, items: list) -> None:
    for i in range(0, len(items) - 1, 2):
        if len(d) >= _KEEP:
            return
        try:
            d[items[i]] = items[i + 1]
        except TypeError:  # an unhashable key the scan does not follow
            pass


def _reduce(func, args):
    # protocol 0/1 rebuild a plain object with copyreg._reconstructor(cls, base, state)
    if (
        isinstance(func, _Global)
        and func.name == "_reconstructor"
        and func.module in ("copyreg", "copy_reg")
        and isinstance(args, tuple)
        and args
        and isinstance(args[0], _Global)
    ):
        return _Obj(args[0], ())
    return _Obj(func, args)


def _is_array_wrapper(obj: _Obj) -> bool:
    cls = obj.cls
    if not isinstance(cls, _Global):
        return False
    return cls.name == "NumpyArrayWrapper" and cls.module.endswith("joblib.numpy_pickle")


def _is_count(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0


def _dtype_size(dtype) -> tuple[int, bool] | None:
    """(itemsize, holds objects) of a pickled ``numpy.dtype(code, False, True)`` plus its
    BUILD state ``(version, byteorder, subarray, names, fields, elsize, alignment, flags)``."""
    if not (isinstance(dtype, _Obj) and isinstance(dtype.cls, _Global) and dtype.cls.name == "dtype"):
        return None
    if dtype.cls.module.split(".")[0] != "numpy" or not isinstance(dtype.args, tuple) or not dtype.args:
        return None
    code = dtype.args[0]
    if not isinstance(code, str) or not code:
        return None
    state = dtype.state if isinstance(dtype.state, tuple) else ()
    flags = state[7] if len(state) > 7 and _is_count(state[7]) else 0
    if code[0] == "O" or flags & 1:  # NPY_ITEM_REFCOUNT: the dtype holds Python objects
        return 8, True
    if len(state) > 5 and _is_count(state[5]) and state[5] > 0:
        return state[5], False
    digits = code.lstrip("<>|=!")[1:]
    return (int(digits), False) if digits.isdigit() and int(digits) > 0 else None


def _walk(reader: _Reader, found: dict, depth: int = 0, *, need_proto: bool = False) -> _Stream:
    """One pickle stream from the reader's position."""
    s = _Stream()
    machine = _Machine(reader, found, depth, s)
    try:
        machine.run(need_proto)
    except _NotStarted:
        raise
    except _Limit as exc:
        s.limit = str(exc)
    except _Bad as exc:
        s.error = str(exc)
    except Exception as exc:  # genops raises ValueError, EOFError, UnicodeDecodeError; gzip OSError …
        if need_proto and not machine.started:
            raise _NotStarted from None
        pos = _tell(reader)
        s.eof = not str(exc).endswith(" unknown") and _at_end(reader)  # genops: "opcode b'\\xff' unknown"
        s.error = (
            f"ends at byte {pos} before its STOP opcode"
            if s.eof
            else (f"breaks at byte {pos}: {type(exc).__name__}: {exc}")
        )
    if s.error and reader.exhausted:
        s.limit, s.error = "stream larger than the scan limit", None
    return s


def _tell(reader: _Reader) -> int | str:
    try:
        return reader.tell()
    except Exception:  # a decompressing file that has failed
        return "?"


def _at_end(reader: _Reader) -> bool:
    """Whether a failed walk ran out of data (a truncated pickle) rather than hit a bad opcode."""
    try:
        return not reader.exhausted and reader.f.read(1) == b""
    except Exception:
        return False


# ---- streams, containers, files ------------------------------------------------------------


def _ran_a_call(st: _Stream, found: dict) -> bool:
    """A stream with neither PROTO nor STOP that still got as far as calling something it
    imported under a real dotted name: pickle.load runs that call before it fails."""
    return bool(st.calls) and any(_dotted(q) for q in found)


def _dotted(q: str) -> bool:
    module, _, name = q.partition(" ")
    return all(part.isidentifier() for part in module.split(".") + name.split("."))


def _streams(reader: _Reader, scan: PickleScan, where: str, expected: bool, depth: int) -> None:
    """Back-to-back pickle streams from the reader's position (``pickle.load`` called until
    the data ends; legacy torch.save writes five before its raw storage bytes). The first
    stream counts even when it breaks off if the name or the container promises a pickle
    (the unpickler runs each opcode as it reads it, so a truncated malicious stream still
    executes), when it starts with PROTO and imports something, or when it reached a call on
    an import (:func:`_ran_a_call`); a later one only when it starts with PROTO and gets as far
    as an import. Otherwise only complete streams count, so binary data is not mistaken for a
    pickle."""
    legacy = None  # streams left of a legacy torch checkpoint
    while legacy != 0:
        first = scan.streams == 0
        found: dict = {}
        reader.start_stream()
        try:
            st = _walk(reader, found, depth, need_proto=not first)
        except _NotStarted:
            return  # raw data follows the pickles
        trusted = st.complete or bool(found and (st.protocol is not None or expected)) or (first and expected)
        trusted = trusted or _ran_a_call(st, found)
        if st.limit and (found or (first and (st.protocol is not None or expected))):
            trusted = True
        if not trusted or (st.protocol is None and not expected and not found):
            return  # (the latter: "Git v2.31.7 ..." is a float and a STOP; it can run nothing)
        for q in found:
            if q not in scan.imports:
                scan.imports.append(q)
        scan.unresolved += st.unresolved
        label = where + ("pickle protocol 0/1" if st.protocol is None else f"pickle protocol {st.protocol}")
        if label not in scan.found_in:
            scan.found_in.append(label)
        if not st.complete:
            if st.limit:
                scan._stop("limit", f"{label}: {st.limit}")
            else:
                scan._stop("error", f"{label}: {st.error}")
            return
        scan.streams += 1
        if legacy is None:
            legacy = 4 if first and st.value == _TORCH_LEGACY_MAGIC else -1
        elif legacy > 0:
            legacy -= 1


_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x5d\x00\x00", "lzma"),
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),
    (b"\x93NUMPY", "npy"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"ZF0x", "joblib-zf"),
)
_UNREAD = {
    "lz4": "lz4-compressed (the standard library has no lz4 decoder)",
    "joblib-zf": "joblib's pre-0.10 'ZF' compressed format",
}


def sniff(head: bytes, *, more: bool = False, text: bool = True) -> str | None:
    """What the first bytes of a file say it is: "pickle", a compressor ("gzip", "bz2", "xz",
    "lzma", "zlib"), "zip", "npy", an unread format ("lz4", "joblib-zf"), or None. A protocol
    0/1 pickle has no magic: with ``text`` the head is walked as opcodes and counts when it
    reaches a clean STOP, is still a valid prefix where it ends and ``more`` follows, or breaks
    only after calling something it imported."""
    if len(head) >= 2 and head[0] == 0x80 and head[1] <= 5:
        return "pickle"
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if len(head) >= 2 and head[0] == 0x78 and ((head[0] << 8) | head[1]) % 31 == 0:
        return "zlib"  # RFC 1950 header; only counts if what it inflates to is a pickle
    if text and head[:1] in _STARTERS:
        reader = _Reader(io.BytesIO(head), _Budget(), size=len(head))
        reader.start_stream()
        found: dict = {}
        st = _walk(reader, found)
        if (st.complete and st.clean) or (st.eof and more) or _ran_a_call(st, found):
            return "pickle"
    return None


class _Context:
    def __init__(self, scan: PickleScan, run: RunBudget | None = None):
        self.scan, self.budget = scan, _Budget(run)


def _scan_source(
    f,
    size,
    ctx: _Context,
    where: str,
    expected: bool,
    depth: int,
    *,
    cheap_seek: bool = True,
    cut: bool = False,
    head_size: int = SNIFF_BYTES,
) -> None:
    """A seekable binary file object at position 0: sniff it, then read it as what it is."""
    head = f.read(head_size)
    f.seek(0)
    kind = sniff(head, more=size is None or size > len(head))
    if kind is None and not expected:
        return
    if kind in _UNREAD:
        if expected:
            ctx.scan._stop("limit", f"{where}{_UNREAD[kind]}")
        return
    if kind not in (None, "pickle") and depth >= MAX_DEPTH:
        ctx.scan._stop("limit", f"{where}{kind}: containers nested deeper than {MAX_DEPTH}")
        return
    if kind in ("gzip", "bz2", "xz", "lzma"):
        _scan_compressed(f, kind, ctx, where, expected, depth)
    elif kind == "zlib":
        _scan_zlib(f, ctx, where, expected, depth)
    elif kind == "zip":
        _scan_zip(f, ctx, where, depth, in_memory=depth > 0)
    elif kind == "npy":
        _scan_npy(f, size, head, ctx, where, depth, cheap_seek=cheap_seek, cut=cut)
    else:
        reader = _Reader(f, ctx.budget, size=size, cheap_seek=cheap_seek, cut=cut)
        _streams(reader, ctx.scan, where, expected, depth)


def _scan_compressed(f, kind: str, ctx: _Context, where: str, expected: bool, depth: int) -> None:
    import bz2
    import gzip
    import lzma

    opener = {
        "gzip": lambda: gzip.GzipFile(fileobj=f, mode="rb"),
        "bz2": lambda: bz2.BZ2File(f),
        "xz": lambda: lzma.LZMAFile(f),
        "lzma": lambda: lzma.LZMAFile(f),
    }[kind]
    try:
        with opener() as inner:
            _scan_source(inner, None, ctx, f"{where}{kind} > ", expected, depth + 1, cheap_seek=False)
    except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
        if expected:
            ctx.scan._stop("error", f"{where}{kind}: {type(exc).__name__}: {exc}")


def _scan_zlib(f, ctx: _Context, where: str, expected: bool, depth: int) -> None:
    """joblib's zlib files are one raw zlib stream (the stdlib has no file object for it):
    the first block is inflated and sniffed; only a pickle (or a name that promises one) is
    inflated further, in memory, at most one stream's worth."""
    cap = min(MAX_STREAM_BYTES, ctx.budget.left)
    d = zlib.decompressobj()
    out: list[bytes] = []
    n = 0
    sniffed = expected
    try:
        while n <= cap and not d.eof:
            chunk = d.unconsumed_tail or f.read(1 << 16)
            if not chunk:
                break
            piece = d.decompress(chunk, min(cap + 1, max(SNIFF_BYTES, 2 * n)) - n)  # never 0 (unbounded)
            out.append(piece)
            n += len(piece)
            if not sniffed and n:
                sniffed = True
                if sniff(piece[:SNIFF_BYTES], more=True) is None:
                    return  # the two bytes only looked like a zlib header, or it holds no pickle
    except zlib.error:
        if not out:
            return
    ctx.budget.left -= min(n, cap)
    data = b"".join(out)[:cap]
    _scan_source(io.BytesIO(data), len(data), ctx, f"{where}zlib > ", expected, depth + 1, cut=n > cap)


def _scan_npy(
    f, size, head: bytes, ctx: _Context, where: str, depth: int, *, cheap_seek: bool, cut: bool
) -> None:
    """A .npy file: magic, version, header length, then a Python literal dict. With an object
    dtype (``'|O'``, or a structured dtype with an object field) the payload is a pickle that
    ``np.load(allow_pickle=True)`` unpickles."""
    if len(head) < 10 or head[6] not in (1, 2, 3):
        return
    wide = head[6] > 1
    if wide and len(head) < 12:
        return
    length = struct.unpack("<I", head[8:12])[0] if wide else struct.unpack("<H", head[8:10])[0]
    start = 12 if wide else 10
    if length > MAX_NPY_HEADER:
        ctx.scan._stop("limit", f"{where}npy header of {length} bytes")
        return
    raw = head[start : start + length]
    if len(raw) < length:
        f.seek(start)
        raw = f.read(length)
    header = _npy_header(raw, head[6])
    if not isinstance(header, dict) or not _descr_has_object(header.get("descr")):
        return  # np.load refuses the header, or the array holds no objects
    f.seek(start + length)
    reader = _Reader(f, ctx.budget, size=size, cheap_seek=cheap_seek, cut=cut)
    _streams(reader, ctx.scan, f"{where}npy object array > ", True, depth + 1)


def _npy_header(raw: bytes, major: int):
    """The header dict as np.load reads it: a Python literal; for format 1 and 2 files written
    by Python 2, integers may carry an ``L`` suffix, which np.load drops and so does this."""
    try:
        text = raw.decode("utf-8" if major == 3 else "latin-1")
        try:
            return ast.literal_eval(text)
        except SyntaxError:
            if major > 2:
                return None
            return ast.literal_eval(_drop_long_suffix(text))
    except (
        Exception
    ):  # SyntaxError, ValueError, tokenize.TokenError, RecursionError …: np.load refuses it too
        return None


def _drop_long_suffix(text: str) -> str:
    import tokenize

    kept, after_number = [], False
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if not (after_number and tok.type == tokenize.NAME and tok.string == "L"):
            kept.append(tok)
        after_number = tok.type == tokenize.NUMBER
    return tokenize.untokenize(kept)


def _descr_has_object(descr) -> bool:
    """Whether np.load would unpickle an array of this ``descr``. numpy itself decides when it
    is importable ('object', 'O8', a structured dtype with an object field …); without numpy
    np.load cannot run, and a plain reading of the descr decides."""
    try:
        from numpy.lib.format import descr_to_dtype
    except Exception:  # not installed, or an install that fails to import
        return _descr_names_object(descr)
    try:
        return bool(descr_to_dtype(descr).hasobject)
    except Exception:  # np.load refuses a descr numpy cannot read
        return False


def _descr_names_object(descr, depth: int = 0) -> bool:
    if isinstance(descr, str):
        code = descr.lstrip("<>|=!")
        return code[:1] == "O" or code.lower().startswith("object")
    if isinstance(descr, (list, tuple)) and depth < 32:
        return any(
            isinstance(field_, (list, tuple))
            and len(field_) >= 2
            and _descr_names_object(field_[1], depth + 1)
            for field_ in descr
        )
    return False


def _zip_members(f) -> int | None:
    """How many members a zip's end-of-central-directory record announces (zip64 too), read
    before zipfile loads the whole directory into memory; None when it cannot be found."""
    f.seek(0, os.SEEK_END)
    end = f.tell()
    tail_start = max(0, end - (1 << 16) - 22)
    f.seek(tail_start)
    tail = f.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) < at + 22:
        return None
    entries = struct.unpack("<H", tail[at + 10 : at + 12])[0]
    if entries == 0xFFFF and at >= 20 and tail[at - 20 : at - 16] == b"PK\x06\x07":
        offset = struct.unpack("<Q", tail[at - 12 : at - 4])[0]
        f.seek(offset)
        record = f.read(56)
        if record[:4] == b"PK\x06\x06" and len(record) == 56:
            entries = struct.unpack("<Q", record[32:40])[0]
    return entries


def _scan_zip(f, ctx: _Context, where: str, depth: int, *, in_memory: bool) -> None:
    """Every member of a zip archive: ``*.pkl`` (torch's data.pkl) and other pickle names are
    read as pickles, ``*.npy`` (an .npz) as npy files, anything else by its magic bytes."""
    if in_memory:  # a zip inside another container: zipfile seeks about, so hold it in memory
        cap = min(MAX_STREAM_BYTES, ctx.budget.left)
        data = f.read(cap + 1)
        if len(data) > cap:
            ctx.scan._stop("limit", f"{where}zip larger than the scan limit")
            return
        ctx.budget.left -= len(data)
        f = io.BytesIO(data)
    try:
        members = _zip_members(f)
        f.seek(0)
        if members is not None and members > ctx.budget.members:
            ctx.scan._stop("limit", f"{where}zip lists {members} members (limit {ctx.budget.members})")
            return
        archive = zipfile.ZipFile(f)
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, struct.error, NotImplementedError):
        return  # not an archive torch.load or np.load would open
    for info in infos:
        if info.is_dir():
            continue
        if ctx.budget.members <= 0:
            ctx.scan._stop("limit", f"{where}more than {MAX_MEMBERS} archive members")
            return
        ctx.budget.members -= 1
        name = info.filename
        expected = expected_by_name(name)
        # a member nothing promises is sniffed from its first bytes only (torch's raw storages)
        head_size = SNIFF_BYTES if expected or name.lower().endswith(".npy") else 64
        try:
            with archive.open(info) as member:
                _scan_source(
                    member,
                    info.file_size,
                    ctx,
                    f"{where}{name} > ",
                    expected,
                    depth + 1,
                    cheap_seek=info.compress_type == zipfile.ZIP_STORED,
                    head_size=head_size,
                )
        except (
            zipfile.BadZipFile,
            RuntimeError,
            NotImplementedError,
            OSError,
            EOFError,
            zlib.error,
            ValueError,
        ) as exc:
            # zipfile refuses it (encrypted, a local header that disagrees with the directory …);
            # torch's own zip reader may not, so a member that promises a pickle is not checked
            if expected or head_size == SNIFF_BYTES:
                ctx.scan._stop("limit", f"{where}{name}: not read ({type(exc).__name__}: {exc})")


def scan_bytes(data: bytes, *, pickle_expected: bool = False, truncated: bool = False) -> PickleScan:
    """Pickle streams at the start of ``data`` (see :func:`_streams`); ``truncated``: ``data``
    was cut at a limit, so a stream that runs out is reported as not checked, not as broken."""
    scan = PickleScan()
    reader = _Reader(io.BytesIO(data), _Budget(), size=len(data), cut=truncated)
    _streams(reader, scan, "", pickle_expected, 0)
    return scan


def scan_file(path: str, *, pickle_expected: bool = False, run: RunBudget | None = None) -> PickleScan:
    """A file, whatever its name: a pickle, a compressed pickle, a zip archive of pickles or
    .npy files, an object-array .npy — or none of these (an empty scan). ``run``: the budget
    of the whole scan this file is part of, charged with what reading it costs."""
    scan = PickleScan()
    if run is not None and run.spent():
        what = f"{MAX_RUN_BYTES >> 30} GiB" if run.left <= 0 else f"{MAX_RUN_OPCODES} opcodes"
        scan._stop("limit", f"not read: this scan's budget for pickles ({what}) is spent")
        return scan
    ctx = _Context(scan, run)
    left, opcodes = ctx.budget.left, ctx.budget.opcodes
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            _scan_source(fh, size, ctx, "", pickle_expected, 0)
    except OSError as exc:
        scan._stop("error", f"unreadable: {exc}")
    except (MemoryError, RecursionError) as exc:  # a hostile file must not end the whole scan
        scan._stop("limit", f"{type(exc).__name__} while reading it")
    if run is not None:
        run.left -= left - ctx.budget.left
        run.opcodes -= opcodes - max(0, ctx.budget.opcodes)
    return scan
