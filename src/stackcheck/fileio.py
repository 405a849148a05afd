"""Reading contracts from files with one-line errors, and writing files atomically.

Every command that reads a user's file goes through :func:`load_json`, so a malformed
profile, a truncated snapshot and binary garbage all fail the same way: ``InputError`` naming
the file, the line (or JSON path) and what was expected. Writes go through
:func:`atomic_write` so an interrupted write never leaves a partial file behind.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, TypeVar

from stackcheck.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path  # imported where used: a warm preflight reads STDIN, never loads pathlib

T = TypeVar("T")

_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)")


STDIN = "-"  # a path that means standard input, wherever a command reads a file


def nearest_above(relative: str, cwd: str | os.PathLike | None, test) -> str | None:
    """``relative`` below the nearest directory at or above ``cwd`` (default: the working
    directory; symlinks resolved) where ``test(path)`` holds, e.g. ``os.path.isfile``; else None."""
    folder = os.path.realpath(cwd or os.getcwd())
    while True:
        candidate = os.path.join(folder, relative)
        if test(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def json_files(directory: str | os.PathLike) -> list[str]:
    """The ``*.json`` entries of ``directory`` (what ``Path.glob("*.json")`` finds, dot files
    too), sorted; none when it cannot be listed."""
    try:
        return sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return []


def source_name(path: str | os.PathLike) -> str:
    """How messages name what was read: ``<stdin>`` for ``-``, else the path."""
    return "<stdin>" if str(path) == STDIN else str(path)


# The largest contract file (snapshot, profile registry, record, lock, report …) read whole.
# The biggest real ones are a few MiB (a snapshot of 5,000 distributions); logs are streamed.
MAX_INPUT_BYTES = 256 * 1024 * 1024


def read_bytes(path: str | os.PathLike, what: str = "file", *, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The content of ``path`` (``-``: standard input), or a one-line InputError. Memory is
    bounded: more than ``limit`` bytes is an error, found before reading when the size is known."""
    if str(path) == STDIN:
        import sys

        return _within(sys.stdin.buffer.read(limit + 1), limit, "<stdin>", what)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limit:
                raise InputError(f"{path}: {size} bytes, larger than the {limit}-byte limit for {_a(what)}")
            return _within(fh.read(limit + 1), limit, str(path), what)  # a FIFO has no size
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected {_a(what)}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None


def _within(data: bytes, limit: int, name: str, what: str) -> bytes:
    if len(data) > limit:
        raise InputError(f"{name}: more than the {limit}-byte limit for {_a(what)}")
    return data


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{source_name(path)}: line {line}: not UTF-8 text (expected {_a(what)})") from None


def _line_of(data: bytes, message: str) -> str:
    m = _BYTE_OFFSET.search(message)
    if not m:
        return ""
    offset = int(m.group(1))
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line} col {col}: "


def decode_json(data: bytes, model: type[T], source: str, what: str) -> T:
    """Decode and validate ``data`` as ``model``; errors name ``source`` and the field."""
    import msgspec

    if not data.strip():
        raise InputError(f"{source}: empty file, expected {_a(what)} (JSON)")
    try:
        return msgspec.json.decode(data, type=model)
    except msgspec.ValidationError as exc:
        msg = str(exc)
        # msgspec: "Expected `str`, got `int` - at `$.profiles[0].id`"
        #       → "profiles[0].id: expected str, got int"
        if " - at `$" in msg:
            text, _, where = msg.partition(" - at `$")
            where = where.rstrip("`").lstrip(".") or "(top level)"
            raise InputError(f"{source}: {where}: {text[0].lower() + text[1:]} (in {_a(what)})") from None
        raise InputError(f"{source}: {msg} (in {_a(what)})") from None
    except RecursionError:  # msgspec's decoder recurses per nesting level ([[[[…, {"a":{"a":…)
        raise InputError(
            f"{source}: JSON nested too deeply (hundreds of levels), expected {_a(what)}"
        ) from None
    except msgspec.DecodeError as exc:
        msg = str(exc)
        if "truncated" in msg.lower():
            raise InputError(f"{source}: truncated JSON, expected a complete {what}") from None
        if (start := _text_start(data, msg)) is not None:  # a log or a note, not JSON at all
            raise InputError(f"{source}: not JSON: starts with {start!r}, expected {_a(what)}") from None
        where = _line_of(data, msg)
        raise InputError(f"{source}: {where}malformed JSON ({msg}), expected {_a(what)}") from None


