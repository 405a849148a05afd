"""Environment variables that change how ML stacks behave — and never a secret's value.

Only an allow-list is recorded (CUDA_, NCCL_, HF_, PYTHONPATH …). A variable whose *name*
looks secret (TOKEN, KEY, SECRET, PASSWORD …, see proc.looks_secret) keeps its name, so a
check can tell "HF_TOKEN is set", but its value becomes ``<redacted>``; credentials embedded
in URLs (``https://user:pass@host``) are cut out of otherwise harmless values. Both are
listed in ``redacted``. Well-known credential variables of ML services (OPENAI_API_KEY,
AWS_SECRET_ACCESS_KEY …) are recorded the same way: name only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from stackcheck.models.snapshot import EnvSection
from stackcheck.probe.proc import looks_secret

REDACTED = "<redacted>"

PREFIXES = (
    "CUDA_", "CUDNN_", "NCCL_", "TORCH_", "TORCHINDUCTOR_", "PYTORCH_", "HF_", "HUGGING_FACE", "TRANSFORMERS_", "VLLM_", "SGLANG_",
    "OMP_", "MKL_", "KMP_", "CONDA_", "UV_", "PIP_", "JUPYTER_", "WANDB_", "MLFLOW_", "NVIDIA_", "XLA_", "TF_", "TRITON_", "DS_",
    "DEEPSPEED_", "ACCELERATE_", "TOKENIZERS_", "SLURM_", "COLAB_", "KAGGLE_", "ROCM_", "HIP_", "HSA_", "ROS_", "XFORMERS_",
    "BNB_", "FLASH_ATTN", "PYTHON", "PIXI_", "MAMBA_", "TPU_", "PJRT_",
)
EXACT = frozenset({
    "PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "DYLD_LIBRARY_PATH", "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "AMENT_PREFIX_PATH",
    "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "CC", "CXX", "CI",
})
# Services whose credential variables are worth knowing about (name only).
CREDENTIAL_PREFIXES = ("OPENAI_", "ANTHROPIC_", "AWS_", "AZURE_", "GOOGLE_", "GITHUB_", "GH_", "COHERE_", "MISTRAL_", "GROQ_", "TOGETHER_")

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")


def collect(ctx=None) -> EnvSection:
    variables, redacted = select(os.environ)
    return EnvSection(status="ok", source="os.environ", variables=variables, redacted=redacted)


def relevant(name: str) -> bool:
    upper = name.upper()
    if upper in EXACT or upper.startswith(PREFIXES):
        return True
    return looks_secret(upper) and upper.startswith(CREDENTIAL_PREFIXES)


def select(env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(allow-listed variables with secrets redacted, names that were redacted)."""
    variables: dict[str, str] = {}
    redacted: list[str] = []
    for name in sorted(env):
        if not relevant(name):
            continue
        value = env[name]
        if looks_secret(name):
            variables[name] = REDACTED
            redacted.append(name)
            continue
        cleaned = _URL_CREDENTIALS.sub(lambda m: m.group("scheme") + REDACTED + "@", value)
        if cleaned != value:
            redacted.append(name)
        variables[name] = cleaned
    return variables, redacted
