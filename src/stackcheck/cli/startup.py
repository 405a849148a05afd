"""What ``stackcheck`` answers before click is imported (importing click costs more than
starting the interpreter): ``--version``; the ``--help`` page of the top group or of one
command, served from a cache of the page click itself wrote the last time it was asked; and
``snapshot --json``, ``preflight --profile ID [--json]``, ``doctor [--json]`` and ``deps
conflicts | tree [--json]``, whose arguments need no parser (:data:`LIGHT`,
:func:`preflight_profile`, :func:`doctor`, :func:`deps`).

A cached page is the bytes click wrote to stdout, kept with two things that must still hold
for it to be served again:

- the key: stackcheck's version, the interpreter, ``sys.path``, the arguments, what stdout is
  (encoding, errors, a terminal or not), the terminal width (``COLUMNS`` and the terminal's
  own), and the colour and language variables;
- the code that wrote it: path, mtime, size and inode of every module of stackcheck and
  click that was loaded when click wrote the page (an edited or reinstalled file, or another
  click, is a miss).

Anything else (no cache directory, ``STACKCHECK_NO_CACHE``, shell completion, other
arguments) goes through click as before. Cache files live in ``<cache dir>/help/``.

``deps conflicts | tree [--json]`` are answered from a *stored answer* in the same format
(:func:`stored_answer`, :class:`Answer`; ``<cache dir>/answers/``) while its key — the help
key above plus a stat fingerprint of the distributions (:mod:`stackcheck.cli.answers`) —
and the code that wrote it still hold.
"""

from __future__ import annotations

import io
import os
import sys

from stackcheck import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

HELP = ("--help", "-h")
VERSION = ("--version", "-V")
MAGIC = b"stackcheck-help 1"
LIMIT = 1 << 20  # a cache file larger than this is not read (a help page is a few KiB)
# set by answer(): this process is `stackcheck ...` from a command line, not main(argv) or a
# test runner inside Python, where checks may be patched at run time (cli.verdicts serves only then)
COMMAND_LINE = False


def answer(args: list[str]):
    """Write the answer to ``stackcheck ARGS`` and exit, where it is known without click.
    Otherwise: the command to run without click (:data:`LIGHT`), a :class:`Recording` when
    click's answer is a help page to cache, or None (click answers)."""
    global COMMAND_LINE
    COMMAND_LINE = True
    if "_STACKCHECK_COMPLETE" in os.environ:  # shell completion: click's own protocol
        return None
    light = LIGHT.get(tuple(args)) or preflight_profile(args) or doctor(args)
    if light is not None:
        from stackcheck.cli import short_lived

        short_lived()  # a bounded command: collections in batches, no teardown at the end
        return light
    light = deps(args) or env_create(args)  # env create marks itself short-lived when it runs
    if light is not None:
        return light
    if len(args) == 1 and args[0] in VERSION:
        # what click.version_option prints (tests/cli/test_startup.py pins it to click's)
        if getattr(sys.stdout, "buffer", None) is not None:
            _emit(f"stackcheck, version {__version__}\n".encode(_encoding()))
        return None
    page = help_page(args)
    if page is None:
        return None
    path, key = page
    body = read_page(path, key)
    if body is not None:
        _emit(body)
    return Recording(path, key)


def help_page(args: list[str]) -> tuple[str, str] | None:
    """(cache file, key) of ``args`` when it asks for the help of the top group or of one
    command, and a page may be cached; else None."""
    from stackcheck.cachedir import cache_root
    from stackcheck.cli import COMMANDS

    if len(args) == 1 and args[0] in HELP:
        name = "top"
    elif len(args) == 2 and args[1] in HELP and args[0] in COMMANDS:
        name = args[0]
    else:
        return None
    root = cache_root()
    key = output_key(args)
    if root is None or key is None:
        return None
    flag = "h" if args[-1] == "-h" else "help"
    return os.path.join(root, "help", f"{name}.{flag}.{interpreter_tag()}"), repr(key)


def output_key(args: list[str]) -> tuple[object, ...] | None:
    """What the bytes ``stackcheck ARGS`` writes depend on besides the code and the files it
    reads: stackcheck's version, the interpreter and its ``sys.path``, the arguments, what
    stdout is (encoding, errors, a terminal or not), the terminal width and the colour and
    language variables. None when stdout is not one that a cached answer can be written to."""
    out = sys.stdout
    if out is None or getattr(out, "buffer", None) is None:
        return None
    env = tuple(os.environ.get(v) for v in ("COLUMNS", "NO_COLOR", "FORCE_COLOR", "LANGUAGE"))
    env += tuple(os.environ.get(v) for v in ("LC_ALL", "LC_MESSAGES", "LANG"))
    key: tuple[object, ...] = (__version__, sys.version, sys.executable, sys.prefix, sys.path, args)
    return key + (out.encoding, out.errors, _isatty(out), _terminal_columns(), env)


def interpreter_tag() -> str:
    """A cache file's name part for this interpreter: two venvs sharing ~/.cache never take turns."""
    return format(_crc(f"{sys.executable}\0{sys.prefix}"), "08x")


