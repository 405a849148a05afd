"""Checks that other commands run themselves, documented so `stackcheck explain` knows them:
KERN010–013 (`kernel check`: a bounded child process per kernel), HYG001–007 (`hygiene`:
reads files), ACC001–007 (`accept`: runs code). Imported by `explain` only, never by
preflight or doctor (the leading underscore keeps it out of check discovery). Their titles
and the hygiene rules are data in :mod:`.external_docs`, which those commands read too."""

from __future__ import annotations

from stackcheck.checks.external_docs import ACCEPT_TITLES, HYGIENE_RULES, KERNEL_TITLES
from stackcheck.checks.registry import document

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

_ACCEPT_EXPLAIN = {
    "ACC001": "A NumPy linear solve and matrix products against exact known answers, in a child process of the checked interpreter: catches a broken BLAS, a NumPy 1/2 ABI clash, a wrong OPENBLAS_CORETYPE.",
    "ACC002": "A tiny transformer block built from a config trains 8 SGD steps with a fixed seed: the loss must fall and every gradient be finite. Catches a torch that imports but cannot run autograd.",
    "ACC003": "A matmul on the GPU compared with the same product on the CPU (TF32 off). Skipped with the reason when there is no GPU or torch is a CPU build; blocked when the profile needs a GPU.",
    "ACC004": "Weights saved with safetensors and loaded in a fresh process must give bit-identical outputs: proves serialization and a clean second start.",
    "ACC005": "The version report (snapshot.json and a readable summary.txt) written atomically to --out.",
    "ACC006": "The hygiene scan of the enclosing repository (see HYG001–HYG007).",
    "ACC007": "The preflight of --profile, so acceptance and the experiment's needs are judged together.",
}

for _id, _text in _EXPLAIN.items():
    document(_id, KERNEL_TITLES[_id], explain=_text, command="kernel-check")
for _id, _text in _ACCEPT_EXPLAIN.items():
    document(
        _id,
        ACCEPT_TITLES[_id],
        explain=_text + " Fix: the step's own fix names the command for the checked interpreter.",
        command="accept",
    )
for _id, _rule in HYGIENE_RULES.items():
    document(
        _id,
        _rule.title,
        explain=f"{_rule.explain} Verdict when found: {_rule.verdict}; expected: {_rule.expected}.",
        command="hygiene",
    )
