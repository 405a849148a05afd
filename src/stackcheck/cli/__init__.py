"""The ``stackcheck`` command: a thin shell over the library, one module per command group.

Subcommands are imported only when invoked, so ``stackcheck preflight`` never pays for the
ledger, triage or memory code; click itself is imported only once a command needs it
(``--version`` and a cached ``--help`` are answered before: :mod:`stackcheck.cli.startup`).
The click group lives in :mod:`stackcheck.cli._group`; ``stackcheck.cli.cli`` still names it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

    from stackcheck.cli._group import LazyGroup as LazyGroup
    from stackcheck.cli._group import cli as cli

# command name → "module:attribute" (module relative to stackcheck.cli)
COMMANDS: dict[str, tuple[str, str]] = {
    "snapshot": ("snapshot:snapshot", "Capture the runtime snapshot of an environment."),
    "preflight": ("preflight:preflight", "Check an environment against a profile: ok / warning / blocked."),
    "profiles": ("profiles:profiles", "List, show, export, validate and document environment profiles."),
    "doctor": ("doctor:doctor", "Find isolation and integrity faults (no profile needed)."),
    "deps": ("deps:deps", "Distribution graph: tree, why PKG, conflicts."),
    "explain": ("explain:explain", "Explain a check ID or knowledge rule and how to fix it."),
    "triage": ("triage:triage", "Diagnose an error text, traceback or CI log."),
    "results": ("results:results", "Result contract and append-only evidence ledger."),
    "accept": ("accept:accept", "Run the environment acceptance steps end to end."),
    "hygiene": ("hygiene:hygiene", "Scan a repository for secrets, weights, caches and unsafe pickles."),
    "memory": ("memory:memory", "Estimate model memory: weights, KV cache, activations, optimizer."),
    "kernel": ("kernel:kernel", "Register and check Jupyter kernels for this environment."),
    "schema": ("schema:schema", "Print or write the JSON Schemas of the contracts."),
    "knowledge": (
        "knowledge:knowledge",
        "Maintain the knowledge base: refresh its tables from the package indexes.",
    ),
    "completion": ("completion:completion", "Print the shell completion script (bash, zsh, fish)."),
    "artifact": ("artifact:artifact", "Check adapters, checkpoints and tokenizers before they are loaded."),
    "env": ("env:env", "Create, lock, restore and diff an environment made from a profile."),
    "mine": ("mine:mine", "Mine CI logs into verifiable rules: ingest, rules, summary, verify."),
    "report": ("report:report", "Write the HTML review page: matrix, ledger, measured metrics, rules."),
    "fleet": ("fleet:fleet", "Judge every rank of a multi-GPU / multi-node job together: skew, collectives."),
    "bench": ("bench:bench", "Backend regression suite: attention/GEMM paths checked, timed, recorded."),
}


def __getattr__(name: str) -> object:
    if name in ("cli", "LazyGroup"):  # the click group, imported on first use
        from stackcheck.cli import _group

        return getattr(_group, name)
    raise AttributeError(f"module 'stackcheck.cli' has no attribute {name!r}")


def _shield_from_pythonpath() -> bool:
    """PYTHONPATH is set and stackcheck does not itself come from it (``PYTHONPATH=src``)."""
    entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if not entries or sys.flags.ignore_environment or os.name != "posix":
        return False
    import stackcheck

    home = os.path.realpath(os.path.dirname(os.path.dirname(stackcheck.__file__)))
    return home not in {os.path.realpath(p) for p in entries}


# True when main() runs as the stackcheck program itself (no argv given), not for a caller in
# its own process (tests): a command may then leave the process without the interpreter's teardown.
STANDALONE = False
# set by short_lived(): main() leaves through leave(), without the interpreter's teardown
SHORT_LIVED = False
# the collector's first generation under short_lived(): a collection every this many net
# allocations of container objects instead of CPython's 700 (see short_lived)
GC_BATCH = 50_000


def short_lived() -> None:
    """Mark this process as one bounded command run as the stackcheck program itself (a
    preflight, doctor or snapshot answered without click, ``env create``, ``triage``); nothing
    for a caller of ``main(argv)`` (tests, notebooks), whose process is not ours to tune.

    - Garbage collection in batches: the first generation is collected after
      :data:`GC_BATCH` net allocations instead of 700. While ~200 modules load, a cold
      preflight ran ~55 collections that freed nothing (≈ 5 ms); now none (one or two at
      5,000 distributions). The collector is never off, so a command that runs long still
      collects, only in larger batches: the rule has nothing to trip.
    - :func:`leave` ends the process once the command is done: the atexit handlers run and
      the output is flushed, the interpreter's teardown of every loaded module (≈ 12 ms after
      a cold preflight) is skipped."""
    global SHORT_LIVED
    if not STANDALONE or SHORT_LIVED:
        return
    SHORT_LIVED = True
    import gc

    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_BATCH, middle, old)


def leave(code: int) -> NoReturn:
    """``sys.exit(code)``; after :func:`short_lived`, at once: the atexit handlers run and
    stdout and stderr are flushed (a reader that went away is no error, as in :func:`main`;
    another failed flush is exit 120, as the interpreter's own exit makes it), then
    ``os._exit`` skips the teardown."""
    if not SHORT_LIVED:
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except BrokenPipeError:
            code = 0
        except OSError:
            code = 120
    os._exit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point: one-line errors and exit 2 for bad input, never a traceback."""
    try:
        _main(argv)
    except OSError as exc:
        if not _cannot_write(exc):
            raise
        _unwritable(exc, at_once=argv is None)


# what writing output to a full disk, a quota or a failing device raises: on stdout or stderr
# (no file named), or on a file stackcheck writes (fileio.atomic_write names it)
_WRITE_ERRNOS = frozenset(("ENOSPC", "EDQUOT", "EFBIG", "EIO"))


def _cannot_write(exc: OSError) -> bool:
    import errno

    return errno.errorcode.get(exc.errno or 0) in _WRITE_ERRNOS


def _unwritable(exc: OSError, *, at_once: bool = True) -> NoReturn:
    """One line on stderr, exit 120 (the interpreter's code for output it could not flush), at
    once: the output left in the buffers would fail again at the interpreter's exit. Not at once
    for a caller of ``main(argv)`` (``at_once`` off): its process is not ours to end."""
    try:
        what = exc.filename if exc.filename is not None else "the output"
        line = _redact_text(f"cannot write {what}: {exc.strerror or exc}")  # a path may hold a token
        sys.stderr.write(f"stackcheck: error: {line}\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    if not at_once:
        sys.exit(120)
    os._exit(120)


def _main(argv: list[str] | None) -> None:
    global STANDALONE
    STANDALONE = argv is None
    if argv is None and _shield_from_pythonpath():
        # A polluted PYTHONPATH (ROS's python3.10 site-packages) must not change the code
        # stackcheck itself runs. Restart with -E; os.environ keeps PYTHONPATH, so the
        # probes still see and report it (probe.interpreter_sections).
        os.execv(sys.executable, [sys.executable, "-E", "-m", "stackcheck", *sys.argv[1:]])
    if argv is not None:
        _guarded(lambda: _click_main(argv))
    from stackcheck.cli import startup

    # --version and a cached help page are answered (and exit) here; a few everyday commands
    # run without click (startup.LIGHT); a help page not cached yet is recorded as click writes it
    step = startup.answer(sys.argv[1:])
    if isinstance(step, startup.Recording):
        recording = step
        _guarded(lambda: recording.run(lambda: _click_main(None)))
    _guarded(step or (lambda: _click_main(None)))


def _click_main(argv: list[str] | None):
    from stackcheck.cli._group import cli

    return cli.main(args=argv, prog_name="stackcheck", standalone_mode=False)


def _guarded(run) -> NoReturn:
    """Run a command: its exit code, or the one-line message and exit code of its error."""
    from stackcheck.errors import InputError, Refused

    try:
        rv = run()
    except InputError as exc:
        _say(f"stackcheck: error: {_redact_text(str(exc))}")
        sys.exit(2)
    except Refused as exc:
        _say(f"stackcheck: refused: {_redact_text(str(exc))}")
        sys.exit(1)
    except BrokenPipeError:
        os._exit(0)
    except KeyboardInterrupt:
        _say("stackcheck: interrupted")
        sys.exit(130)
    except Exception as exc:
        click = sys.modules.get("click")  # click's own errors come only where click was imported
        if click is not None and isinstance(exc, click.exceptions.Abort):
            _say("stackcheck: aborted")
            sys.exit(130)
        if click is not None and isinstance(exc, click.ClickException):
            exc.message = _redact_text(exc.message)  # it may quote an argument
            exc.show()
            sys.exit(exc.exit_code)
        raise
    leave(rv if isinstance(rv, int) else 0)


def _say(message: str) -> None:
    import click

    click.echo(message, err=True)


def _redact_text(text: str) -> str:  # imported only on the way out with an error
    from stackcheck.redaction import redact_text

    return redact_text(text)
