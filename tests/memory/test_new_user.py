"""`stackcheck memory` for a new user (issue 11, item 9): GPU names as nvidia-smi and NVML print
them, a word when the GPU has no native bf16, a next step when a workload does not fit (each
figure from the same estimator), and readable labels."""

from __future__ import annotations

import json
import shlex

import msgspec
import pytest

from stackcheck.environment import load_snapshot
from stackcheck.memory import architecture
from stackcheck.memory.estimate import Workload, estimate
from stackcheck.memory.gpus import GIB, find_gpu
from tests.factories import SNAPSHOTS

from .conftest import CONFIGS, load_config


@pytest.mark.parametrize(
    ("reported", "table"),
    [
        ("NVIDIA H200", "H200"),
        ("NVIDIA H200 NVL", "H200"),
        ("NVIDIA H100 80GB HBM3", "H100-80GB"),
        ("NVIDIA H100 PCIe", "H100-80GB"),
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("Tesla T4", "T4"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
        ("NVIDIA A100-PCIE-40GB", "A100-40GB"),
        ("NVIDIA A100 80GB PCIe", "A100-80GB"),
        ("NVIDIA GeForce RTX 4090", "RTX-4090"),
        ("NVIDIA GeForce RTX 3090", "RTX-3090"),
        ("Tesla V100-SXM2-32GB", "V100-32GB"),
        ("Tesla V100-PCIE-16GB", "V100-16GB"),
        ("NVIDIA RTX A6000", "A6000"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA GH200 480GB", "GH200"),
        ("AMD Instinct MI300X", "MI300X"),
        ("h100", "H100-80GB"),
        ("A100-80GB", "A100-80GB"),
    ],
)
def test_gpu_names_as_drivers_report_them(reported, table):
    assert find_gpu(reported).name == table


def test_every_recorded_gpu_name_finds_a_gpu_of_its_size():
    seen = 0
    for path in sorted(SNAPSHOTS.glob("*.json")):
        for g in load_snapshot(str(path)).accelerators.gpus:
            if g.memory_total_bytes:
                gpu = find_gpu(g.name)
                assert abs(gpu.memory_bytes / g.memory_total_bytes - 1) < 0.05, (g.name, gpu.name)
                assert gpu.compute_capability == g.compute_capability, g.name
                seen += 1
    assert seen >= 6


def test_an_unknown_gpu_name_stays_a_one_line_error(cli_main):
    code, out, err = cli_main(
        "memory", "--config", str(CONFIGS / "Qwen2.5-0.5B.json"), "--gpu", "NVIDIA RTX 6000 Ada Generation"
    )
    assert (code, out) == (2, "") and err.startswith(
        "stackcheck: error: --gpu: unknown GPU 'NVIDIA RTX 6000 Ada Generation'; known: T4,"
    )


def test_the_cli_takes_the_name_nvidia_smi_prints(cli_main):
    code, out, err = cli_main(
        "memory", "--config", str(CONFIGS / "Qwen2.5-7B.json"), "--gpu", "NVIDIA H200", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["target"]["gpu"] == "H200"


def test_bf16_on_a_gpu_without_native_bf16_says_so(cli_main):
    code, out, err = cli_main("memory", "--config", str(CONFIGS / "Qwen2.5-0.5B.json"), "--gpu", "Tesla T4")
    assert code == 0, err
    note = (
        "note: T4 (compute capability 7.5) has no native bf16 (it needs 8.0, Ampere or newer): "
        "kernels emulate it slowly or refuse it; --dtype fp16 runs natively"
    )
    assert note in out.splitlines()
    assert out.splitlines()[-1].startswith("verdict: FITS T4 14.74 GiB")
    code, out, err = cli_main(
        "memory", "--config", str(CONFIGS / "Qwen2.5-0.5B.json"), "--gpu", "T4", "--dtype", "fp16"
    )
    assert "bf16" not in out
    code, out, err = cli_main(
        "memory",
        "--config",
        str(CONFIGS / "Qwen2.5-0.5B.json"),
        "--gpu",
        "A100-80GB",
        "--dtype",
        "fp8",
        "--json",
    )
    assert json.loads(out)["notes"] == [
        "A100-80GB (compute capability 8.0) has no native fp8 (it needs 8.9, Ada/Hopper or newer): "
        "fp8 runs weight-only (upcast per matmul) or not at all"
    ]


def _cli_total(cli_main, argv) -> float:
    code, out, err = cli_main("memory", *argv, "--json")
    assert code in (0, 1), err
    return json.loads(out)["total_gib"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["--config", str(CONFIGS / "Llama-3.1-8B.json"), "--gpu", "T4"],
            [["--quant", "int8"], ["--quant", "int4"], ["--gpus", "2"]],
        ),
        (
            [
                "--config",
                str(CONFIGS / "Llama-3.1-8B.json"),
                "--gpu",
                "H100",
                "--seq-len",
                "131072",
                "--concurrency",
                "8",
            ],
            [["--seq-len", "58976"], ["--concurrency", "3"], ["--gpus", "4"]],
        ),  # the KV cache is the problem
        (
            ["--config", str(CONFIGS / "Llama-3.2-3B.json"), "--mode", "train", "--gpu", "A100-40GB"],
            [["--offload-optimizer"], ["--mode", "qlora"], ["--gpus", "2", "--zero", "3"]],
        ),  # the optimizer states are
    ],
)
def test_does_not_fit_offers_what_would_fit_with_the_same_estimator(cli_main, argv, expected):
    code, out, err = cli_main("memory", *argv, "--json")
    assert code == 1, err
    doc = json.loads(out)
    assert [s["options"] for s in doc["suggestions"]] == expected
    for s in doc["suggestions"]:
        assert s["fits"] is True
        assert _cli_total(cli_main, [*argv, *s["options"]]) == s["total_gib"], s["options"]
    code, text, _ = cli_main("memory", *argv)
    lines = text.splitlines()
    at = lines.index("what would fit (each change alone, same estimate):")
    assert lines[at - 1].startswith("verdict: DOES NOT FIT")
    for s, line in zip(doc["suggestions"], lines[at + 1 :]):
        assert line.startswith(f"  {shlex.join(s['options']):<28}{s['total_gib']:8.2f} GiB")


def test_nothing_fits_in_one_step_shows_the_closest(cli_main):
    argv = ["--config", str(CONFIGS / "Mixtral-8x7B-v0.1.json"), "--mode", "train", "--gpu", "T4"]
    code, out, err = cli_main("memory", *argv, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["suggestions"] and not any(s["fits"] for s in doc["suggestions"])
    assert len(doc["suggestions"]) == 3
    heads = [s["headroom_gib"] for s in doc["suggestions"]]
    assert heads == sorted(heads, reverse=True)
    code, text, _ = cli_main("memory", *argv)
    assert "no single change fits; the closest (same estimate):" in text.splitlines()


def test_a_fitting_estimate_has_no_suggestions():
    cfg = load_config("Qwen2.5-0.5B")
    arch = architecture.from_config(cfg, "q")
    e = estimate(arch, architecture.count_parameters(arch), Workload(gpu_memory_bytes=80 * GIB))
    assert e.verdict == "fits" and e.suggestions == []


def test_readable_labels(cli_main):
    code, out, err = cli_main("memory", "--config", str(CONFIGS / "Llama-3.1-8B.json"))
    assert code == 0, err
    assert "cross-check" not in out and " gib" not in out and "1 sequences" not in out
    assert "  rule of thumb, 1.2 × weights (EleutherAI, inference): 17.95 GiB" in out.splitlines()
    assert "  weights if every parameter were bf16: 14.96 GiB" in out.splitlines()
    assert "131,072 B/token × 4,096 tokens × 1 sequence" in out
    e = msgspec.json.decode(cli_main("memory", "--config", str(CONFIGS / "Llama-3.1-8B.json"), "--json")[1])
    assert set(e["cross_checks"]) == {
        "eleutherai_inference_1.2x_weights_gib",
        "weights_bf16_all_params_gib",
    }  # JSON keys stay
