"""The hygiene rules: stable IDs, what each looks for, how bad it is, how to fix it. Each rule is
a :class:`~stackcheck.checks.registry.CheckSpec` declared here, so ``stackcheck explain`` and
docs/checks.md document the same rules the scan reports.

A hygiene finding is a :class:`~stackcheck.models.finding.CheckResult` like any preflight
verdict, so the same renderers, JSON shape and exit codes apply.
"""

from __future__ import annotations

from stackcheck.checks.registry import CheckSpec, by_id, declare
from stackcheck.models.finding import CheckResult, Verdict

__all__ = ["RULES", "finding"]


def _rule(id: str, title: str, verdict: Verdict, expected: str, explain: str) -> CheckSpec:
    text = f"{explain} Verdict when found: {verdict}; expected: {expected}."
    return declare(id, title, explain=text, command="hygiene", verdict=verdict, expected=expected)


RULES: dict[str, CheckSpec] = by_id(
    _rule(
        "HYG001",
        "committed secret",
        "blocked",
        "no credentials in tracked files",
        (
            "API tokens (Hugging Face, OpenAI, Anthropic, W&B, AWS, GitHub), private keys and .netrc "
            "passwords in tracked text files. Anyone with read access to the repository can use them;"
            " revoke the credential first, then remove it from the file and from history."
        ),
    ),
    _rule(
        "HYG002",
        "model weights committed",
        "warning",
        "weights above the size threshold live on a model hub or in Git LFS",
        (
            "Weight files (safetensors, bin, pt, pth, ckpt, gguf, onnx, h5, msgpack) larger than "
            "--max-weight-size bloat every clone forever. Publish them on a model hub or track them "
            "with Git LFS."
        ),
    ),
    _rule(
        "HYG003",
        "Hugging Face cache committed",
        "warning",
        "no Hugging Face hub cache in the repository",
        (
            "A committed hub cache (models--ORG--NAME/ with blobs/ and snapshots/) duplicates weights"
            " and pins nothing; download by repo id and revision instead."
        ),
    ),
    _rule(
        "HYG004",
        "compile cache or built binary committed",
        "warning",
        "build outputs are produced on each machine, not committed",
        (
            "__pycache__/*.pyc, built .so/.o files, torch_extensions, triton caches and .egg-info "
            "directories are specific to one interpreter, compiler and GPU; a stale committed copy is"
            " loaded instead of a fresh build."
        ),
    ),
    _rule(
        "HYG005",
        "notebook output contains a token",
        "blocked",
        "notebook outputs free of credentials",
        (
            "A notebook stores the outputs of its cells; a printed token (login banners, os.environ "
            "dumps) is committed with it. Clear the outputs and revoke the token."
        ),
    ),
    _rule(
        "HYG006",
        "pickle checkpoint imports unsafe callables",
        "blocked",
        "a pickle whose imports are all on the tensor allow-list (or a safetensors file)",
        (
            "Loading a pickle runs the callables its GLOBAL / STACK_GLOBAL opcodes import. The "
            "opcodes are read with pickletools, never unpickled; imports outside the allow-list "
            "(tensor rebuild helpers, torch storages and dtypes, OrderedDict, numpy arrays) are what "
            "torch.load(weights_only=True) refuses too, and os.system / builtins.eval / subprocess.* "
            "run code on load."
        ),
    ),
    _rule(
        "HYG007",
        "trust_remote_code without a pinned revision",
        "warning",
        "trust_remote_code=True together with revision=<commit sha> in the same call",
        (
            "trust_remote_code=True executes Python from the model repository; without a pinned "
            "revision every run may execute different code than the one you reviewed."
        ),
    ),
)


def finding(
    rule_id: str,
    path: str,
    observed: str,
    fix: str,
    *,
    where: str | None = None,
    verdict: Verdict | None = None,
    evidence: dict[str, str] | None = None,
) -> CheckResult:
    """One finding of ``rule_id`` about ``path`` (``where``: "line 3", "cell 2 output" …)."""
    rule = RULES[rule_id]
    assert rule.verdict is not None  # every hygiene rule states its verdict
    ev = {"file": path, **(evidence or {})}
    return CheckResult(
        id=rule_id,
        title=rule.title,
        verdict=verdict or rule.verdict,
        observed=observed,
        expected=rule.expected,
        fix=fix,
        subject=f"{path} {where}" if where else path,
        evidence=ev,
    )