def read_page(path: str, key: str, limit: int = LIMIT) -> bytes | None:
    """The page cached at ``path`` for ``key``, while the code that wrote it is unchanged. A
    file larger than ``limit``, a symlink, a FIFO or another user's is not read (a miss)."""
    from stackcheck.factcache import read_bytes

    data = read_bytes(path, limit)
    if data is None:
        return None
    try:
        magic, stored_key, size, rest = data.split(b"\n", 3)
        code, body = rest[: int(size)], rest[int(size) :]
        if magic != MAGIC or stored_key != key.encode("utf-8", "surrogateescape"):
            return None
        fields = code.split(b"\0")
        if len(fields) % 2 or not fields[0]:
            return None
        for module_file, stat in zip(fields[::2], fields[1::2]):
            if _stat(module_file) != stat:
                return None
        return body
    except (OSError, ValueError):
        return None


def snapshot_json() -> int:
    """``stackcheck snapshot --json``: the live snapshot as JSON, what cli/snapshot.py's command
    prints for these arguments (tests/cli/test_startup.py holds them equal)."""
    from stackcheck.cli.output import emit_json
    from stackcheck.environment import obtain

    emit_json(obtain(None, deep=False))
    return 0


def preflight_profile(args: list[str]):
    """``stackcheck preflight --profile ID`` (``-p ID``, ``--profile=ID``; ``--json`` before or
    after) without click: what cli/preflight.py's command runs for these arguments
    (tests/cli/test_startup.py holds them equal). None for any other arguments, and for text
    output where it would differ from click.echo's (not POSIX, an ASCII stdout)."""
    rest = list(args[1:]) if args[:1] == ["preflight"] else []
    as_json = "--json" in rest
    if as_json:
        rest.remove("--json")
    if len(rest) == 2 and rest[0] in ("--profile", "-p"):
        profile_id = rest[1]
    elif len(rest) == 1 and rest[0].startswith("--profile="):
        profile_id = rest[0][len("--profile=") :]
    else:
        return None
    if not profile_id or profile_id.startswith("-") or "--json" in rest:
        return None
    if not as_json and not _plain_stdout():
        return None

    def preflight() -> int:
        from stackcheck.cli.output import check_profile
        from stackcheck.identifiers import require

        require(profile_id, "--profile", "name")  # as the option's callback (cli.common.checked)
        return check_profile(None, profile_id, as_json=as_json)

    return preflight


def doctor(args: list[str]):
    """``stackcheck doctor [--json]`` without click: what cli/doctor.py's command runs for
    these arguments; None for any other, and for text output where click.echo would differ."""
    if args not in (["doctor"], ["doctor", "--json"]) or (len(args) == 1 and not _plain_stdout()):
        return None

    def run() -> int:
        from stackcheck.cli.output import judge_environment, show_report

        return show_report(judge_environment("doctor"), as_json=len(args) == 2)

    return run


def deps(args: list[str]):
    """``stackcheck deps conflicts [--json]`` and ``deps tree [--json]`` without click: what
    cli/deps.py's commands run for these arguments; None for any other, and for text output
    where click.echo would differ."""
    if len(args) not in (2, 3) or args[0] != "deps" or args[1] not in ("conflicts", "tree"):
        return None
    as_json = args[2:] == ["--json"]
    if (len(args) == 3 and not as_json) or (not as_json and not _plain_stdout()):
        return None

    def run() -> int:
        from stackcheck.cli import deps_report

        command = deps_report.conflicts if args[1] == "conflicts" else deps_report.tree
        return command(None, as_json=as_json)

    return stored_answer(args, run) or run  # a stored answer is written here (and exits) while it holds


def stored_answer(args: list[str], run: Callable[[], int]):
    """``stackcheck ARGS`` answered from its stored answer (:mod:`stackcheck.cli.answers`):
    written, and the process exits with its exit code. Otherwise ``run`` recording its answer,
    or None where none may be kept (no cache directory, an unusable stdout, not POSIX)."""
    import time

    from stackcheck.cachedir import cache_root
    from stackcheck.cli import answers

    root, key = cache_root(), output_key(args)
    if root is None or key is None or not answers.applies():
        return None
    started = time.time_ns()
    stamp, newest = answers.environment_stamp()
    full = repr((key, answers.settings(), stamp))
    name = ".".join(a.lstrip("-") for a in args) + "." + interpreter_tag()
    path = os.path.join(root, "answers", name)
    body = read_page(path, full, answers.LIMIT)
    if body is not None:
        code, sep, out = body.partition(b"\n")
        if sep and code in (b"0", b"1"):
            _emit(out, int(code))
    recording = Answer(path, full, stamp, racy=answers.racy(newest, started))
    return lambda: recording.run(run)


