"""Environment variables that change how ML stacks behave — and never a secret's value.

Only an allow-list is recorded (CUDA_, NCCL_, HF_, PYTHONPATH …). A variable whose *name*
looks secret (TOKEN, KEY, SECRET, PASSWORD …, see redaction.looks_secret) keeps its name, so a
check can tell "HF_TOKEN is set", but its value becomes ``<redacted>``; credentials inside
otherwise harmless values (``https://user:pass@host``, conda's ``/t/<token>/``,
``?private_token=``, token shapes) are cut out by redaction.redact_text. Both are listed in
``redacted``. Well-known credential variables of ML services (OPENAI_API_KEY,
AWS_SECRET_ACCESS_KEY …) are recorded the same way: name only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from stackcheck.models.snapshot import EnvSection
from stackcheck.redaction import REDACTED, looks_secret, redact_env

__all__ = ["REDACTED", "collect", "relevant", "select"]

PREFIXES = (
    "CUDA_",
    "CUDNN_",
    "NCCL_",
    "GLOO_",
    "TORCHELASTIC_",
    "TORCH_",
    "TORCHINDUCTOR_",
    "PYTORCH_",
    "HF_",
    "HUGGING_FACE",
    "TRANSFORMERS_",
    "VLLM_",
    "SGLANG_",
    "OMP_",
    "MKL_",
    "KMP_",
    "CONDA_",
    "UV_",
    "PIP_",
    "JUPYTER_",
    "WANDB_",
    "MLFLOW_",
    "NVIDIA_",
    "XLA_",
    "TF_",
    "TRITON_",
    "DS_",
    "DEEPSPEED_",
    "ACCELERATE_",
    "TOKENIZERS_",
    "SLURM_",
    "COLAB_",
    "KAGGLE_",
    "ROCM_",
    "HIP_",
    "HSA_",
    "ROS_",
    "XFORMERS_",
    "BNB_",
    "FLASH_ATTN",
    "PYTHON",
    "PIXI_",
    "MAMBA_",
    "TPU_",
    "PJRT_",
)
EXACT = frozenset(
    {
        "PATH",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "DYLD_LIBRARY_PATH",
        "VIRTUAL_ENV",
        "VIRTUAL_ENV_PROMPT",
        "AMENT_PREFIX_PATH",
        "MASTER_ADDR",
        "MASTER_PORT",
        "WORLD_SIZE",
        "RANK",
        "LOCAL_RANK",
        "LOCAL_WORLD_SIZE",
        "GROUP_RANK",
        "NODE_RANK",
        "CC",
        "CXX",
        "CI",
    }
)
# Services whose credential variables are worth knowing about (name only).
CREDENTIAL_PREFIXES = (
    "OPENAI_",
    "ANTHROPIC_",
    "AWS_",
    "AZURE_",
    "GOOGLE_",
    "GITHUB_",
    "GH_",
    "COHERE_",
    "MISTRAL_",
    "GROQ_",
    "TOGETHER_",
)


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
    variables, redacted = redact_env({name: env[name] for name in sorted(env) if relevant(name)})
    return variables, redacted
