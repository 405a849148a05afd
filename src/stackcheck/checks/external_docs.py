"""IDs, titles and rules of the checks that other commands run themselves: ``kernel check``
(KERN…), ``accept`` (ACC…) and ``hygiene`` (HYG…).

Data only, at the level of the checks: those commands build their findings from these tables,
and :mod:`stackcheck.checks._external` documents the same IDs for ``stackcheck explain``, so
neither side imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from stackcheck.models.finding import Verdict

__all__ = ["ACCEPT_TITLES", "HYGIENE_RULES", "KERNEL_TITLES", "HygieneRule"]

# `kernel check` (stackcheck.notebook.check); KERN001/KERN002 mean what they mean in doctor.
KERNEL_TITLES = {
    "KERN010": "Kernelspec exists",
    "KERN001": "Kernelspec names its interpreter by path",
    "KERN002": "Kernel interpreter exists",
    "KERN011": "Kernel interpreter is what it claims",
    "KERN012": "ipykernel is importable in the kernel's interpreter",
    "KERN013": "Kernel PYTHONPATH entries exist",
}

# `accept` (stackcheck.accept): one step each.
ACCEPT_TITLES = {
    "ACC001": "NumPy computes a known answer",
    "ACC002": "torch trains a tiny model (forward, backward, SGD)",
    "ACC003": "GPU matmul matches the CPU",
    "ACC004": "safetensors round trip in a fresh process",
    "ACC005": "version report written",
    "ACC006": "repository hygiene",
    "ACC007": "profile preflight",
}


@dataclass(frozen=True)
class HygieneRule:
    id: str
    title: str
    verdict: Verdict  # the verdict of a finding of this rule
    expected: str
    explain: str


HYGIENE_RULES: dict[str, HygieneRule] = {
    r.id: r
    for r in (
        HygieneRule(
            "HYG001",
            "committed secret",
            "blocked",
            "no credentials in tracked files",
            "API tokens (Hugging Face, OpenAI, Anthropic, W&B, AWS, GitHub), private keys and .netrc "
            "passwords in tracked text files. Anyone with read access to the repository can use them; "
            "revoke the credential first, then remove it from the file and from history.",
        ),
        HygieneRule(
            "HYG002",
            "model weights committed",
            "warning",
            "weights above the size threshold live on a model hub or in Git LFS",
            "Weight files (safetensors, bin, pt, pth, ckpt, gguf, onnx, h5, msgpack) larger than "
            "--max-weight-size bloat every clone forever. Publish them on a model hub or track them "
            "with Git LFS.",
        ),
        HygieneRule(
            "HYG003",
            "Hugging Face cache committed",
            "warning",
            "no Hugging Face hub cache in the repository",
            "A committed hub cache (models--ORG--NAME/ with blobs/ and snapshots/) duplicates "
            "weights and pins nothing; download by repo id and revision instead.",
        ),
        HygieneRule(
            "HYG004",
            "compile cache or built binary committed",
            "warning",
            "build outputs are produced on each machine, not committed",
            "__pycache__/*.pyc, built .so/.o files, torch_extensions, triton caches and .egg-info "
            "directories are specific to one interpreter, compiler and GPU; a stale committed copy "
            "is loaded instead of a fresh build.",
        ),
        HygieneRule(
            "HYG005",
            "notebook output contains a token",
            "blocked",
            "notebook outputs free of credentials",
            "A notebook stores the outputs of its cells; a printed token (login banners, "
            "os.environ dumps) is committed with it. Clear the outputs and revoke the token.",
        ),
        HygieneRule(
            "HYG006",
            "pickle checkpoint imports unsafe callables",
            "blocked",
            "a pickle whose imports are all on the tensor allow-list (or a safetensors file)",
            "Loading a pickle runs the callables its GLOBAL / STACK_GLOBAL opcodes import. The "
            "opcodes are read with pickletools, never unpickled; imports outside the allow-list "
            "(tensor rebuild helpers, torch storages and dtypes, OrderedDict, numpy arrays) are "
            "what torch.load(weights_only=True) refuses too, and os.system / builtins.eval / "
            "subprocess.* run code on load.",
        ),
        HygieneRule(
            "HYG007",
            "trust_remote_code without a pinned revision",
            "warning",
            "trust_remote_code=True together with revision=<commit sha> in the same call",
            "trust_remote_code=True executes Python from the model repository; without a pinned "
            "revision every run may execute different code than the one you reviewed.",
        ),
    )
}
