"""KERN010–KERN013: the checks `stackcheck kernel check` runs itself (one bounded child process
per kernel, so they cannot be pure), documented here so `stackcheck explain` knows them."""

from __future__ import annotations

from stackcheck.checks.registry import document
from stackcheck.notebook.check import TITLES

_EXPLAIN = {
    "KERN010": """
The named kernelspec exists in one of Jupyter's data directories (JUPYTER_PATH, the user
data dir, sys.prefix/share/jupyter, the system dirs). Fix: `stackcheck kernel register
--name NAME` from the environment the kernel should run.""",
    "KERN011": """
Runs the kernel's interpreter once (bounded) and compares the sys.executable / sys.prefix it
reports with the environment its path belongs to. A venv whose pyvenv.cfg was deleted, or a
wrapper script, runs another Python than the path suggests. Fix: recreate the environment,
then register the kernel again.""",
    "KERN012": """
Locates (never imports) ipykernel with the kernel's own interpreter. Without it the kernel
dies at start and Jupyter shows "kernel restarting" forever. Fix: install ipykernel with that
interpreter (the printed command names it).""",
    "KERN013": """
The PYTHONPATH a kernelspec sets (stackcheck registers the repository root there so notebooks
in any subfolder import the repository's tools) must point at directories that exist. A moved
repository leaves a stale entry and imports silently fall back to installed copies. Fix:
register the kernel again from the repository's new place.""",
}

for _id, _text in _EXPLAIN.items():
    document(_id, TITLES[_id], explain=_text, command="kernel-check")
