"""``stackcheck memory`` bounds every size it reads: ``num_hidden_layers: 10**12`` ran until
memory ran out (a per-layer list), ``vocab_size: 10**400`` ended in an OverflowError
traceback. Each is now a one-line error naming the field; sizes at the caps still compute."""

from __future__ import annotations

import json

import pytest

from stackcheck.errors import InputError
from stackcheck.memory import architecture
from stackcheck.memory.estimate import Workload, estimate
from stackcheck.memory.gpus import parse_size
from tests.bounded.hostile import cli, one_line_error

BASE = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "vocab_size": 32000,
    "intermediate_size": 11008,
}


HUGE = "a number of more than 18 digits"


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        (
            "num_hidden_layers",
            10**12,
            "field num_hidden_layers: expected at most 16,384, got 1,000,000,000,000",
        ),
        ("vocab_size", 10**400, f"field vocab_size: expected at most 16,777,216, got {HUGE}"),
        ("hidden_size", 10**9, "field hidden_size: expected at most 1,048,576, got 1,000,000,000"),
        (
            "intermediate_size",
            2**40,
            "field intermediate_size: expected at most 16,777,216, got 1,099,511,627,776",
        ),
        (
            "max_position_embeddings",
            10**40,
            f"field max_position_embeddings: expected at most 4,294,967,296, got {HUGE}",
        ),
        ("num_attention_heads", 2**17, "field num_attention_heads: expected at most 65,536, got 131,072"),
    ],
)
def test_oversized_config_fields_are_one_line_errors(tmp_path, field, value, said):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**BASE, field: value}))
    with pytest.raises(InputError) as refused:
        architecture.from_config(json.loads(path.read_text()), str(path))
    assert str(refused.value) == f"{path}: {said}"
    one_line_error(cli("memory", "--config", str(path)), f"{path}: {said}")


def test_oversized_explicit_sizes_name_the_option():
    proc = cli(
        "memory", "--hidden-size", "4096", "--layers", str(10**12), "--heads", "32", "--vocab-size", "32000"
    )
    one_line_error(
        proc, "stackcheck: error: explicit sizes: --layers: expected at most 16,384, got 1,000,000,000,000"
    )


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--seq-len", "9" * 400),
        ("--batch", str(2**40)),
        ("--concurrency", str(2**40)),
        ("--gpus", str(2**20)),
        ("--lora-rank", str(2**20)),
        ("--overhead-gib", "inf"),
        ("--serve-activation-gib", "1e400"),
    ],
)
def test_oversized_workload_options_are_usage_errors(option, value):
    proc = cli(
        "memory",
        "--hidden-size",
        "4096",
        "--layers",
        "32",
        "--heads",
        "32",
        "--vocab-size",
        "32000",
        option,
        value,
    )
    said = f"Invalid value for '{option}'" in proc.stderr
    assert (proc.returncode, "Traceback" in proc.stderr, said) == (2, False, True)


@pytest.mark.parametrize("text", ["9" * 400, "1e400GiB", "99999999999999999999PiB"])
def test_gpu_memory_sizes_are_bounded(text):
    with pytest.raises(InputError):
        parse_size(text)


def test_a_hostile_mlp_only_layers_list_is_a_set_not_a_quadratic_scan():
    cfg = {
        **BASE,
        "model_type": "qwen3_moe",
        "num_hidden_layers": 1 << 14,
        "num_experts": 8,
        "moe_intermediate_size": 64,
        "mlp_only_layers": list(range(200_000)),
    }
    arch = architecture.from_config(cfg)
    assert arch.sparse_layers == ()


MAXED = {
    "model_type": "qwen3_moe",
    "hidden_size": 1 << 20,
    "num_hidden_layers": 1 << 14,
    "num_attention_heads": 1 << 16,
    "num_key_value_heads": 1 << 16,
    "head_dim": 1 << 16,
    "vocab_size": 1 << 24,
    "intermediate_size": 1 << 24,
    "num_experts": 1 << 16,
    "num_experts_per_tok": 1 << 24,
    "moe_intermediate_size": 1 << 24,
    "max_position_embeddings": 1 << 32,
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["infer", "serve", "train", "qlora"])
def test_every_size_at_its_cap_still_gives_an_estimate(mode):
    arch = architecture.from_config(MAXED)
    counts = architecture.count_parameters(arch)
    result = estimate(arch, counts, Workload(mode=mode, gpu_memory_bytes=80 << 30, gpu_name="H100"))
    assert result.verdict == "does-not-fit"