def env_create(args: list[str]):
    """``stackcheck env create OPTIONS`` without click where its options need no parser's
    judgement (:func:`stackcheck.cli.env_create.light`); None for any other arguments, and
    where click.echo would write stdout or stderr differently."""
    if args[:2] != ["env", "create"] or not (_plain_stdout() and _plain_stdout(sys.stderr)):
        return None
    from stackcheck.cli.env_create import light

    return light(args[2:])


def _plain_stdout(stream=None) -> bool:
    """Text on stdout (or ``stream``) is written as click.echo writes it: POSIX, and an encoding
    that is not ASCII (click re-wraps an ASCII stream)."""
    import codecs

    stream = sys.stdout if stream is None else stream
    try:
        return os.name == "posix" and codecs.lookup(stream.encoding or "ascii").name != "ascii"
    except (AttributeError, LookupError):
        return False


# argument lists answered without click: everyday commands whose arguments need no parsing
LIGHT: dict[tuple[str, ...], Callable[[], int]] = {("snapshot", "--json"): snapshot_json}


class Recording:
    """Runs click with stdout captured, passes what it wrote through to stdout, and caches it
    when click answered with exit code 0."""

    packages: tuple[str, ...] = ("stackcheck", "click")  # whose loaded modules wrote the page

    def __init__(self, path: str, key: str):
        self.path, self.key = path, key

    def run(self, main):
        real = sys.stdout
        capture = io.TextIOWrapper(_Sink(_isatty(real)), encoding=real.encoding, errors=real.errors)
        sys.stdout = capture
        try:
            rv = main()
        finally:
            sys.stdout = real
            capture.flush()
            out = capture.buffer.getvalue()
            real.flush()
            real.buffer.write(out)
            real.flush()
        body = self.kept(rv, out)
        if body is not None:
            self.store(body)
        return rv

    def kept(self, rv, out: bytes) -> bytes | None:
        """What is cached of a run that returned ``rv`` having written ``out``: a page click
        answered with exit code 0; None: nothing."""
        return out if rv == 0 and out else None

    def store(self, body: bytes, extra: tuple[str, ...] = ()) -> None:
        """Write the page with the stat of every loaded module of :attr:`packages` (and of the
        files ``extra``); a cache that cannot be written is only slower."""
        from stackcheck.factcache import write_bytes

        dirs = []
        for name in self.packages:
            file = getattr(sys.modules.get(name), "__file__", None)
            if isinstance(file, str):
                dirs.append(os.path.dirname(file) + os.sep)
        code = []
        paths = [getattr(m, "__file__", None) for m in list(sys.modules.values())]
        for path in [p for p in paths if isinstance(p, str) and p.startswith(tuple(dirs))] + list(extra):
            try:
                code += [os.fsencode(path), _stat(path)]
            except OSError:
                return
        block = b"\0".join(code)
        head = b"\n".join((MAGIC, self.key.encode("utf-8", "surrogateescape"), b"%d" % len(block)))
        folder, name = os.path.split(self.path)  # <cache dir>/FOLDER/NAME: both made 0700
        root, below = os.path.split(folder)
        write_bytes(root, os.path.join(below, name), head + b"\n" + block + body)


class Answer(Recording):
    """Runs a command with stdout captured, passes it through, and keeps it with the exit code
    when the run ended with 0 or 1 and the environment held still while it ran."""

    packages = ("stackcheck", "msgspec", "packaging")  # packaging: where the run derived the graph

    def __init__(self, path: str, key: str, stamp: str, *, racy: bool):
        super().__init__(path, key)
        self.stamp, self.racy = stamp, racy

    def kept(self, rv, out: bytes) -> bytes | None:
        from stackcheck.cli import answers

        if rv not in (0, 1) or self.racy or answers.environment_stamp()[0] != self.stamp:
            return None
        return b"%d\n" % rv + out

    def store(self, body: bytes, extra: tuple[str, ...] = ()) -> None:
        from stackcheck.cli import answers

        if len(body) <= answers.LIMIT:
            super().store(body, extra + answers.deriving_files())


class _Sink(io.BytesIO):
    """Where click writes a page to be cached: says it is a terminal when stdout is one, so
    that click decides about colour exactly as it would writing to stdout."""

    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def _stat(path: str | bytes) -> bytes:
    """What a module file must still be for a page it wrote to be served."""
    st = os.stat(path)
    return b"%d %d %d" % (st.st_mtime_ns, st.st_size, st.st_ino)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _terminal_columns() -> int | None:
    """The terminal's width where click (shutil.get_terminal_size) would ask for it."""
    stdout = sys.__stdout__
    try:
        return os.get_terminal_size(stdout.fileno()).columns if stdout is not None else None
    except (AttributeError, ValueError, OSError):
        return None


def _encoding() -> str:
    return getattr(sys.stdout, "encoding", None) or "utf-8"


def _emit(data: bytes, code: int = 0) -> None:
    """Write ``data`` to stdout and exit with ``code``."""
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    except BrokenPipeError:
        os._exit(0)
    sys.exit(code)


def _crc(text: str) -> int:
    import zlib

    return zlib.crc32(text.encode("utf-8", "surrogateescape"))
