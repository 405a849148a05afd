"""What a stored answer depends on. The start-up path keeps what ``deps conflicts`` and ``deps
tree`` (plain or ``--json``) wrote to stdout, with their exit code, under a fingerprint of
everything the answer depends on, and writes it back without probing anything while that
fingerprint still holds (:func:`stackcheck.cli.startup.stored_answer`); this module takes the
fingerprint.

A warm run with the fact cache (``docs/cache.md``) still starts the probe, which reads every
distribution's cached metadata: ≈ 3x the time of ``uv pip check``. What the answer depends on
is cheaper to recognise than that, with ``os.stat`` and ``os.listdir`` only:

- the command's arguments and every output setting: :func:`startup.output_key`, the key of the
  help cache (stackcheck's version, the interpreter, ``sys.path``, stdout's encoding and
  terminal-ness, width, colour and language variables);
- what the marker environment reads (:func:`settings`: the implementation, the kernel's
  name, release and machine) and the variables that move ``sys.path`` (``PYTHONPATH`` …);
- :func:`environment_stamp`: for every ``sys.path`` entry in order, its stat (adding,
  removing or renaming a package in it changes its mtime), and in it the stat of every
  ``.pth`` file and every ``.dist-info`` / ``.egg-info`` entry with the files the probe reads
  the answer from (METADATA, direct_url.json; PKG-INFO, requires.txt);
- the code: the stat of every module of stackcheck and msgspec that the recording run had
  loaded, and of those the dependency graph's key names (packaging's, found not imported).

Every stat is device, inode, size, mtime and ctime: a rewrite that puts size and mtime back
still moves the ctime. An answer is recorded only when the fingerprint taken after the run
equals the one taken before it (nothing changed while it ran) and no file in it changed within
:data:`RACY_NS` before the run (2 s on a file system whose times are whole seconds): a change
in the same clock tick as a stat could otherwise go unseen. The file (``<cache
dir>/answers/``) has the help cache's format and the fact cache's rules (0600, written
atomically; torn, foreign, oversized, a symlink, a FIFO or another user's: a miss).
``STACKCHECK_NO_CACHE=1`` (or any argument beyond these, ``--no-cache`` included: click's
path) neither reads nor writes one.
"""

from __future__ import annotations

import os
import stat
import sys

LIMIT = 64 << 20  # a larger answer is not kept (deps tree of 5,000 distributions: ~1 MiB)
RACY_NS = 50_000_000  # a file changed this shortly before a run is not trusted to a stat
COARSE_RACY_NS = 2_000_000_000  # the same where the file system keeps whole seconds (FAT, HFS+)
# the files of a metadata directory the probe reads name, version and requirements from
READ = {".dist-info": ("/METADATA", "/direct_url.json"), ".egg-info": ("/PKG-INFO", "/requires.txt")}
SYS_PATH_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONUSERBASE", "PYTHONSAFEPATH")


def applies() -> bool:
    """Whether an answer may be kept here: POSIX, and not the shielded case (``-E`` with
    PYTHONPATH set: the probe then asks a child interpreter, whose ``sys.path`` is not ours)."""
    return os.name == "posix" and not (sys.flags.ignore_environment and os.environ.get("PYTHONPATH"))


def deriving_files() -> tuple[str, ...]:
    """The files the dependency graph's key names (packaging's ``__init__`` among them, which a
    warm run never imports): part of the code an answer was written by."""
    from stackcheck.deps.graph import code_stamp

    return tuple(entry[0] for entry in code_stamp() if entry[0])


def environment_stamp() -> tuple[str, int]:
    """(fingerprint, newest ctime in it) of the distributions the probe would read: every
    ``sys.path`` entry in order and, in each directory, its ``.pth`` files and metadata
    entries with the files that hold their name, version and requirements. ``os.stat`` and
    ``os.listdir`` only; a path that cannot be stat'ed is part of the fingerprint as such."""
    out = []
    newest = 0
    for entry in sys.path:
        location = entry or os.getcwd()  # as the probe reads "" (python -c)
        facts = _stat(location)
        out.append(f"{location}\0{facts}")
        if not facts.startswith("d"):
            continue
        newest = max(newest, _ctime(facts))
        try:
            names = sorted(n for n in os.listdir(location) if n.endswith((".dist-info", ".egg-info", ".pth")))
        except OSError as exc:
            out.append(f"unlistable {exc.errno}")
            continue
        for name in names:
            where = os.path.join(location, name)
            suffix = name[name.rfind(".") :]  # .dist-info, .egg-info or .pth (nothing in READ)
            files = [where, *(where + f for f in READ.get(suffix, ()))]
            stats = [_stat(f) for f in files]
            out.append(name + "\0" + "\0".join(stats))
            newest = max(newest, *map(_ctime, stats))
    return "\n".join(out), newest


def _stat(path: str) -> str:
    """``d`` (directory) or ``f`` and device, inode, size, mtime, ctime; ``-`` and the errno when
    there is none."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"- {exc.errno}"
    kind = "d" if stat.S_ISDIR(st.st_mode) else "f"
    return f"{kind} {st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"


def _ctime(facts: str) -> int:
    return int(facts.rsplit(" ", 1)[1]) if not facts.startswith("-") else 0


def racy(newest: int, started: int) -> bool:
    """Whether a file changed too shortly before the run for its stat to be trusted."""
    window = COARSE_RACY_NS if newest % 1_000_000_000 == 0 else RACY_NS
    return newest > started - window


def settings() -> tuple[object, ...]:
    """What the marker environment and ``sys.path`` read besides the key of the help cache."""
    uname = os.uname()
    env = tuple(os.environ.get(v) for v in SYS_PATH_VARIABLES)
    return (sys.implementation.name, uname.sysname, uname.release, uname.machine, tuple(sys.flags), env)
