"""Ask a kernel's interpreter who it is, in one bounded child process.

The child runs with the kernel's own ``env`` (so a PYTHONPATH from kernel.json counts), prints
its ``sys.executable`` / ``sys.prefix`` / version and whether ``ipykernel`` can be located —
located with ``importlib.util.find_spec``, never imported, so nothing heavy starts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

_SCRIPT = (
    "import sys, json, importlib.util\n"
    "print(json.dumps({'executable': sys.executable, 'prefix': sys.prefix,"
    " 'version': '%d.%d.%d' % sys.version_info[:3],"
    " 'ipykernel': importlib.util.find_spec('ipykernel') is not None}))\n"
)
TIMEOUT_S = 10.0


@dataclass
class InterpreterFacts:
    path: str
    ran: bool = False
    executable: str = ""
    prefix: str = ""
    version: str = ""
    ipykernel: bool = False
    error: str | None = None  # why it did not answer

    @property
    def expected_prefix(self) -> str:
        """The environment root an interpreter at ``path`` belongs to: the parent of its
        ``bin`` (or ``Scripts``) directory."""
        bindir = os.path.dirname(os.path.abspath(self.path))
        if os.path.basename(bindir) in ("bin", "Scripts"):
            return os.path.dirname(bindir)
        return bindir

    @property
    def pip_install_ipykernel(self) -> str:
        from stackcheck.shellcmd import command

        return command(self.path, "-m", "pip", "install", "ipykernel")


def ask(python: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT_S) -> InterpreterFacts:
    """Run ``python`` once (bounded, sanitized environment plus ``env``) and read its answer."""
    from stackcheck.probe.proc import run, sanitized_env

    facts = InterpreterFacts(path=python)
    # no -I / -s: the kernel will see user site-packages and PYTHONPATH, so the answer must too
    done = run([python, "-c", _SCRIPT], timeout=timeout, env=sanitized_env(env))
    if not done.ok:
        tail = (done.stderr.strip().splitlines() or [""])[-1]
        facts.error = done.error or f"exited with {done.returncode}: {tail}".rstrip(": ")
        return facts
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        facts.error = f"unexpected answer: {done.stdout.strip()[:200]!r}"
        return facts
    facts.ran = True
    facts.executable = answer.get("executable", "")
    facts.prefix = answer.get("prefix", "")
    facts.version = answer.get("version", "")
    facts.ipykernel = bool(answer.get("ipykernel"))
    return facts
