"""`stackcheck memory` as users run it: exit codes, one-line errors, JSON only on stdout."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CONFIGS

STACKCHECK = Path(sys.executable).with_name("stackcheck")


def sc(*args, **kw):
    return subprocess.run(
        [str(STACKCHECK), "memory", *map(str, args)], capture_output=True, text=True, timeout=60, **kw
    )


def test_json_breakdown_and_exit_codes():
    ok = sc("--config", CONFIGS / "Qwen2.5-7B.json", "--gpu", "H100", "--json")
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["parameters"]["total"] == 7_615_616_512
    assert doc["verdict"] == "fits"
    assert {t["name"] for t in doc["terms"]} >= {
        "weights",
        "kv_cache",
        "activations",
        "logits",
        "runtime_overhead",
    }
    assert all(t["formula"] and t["assumption"] for t in doc["terms"])
    assert doc["serving"]["max_tokens"] > 0
    no = sc("--config", CONFIGS / "Qwen2.5-7B.json", "--mode", "train", "--gpu", "H100", "--json")
    assert no.returncode == 1
    assert json.loads(no.stdout)["verdict"] == "does-not-fit"
    assert {t["name"] for t in json.loads(no.stdout)["terms"]} >= {"gradients", "optimizer_states"}


def test_text_output_names_terms_and_verdict():
    r = sc("--config", CONFIGS / "Qwen3-30B-A3B.json", "--gpu-memory", "24GiB")
    assert r.returncode == 1
    assert "30,532,122,624 total" in r.stdout and "active per token" in r.stdout
    assert "DOES NOT FIT" in r.stdout and "kv_cache" in r.stdout


def test_explicit_sizes_match_the_config():
    r = sc(
        "--hidden-size",
        896,
        "--layers",
        24,
        "--heads",
        14,
        "--kv-heads",
        2,
        "--intermediate-size",
        4864,
        "--vocab-size",
        151936,
        "--tied",
        "--qkv-bias",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["parameters"]["total"] == 494_032_768


@pytest.mark.parametrize(
    "content, expected",
    [
        (b'{"hidden_size": 64, "num_hidden_layers": 2', "truncated"),
        (b"\x00\x01\xff garbage", "bad.json"),
        (b'{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}', "vocab_size"),
        (
            b'{"hidden_size": -3, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 9}',
            "hidden_size",
        ),
        (b"[]", "JSON object"),
    ],
)
def test_invalid_config_exits_2_with_one_line(tmp_path, content, expected):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    r = sc("--config", bad)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert expected in lines[0] and str(bad) in lines[0]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--config", "/nonexistent/config.json"], "no such"),
        ([], "--config"),
        (["--config", CONFIGS / "Qwen2.5-7B.json", "--gpu", "TPUv5"], "unknown GPU"),
        (["--config", CONFIGS / "Qwen2.5-7B.json", "--gpu-memory", "lots"], "--gpu-memory"),
        (["--config", CONFIGS / "Qwen2.5-7B.json", "--mode", "train", "--quant", "nf4"], "qlora"),
        (["--hidden-size", 64, "--layers", 2, "--heads", 4], "--vocab-size"),
        (["--config", CONFIGS / "Qwen2.5-7B.json", "--layers", 4], "cannot be combined"),
    ],
)
def test_usage_errors_exit_2(args, expected):
    r = sc(*args)
    assert r.returncode == 2, r.stdout
    assert expected in r.stderr and "Traceback" not in r.stderr
