"""Artifacts checked before they are loaded: LoRA adapters against their base and the target
that will load them, checkpoints against their config, tokenizers against the embedding, and
every pickle by its opcodes — from config files and safetensors headers, never importing
torch and never reading a tensor.

``check(path, base=None, target="transformers")`` returns a Report of kind ``artifact``;
the check IDs are ART001–ART030 (:mod:`stackcheck.artifacts.checks`).
"""

from __future__ import annotations

import os

from stackcheck.artifacts.checks import CHECKS, Options
from stackcheck.artifacts.headers import read_header
from stackcheck.artifacts.layout import Artifact, gather
from stackcheck.artifacts.targets import TARGETS
from stackcheck.models.finding import Report

__all__ = ["CHECKS", "TARGETS", "Artifact", "Options", "check", "gather", "read_header"]


def check(
    path: str | os.PathLike,
    *,
    base: str | os.PathLike | None = None,
    target: str = "transformers",
    max_lora_rank: int | None = None,
) -> Report:
    """The Report of ``stackcheck artifact check``: the artifact at ``path`` (a model or
    adapter directory, or one file), judged for ``target`` (one of :data:`TARGETS`)."""
    from stackcheck.artifacts.checks import judge_artifact
    from stackcheck.checks.report import build_report
    from stackcheck.errors import InputError

    if target not in TARGETS:
        raise InputError(f"--for: {target!r} is not one of {', '.join(TARGETS)}")
    if max_lora_rank is not None and max_lora_rank < 1:
        raise InputError(f"--max-lora-rank: {max_lora_rank}: expected a positive integer")
    art = gather(path)
    base_art = gather(base, pickles=False) if base is not None else None
    findings = judge_artifact(art, base_art, Options(target=target, max_lora_rank=max_lora_rank))
    kind = "adapter" if art.is_adapter else "model" if art.config or art.headers else "files"
    environment = {"path": str(path), "artifact": kind, "target": target}
    if base is not None:
        environment["base"] = str(base)
    return build_report("artifact", findings, environment=environment, digest="")
