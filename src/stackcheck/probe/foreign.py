"""Probe another interpreter by running :mod:`.interpreter` as a script in it.

Nothing is installed into the target: the script is stdlib-only and prints JSON.
:func:`start_foreign` starts that interpreter ahead of time (while an installer fills its
environment) and runs the same probe when told to.
"""

from __future__ import annotations

import os
import shutil
import time

from stackcheck.errors import InputError
from stackcheck.probe import interpreter
from stackcheck.probe.proc import LARGE_OUTPUT_BYTES, Completed, Started, run, start

FOREIGN_TIMEOUT_S = 30.0


def resolve_python(path: str) -> str:
    """An interpreter path, a venv directory, or a name on PATH → an executable path."""
    if os.path.isdir(path):
        for rel in ("bin/python", "bin/python3", "Scripts/python.exe"):
            cand = os.path.join(path, rel)
            if os.path.exists(cand):
                return cand
        raise InputError(f"{path}: a directory without bin/python (expected an interpreter or a venv)")
    if os.path.exists(path):
        if not os.access(path, os.X_OK):
            expected = "a Python interpreter, a venv, or a name on PATH"
            raise InputError(f"{path}: not executable (expected {expected})")
        return os.path.abspath(path)  # "some.bin" is this file, not a program on PATH
    found = shutil.which(path)
    if found:
        return found
    raise InputError(f"{path}: no such interpreter (not a file, and not a name on PATH)")


def gather_foreign(path: str, modules: tuple[str, ...] = ()) -> dict:
    exe = resolve_python(path)
    script = os.path.abspath(interpreter.__file__)
    done = run([exe, script, *modules], timeout=FOREIGN_TIMEOUT_S, max_output=LARGE_OUTPUT_BYTES)
    return _facts(done, path)


# What a started interpreter runs (Python 3.8 compatible): without its site (-S) it reads and
# compiles the probe and imports the standard modules it needs that take nothing from sys.path
# or sys.prefix, then waits for "go"; given it, it runs site as its start-up would have and the
# probe as ``python interpreter.py MODULES`` does (sys.path and sys.argv as a script's), so
# everything installed while it waited, .pth files included, is seen as a new one sees it.
_WAITING = """\
import sys
import hashlib, json, stat
script = sys.argv[1]
with open(script, "rb") as f:
    code = compile(f.read(), script, "exec")
if sys.stdin.readline() != "go\\n":
    raise SystemExit(0)
safe = getattr(sys.flags, "safe_path", False)
if not safe:
    del sys.path[0]
import site
site.main()
if not safe:
    import os
    sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
del sys.argv[0]
exec(code, {"__name__": "__main__", "__file__": script, "__package__": None, "__builtins__": __builtins__})
"""


class StartedProbe:
    """An interpreter started by :func:`start_foreign`, waiting to be probed."""

    def __init__(self, path: str, child: Started | Completed):
        self.path, self.child = path, child
        self.deadline: float | None = None

    def go(self) -> None:
        """Let it probe now (:meth:`facts` waits for the answer)."""
        if isinstance(self.child, Started) and self.deadline is None:
            self.deadline = time.monotonic() + FOREIGN_TIMEOUT_S
            self.child.give(b"go\n")

    def facts(self) -> dict:
        """The python and packages sections, as :func:`gather_foreign` gives them now."""
        child = self.child
        if not isinstance(child, Started):
            return _facts(child, self.path)
        self.go()
        assert self.deadline is not None
        return _facts(child.wait(self.deadline, FOREIGN_TIMEOUT_S), self.path)

    def cancel(self) -> None:
        if isinstance(self.child, Started):
            self.child.cancel()


def start_foreign(path: str, modules: tuple[str, ...] = ()) -> StartedProbe:
    """Start the interpreter at ``path`` now and probe it later (:meth:`StartedProbe.facts`),
    when whatever fills its environment has finished: its start-up costs no time then."""
    exe = resolve_python(path)
    script = os.path.abspath(interpreter.__file__)
    argv = [exe, "-S", "-c", _WAITING, script, *modules]
    return StartedProbe(path, start(argv, max_output=LARGE_OUTPUT_BYTES))


def _facts(done: Completed, path: str) -> dict:
    """The probe's answer as a snapshot's python and packages sections, or a one-line error."""
    progress = [ln for ln in done.stderr.splitlines() if ln.startswith(interpreter.PROGRESS)]
    if done.returncode is None and done.error and done.error.startswith("timeout") and progress:
        at = progress[-1][len(interpreter.PROGRESS) :]
        raise InputError(f"{path}: the interpreter probe did not finish ({done.error}); it was reading {at}")
    if done.returncode is None and done.error and done.error.startswith("cannot run "):
        reason = done.error.rpartition(": ")[2]  # e.g. "Exec format error": not a program at all
        raise InputError(f"{path}: not a Python interpreter (cannot run it: {reason})")
    if done.returncode != 0:
        said = [ln for ln in done.stderr.strip().splitlines() if not ln.startswith(interpreter.PROGRESS)]
        detail = done.error or (said or ["no output"])[-1]
        raise InputError(f"{path}: cannot probe this interpreter: {detail}")
    if done.truncated:
        raise InputError(f"{path}: the interpreter probe printed more than {LARGE_OUTPUT_BYTES >> 20} MiB")
    try:
        import msgspec

        facts = msgspec.json.decode(done.stdout)  # 2-3x json.loads on 5,000 distributions' facts
        problem = _shape_problem(facts)
    except (ValueError, RecursionError):
        problem = "no JSON: is it a Python >= 3.8?"
    if problem:
        shown = done.stdout.strip()
        shown = repr(shown if len(shown) <= 60 else shown[:48] + "…") if shown else "nothing"
        what = "not a Python interpreter that stackcheck can probe"
        raise InputError(f"{path}: {what} (printed {shown}; {problem})")
    facts["python"]["source"] = "interpreter-subprocess"
    return facts


def _shape_problem(facts) -> str | None:
    """What is wrong with the probe's answer for a Snapshot's python/packages sections."""
    import msgspec

    from stackcheck.models.snapshot import PackagesSection, PythonSection

    if not isinstance(facts, dict):
        return "expected a JSON object with python and packages sections"
    for key, model in (("python", PythonSection), ("packages", PackagesSection)):
        if not isinstance(facts.get(key), dict):
            return f"no {key} section"
        try:
            msgspec.convert(facts[key], model)
        except msgspec.ValidationError as exc:
            return f"{key}: {exc}"
    return None
