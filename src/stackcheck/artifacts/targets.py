"""The sourced table of what each loader and serving engine accepts from an artifact
(``data/targets.json``): LoRA rank limits and the flag that raises them, PEFT features it
refuses, target modules per architecture family, what it does with a dtype mismatch, and the
tensor layout of each family (names and shapes in terms of config.json fields)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["TARGETS", "family_of", "table", "target"]

TARGETS = ("transformers", "peft", "vllm", "sglang")


@cache
def table() -> dict[str, Any]:
    text = resources.files("stackcheck.artifacts").joinpath("data/targets.json").read_text("utf-8")
    return json.loads(text)


def target(name: str) -> dict[str, Any]:
    return table()["targets"][name]


def family_of(config: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """The tensor-layout family of a model config (by its model_type), or None when the table
    has none for it."""
    model_type = (config or {}).get("model_type")
    for name, fam in table()["families"].items():
        if model_type in fam["model_types"]:
            return name, fam
    return None