def _text_start(data: bytes, message: str) -> str | None:
    """The first words of ``data`` when JSON fails at its very first character and that
    character begins readable text ("INFO: …"), else None (binary, or JSON gone wrong later)."""
    m = _BYTE_OFFSET.search(message)
    head = data.lstrip()
    if m is None or int(m.group(1)) != len(data) - len(head):
        return None
    line = head[:64].split(b"\n", 1)[0].decode("utf-8", "replace").rstrip()
    if not line or not line.isprintable() or "\ufffd" in line:
        return None
    if len(line) <= 16:
        return line
    cut = line[:16].rsplit(" ", 1)[0] if " " in line[5:16] else line[:16]
    return cut + "…"


def _a(noun: str) -> str:
    """``a snapshot``, ``an ignore file``: the article a message needs before ``noun``."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def load_json(path: str | os.PathLike, model: type[T], what: str) -> T:
    """``path`` (``-``: standard input) decoded and validated as ``model``."""
    return decode_json(read_bytes(path, what), model, source_name(path), what)


def load_json_any(path: str | os.PathLike, what: str) -> Any:
    """Untyped JSON (for files whose shape is checked afterwards)."""
    return load_json(path, Any, what)


def cannot_write(path: str | os.PathLike, what: str, exc: OSError) -> InputError:
    """The one-line error for a failed write of ``path``: a file standing where a directory
    of the path should be is named (the OS says only "File exists" / "Not a directory")."""
    from pathlib import Path

    for parent in Path(path).parents:
        if parent.exists():
            if not parent.is_dir():
                return InputError(f"{path}: cannot write {what}: {parent} is a file, not a directory")
            break
    return InputError(f"{path}: cannot write {what}: {exc.strerror or exc}")


def atomic_write(
    path: str | os.PathLike,
    data: bytes | str,
    *,
    exclusive: bool = False,
    shared: bool = False,
    durable: bool = True,
) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same directory, fsync, then
    rename. With ``exclusive`` the target must not exist (``FileExistsError`` otherwise), and
    the final step is a hard link, so a concurrent writer can never be overwritten. ``shared``:
    readable by others as a plain new file would be (0666 less the umask; default 0600).
    ``durable=False`` skips the fsync (still never a partial file) for a file that is read at
    once and worth nothing after a crash (an installer's input inside what it installs)."""
    from pathlib import Path

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    import tempfile  # here: its import (shutil, random) is on the path of every command that reads

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if shared:
                mask = os.umask(0)
                os.umask(mask)
                os.fchmod(fh.fileno(), 0o666 & ~mask)
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        if exclusive:
            os.link(tmp, target)  # atomic, fails if target exists
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk on write/fsync names no file
            exc.filename = str(target)
        raise
    return target


def require_creatable_dir(path: str | os.PathLike, what: str) -> None:
    """``InputError`` unless ``path`` is a directory or can be made one: neither it nor a
    directory above it is a file (``mkdir`` would fail with FileExistsError / NotADirectoryError)."""
    from pathlib import Path

    given = Path(path)
    for candidate in (given, *given.parents):
        if not os.path.lexists(candidate):
            continue
        if os.path.isdir(candidate):
            return
        if candidate == given:
            raise InputError(f"{given}: exists and is not a directory (expected {what})")
        raise InputError(f"{given}: {candidate} is a file, not a directory (expected {what})")
