"""Probe another interpreter by running :mod:`.interpreter` as a script in it.

Nothing is installed into the target: the script is stdlib-only and prints JSON.
"""

from __future__ import annotations

import os
import shutil

from stackcheck.errors import InputError
from stackcheck.probe import interpreter
from stackcheck.probe.proc import LARGE_OUTPUT_BYTES, run

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
