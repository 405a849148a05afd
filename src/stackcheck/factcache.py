"""The fact cache: facts that are costly to derive and cheap to recognise, kept between runs.

One concept: a JSON file under the cache directory holding facts together with the *key*
they were derived under, a fingerprint of everything they depend on (dist-info stats for the
probe's metadata scan; a digest of the distribution set, the marker environment and the
deriving code for the dependency graph; a compiler binary's stat for toolchain facts). A
reader that brings another key gets nothing and derives the facts again, so a changed input
is never served an old answer. A file that is missing, unreadable, corrupt, of another shape,
too large, not a regular file or owned by someone else is ignored the same way: never an
error, a cache that cannot be read or written is only slower. Files are written atomically
(a temporary file, then a rename) and only their owner may read them (0600, directories
0700): they hold names, paths and requirement texts of the environment, already redacted.

Where: the directory :func:`stackcheck.cachedir.cache_root` names (``$STACKCHECK_CACHE_DIR``,
else ``$XDG_CACHE_HOME/stackcheck``, ``%LOCALAPPDATA%\\stackcheck``, ``~/.cache/stackcheck``),
given by the caller as ``root``;
None there (``STACKCHECK_NO_CACHE=1``, the commands' ``--no-cache``) is a miss and no write.

Standard library only and Python 3.8 compatible: the interpreter probe loads this file by
path inside other interpreters (``--python``), where stackcheck is not importable. ``json`` is
imported where used, and blake2b comes from CPython's ``_blake2`` rather than ``hashlib`` (which
loads OpenSSL): a stored answer (:mod:`stackcheck.cli.answers`) is read through
:func:`read_bytes` before either is needed (together ≈ 3-5 ms, a third of its run).
"""

from __future__ import annotations

import os
import stat

__all__ = ["FORMAT", "MAX_BYTES", "digest", "file_stamps", "load", "read_bytes", "store", "write_bytes"]

FORMAT = 1  # the shape of a cache file; another number is a foreign file
MAX_BYTES = 256 << 20  # a larger cache file is ignored (5,000 distributions: ~3 MiB)


def digest(*parts):
    """A short hex fingerprint of ``parts`` (bytes and str as they are, anything else as its
    sorted JSON); each part is length-prefixed, so ("ab", "c") and ("a", "bc") differ."""
    import json

    h = _blake2b(digest_size=16)
    for part in parts:
        if isinstance(part, str):
            part = part.encode("utf-8", "surrogatepass")
        elif not isinstance(part, bytes):
            part = json.dumps(part, sort_keys=True, separators=(",", ":")).encode("utf-8", "surrogatepass")
        h.update(b"%d:" % len(part))
        h.update(part)
    return h.hexdigest()


def _blake2b(**kwargs):
    """hashlib.blake2b, without hashlib where CPython has its own (``_blake2``, every build that
    ships blake2): importing hashlib loads OpenSSL's libcrypto, ≈ 2 ms of a warm preflight."""
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b(**kwargs)


RACY_NS = 2_000_000_000  # a file changed this recently may change again within its mtime's tick


def file_stamps(paths):
    """Each path with the stat of the file it names (path, mtime_ns, size, inode): what facts
    read from those files are kept under. None (derive afresh, keep nothing) when one cannot
    be stat'ed or changed in the last :data:`RACY_NS`: a same-size rewrite within one tick of
    the file system's clock would keep every one of those four."""
    import time

    out = []
    now = time.time_ns()
    for path in paths:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        if st.st_mtime_ns > now - RACY_NS:
            return None
        out.append([str(path), st.st_mtime_ns, st.st_size, st.st_ino])
    return out


def load(root, name, key, entries_type=None):
    """The facts stored in ``name`` (a path below the cache directory ``root``) when they were
    derived under ``key`` (any JSON value), else None. With ``entries_type`` (a msgspec type,
    outside the probe) they are decoded into it, their shape checked as they are read: a file
    of another shape is a miss like any other."""
    if root is None:
        return None
    data = read_bytes(os.path.join(root, name))
    if data is None:
        return None
    import json

    if entries_type is not None:
        return _typed(data, key, entries_type)
    try:
        found = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(found, dict) or found.get("stackcheck_cache") != FORMAT:
        return None
    if found.get("key") != json.loads(json.dumps(key)):  # compare as JSON sees it (tuples → lists)
        return None
    return found.get("entries")


def read_bytes(path, limit=None):
    """The bytes of a regular file of this user's, at most ``limit`` (default
    :data:`MAX_BYTES`); None otherwise (missing, larger, a symlink, a FIFO, a device, another
    user's). Never blocks and never follows a symlink."""
    limit = MAX_BYTES if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            return None  # another user's file in a shared cache directory: never trusted
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(limit + 1)
        return data if len(data) <= limit else None  # it grew since the fstat
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)


def _typed(data, key, entries_type):
    import json

    import msgspec

    try:
        envelope = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
        if msgspec.json.decode(envelope.get("stackcheck_cache", b"null")) != FORMAT:
            return None
        if msgspec.json.decode(envelope.get("key", b"null")) != json.loads(json.dumps(key)):
            return None
        return msgspec.json.decode(envelope["entries"], type=entries_type)
    except (KeyError, ValueError, RecursionError):  # msgspec's DecodeError is a ValueError
        return None


def store(root, name, key, facts):
    """Keep ``facts`` (JSON-able) in ``name`` below ``root`` under ``key``; True when written."""
    import io
    import json

    def fill(fh):
        text = io.TextIOWrapper(fh, encoding="utf-8")
        json.dump({"stackcheck_cache": FORMAT, "key": key, "entries": facts}, text, separators=(",", ":"))
        text.detach()

    return _write(root, name, fill)


def write_bytes(root, name, data):
    """Keep ``data`` in ``name`` below ``root``, as :func:`store` writes; True when written."""
    return _write(root, name, lambda fh: fh.write(data))


def _write(root, name, fill):
    """Write a file atomically (``fill`` writes to a temporary one, then a rename), readable by
    its owner only; False, never an error, when it cannot be written (or ``fill`` fails)."""
    if root is None:
        return False
    path = os.path.join(root, name)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)  # makedirs gives the mode to the leaf only
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)  # a stale temporary file keeps its old mode otherwise
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
        os.replace(tmp, path)
        return True
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
