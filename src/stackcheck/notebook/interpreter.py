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
    "import sys, json, os, sysconfig, importlib.util\n"
    "{marker}\n"
    "print(json.dumps({{'executable': sys.executable, 'prefix': sys.prefix,"
    " 'version': '%d.%d.%d' % sys.version_info[:3],"
    " 'ipykernel': importlib.util.find_spec('ipykernel') is not None,"
    " 'externally_managed': externally_managed_marker(sysconfig.get_path('stdlib'), sys.prefix,"
    " getattr(sys, 'base_prefix', sys.prefix))}}))\n"
)
TIMEOUT_S = 10.0


def _script() -> str:
    """The child's source, with the probe's own PEP 668 test (stdlib-only) pasted in."""
    import inspect

    from stackcheck.probe.interpreter import externally_managed_marker

    return _SCRIPT.format(marker=inspect.getsource(externally_managed_marker))


@dataclass
class InterpreterFacts:
    path: str
    ran: bool = False
    executable: str = ""
    prefix: str = ""
    version: str = ""
    ipykernel: bool = False
    externally_managed: str = ""  # its PEP 668 marker file ("" = pip may install there)
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
        from stackcheck.checks.context import pip_install_for

        return pip_install_for(self.path, ("ipykernel",), externally_managed=bool(self.externally_managed))


def ask(python: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT_S) -> InterpreterFacts:
    """Run ``python`` once (bounded, sanitized environment plus ``env``) and read its answer."""
    from stackcheck.probe.proc import run, sanitized_env

    facts = InterpreterFacts(path=python)
    # no -I / -s: the kernel will see user site-packages and PYTHONPATH, so the answer must too
    done = run([python, "-c", _script()], timeout=timeout, env=sanitized_env(env))
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
    facts.externally_managed = str(answer.get("externally_managed") or "")
    return facts
