"""Mount and switch registered adapters on a loaded transformers model (child process of
test_registry: the test process never imports torch). Prints one JSON line of what it saw.

    python _mount.py REGISTRY BASE_DIR NAME1 NAME2
"""

from __future__ import annotations

import json
import sys

import msgspec
from transformers import AutoModelForCausalLM

from stackcheck.artifacts.registry import Registry


def main(registry: str, base: str, first: str, second: str) -> None:
    reg = Registry(registry)
    model = AutoModelForCausalLM.from_pretrained(base)
    model, one = reg.mount(model, first)
    after_first = model.active_adapter
    model, two = reg.mount(model, second)
    after_second = model.active_adapter
    back = reg.switch(model, first)
    print(
        json.dumps(
            {
                "type": type(model).__name__,
                "adapters": sorted(model.peft_config),
                "active": [after_first, after_second, model.active_adapter],
                "identities": [msgspec.to_builtins(i) for i in (one, two, back)],
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:5])
