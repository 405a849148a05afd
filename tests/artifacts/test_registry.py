"""The adapter registry: register after the checks pass, list, refuse what changed, and mount /
switch on a loaded tiny transformers model through PEFT's multi-adapter API (child process)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.artifacts.registry import Registry
from stackcheck.errors import Refused
from tests.artifacts.conftest import edit_json
from tests.factories import run_cli

MOUNT = Path(__file__).with_name("_mount.py")


def test_register_list_and_refusals(built, copy, tmp_path, capsys):
    reg = Registry(tmp_path / "adapters.json")
    entry = reg.register("chat-v1", built / "adapter", base=built / "llama")
    weights = hashlib.sha256((built / "adapter" / "adapter_model.safetensors").read_bytes()).hexdigest()
    assert entry.identity.weights_sha256 == weights and entry.identity.r == 8
    assert entry.base == str(built / "llama") and entry.path == str(built / "adapter")
    assert [e.name for e in reg.list()] == ["chat-v1"]
    with pytest.raises(Refused, match="chat-v1: already registered"):
        reg.register("chat-v1", built / "adapter")
    with pytest.raises(
        Refused, match=r"tools: not registered, its checks block: ART020 tokenizer has 132 ids"
    ):
        reg.register("tools", built / "adapter_tokens", base=built / "llama")
    with pytest.raises(Refused, match="ART011 rank 64 above --max-lora-rank 16"):
        reg.register("big", built / "adapter_r64", target="vllm")
    # changed after registration: refused at mount time
    a = copy("adapter")
    reg.register("edited", a)
    edit_json(a / "adapter_config.json", lora_alpha=64)
    with pytest.raises(Refused, match="edited: the files in .* changed since it was registered"):
        reg.verify("edited")
    code, out, _ = run_cli(
        capsys, "artifact", "list", "--registry", str(tmp_path / "adapters.json"), "--json"
    )
    assert code == 0 and [e["name"] for e in json.loads(out)] == ["chat-v1", "edited"]
    code, _, err = run_cli(
        capsys,
        "artifact",
        "register",
        "big",
        str(built / "adapter_r64"),
        "--for",
        "vllm",
        "--registry",
        str(tmp_path / "adapters.json"),
    )
    assert code == 1 and err.count("\n") == 1 and "ART011" in err


def test_mount_and_switch_on_a_loaded_model(built, tmp_path):
    reg = Registry(tmp_path / "adapters.json")
    one = reg.register("short", built / "adapter", base=built / "llama")
    two = reg.register("wide", built / "adapter_r64", base=built / "llama")
    out = subprocess.run(
        [sys.executable, str(MOUNT), str(reg.path), str(built / "llama"), "short", "wide"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["type"] == "PeftModel"  # task_type was not set when the adapters were made
    assert seen["adapters"] == ["short", "wide"]
    assert seen["active"] == ["short", "wide", "short"]
    ids = seen["identities"]
    assert [i["name"] for i in ids] == ["short", "wide", "short"]
    assert ids[0]["weights_sha256"] == one.identity.weights_sha256
    assert ids[1]["weights_sha256"] == two.identity.weights_sha256 and ids[1]["r"] == 64


def test_register_into_an_unwritable_registry_is_one_line(built, tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    where = tmp_path / "a-file" / "adapters.json"
    code, out, err = run_cli(
        capsys, "artifact", "register", "chat", str(built / "adapter"), "--registry", str(where)
    )
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: {where}: cannot write the adapter registry: "
        f"{tmp_path / 'a-file'} is a file, not a directory\n"
    )


def test_a_token_in_the_declared_base_url_is_never_stored_or_printed(copy, tmp_path, capsys):
    token = "hf_" + "Qw8eRt5yUi2oPa7sDf4gHj1kLz9xCv6bNm"
    a = copy("adapter")
    edit_json(a / "adapter_config.json", base_model_name_or_path=f"https://user:{token}@hf.co/org/base")
    reg = tmp_path / "adapters.json"
    code, out, err = run_cli(capsys, "artifact", "register", "chat", str(a), "--registry", str(reg), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["identity"]["base_model"] == "https://<redacted>@hf.co/org/base"
    assert token not in reg.read_text()
    code, out, err = run_cli(capsys, "artifact", "list", "--registry", str(reg))
    assert (code, err) == (0, "")
    assert out == f"chat  r=8 alpha=16.0  base https://<redacted>@hf.co/org/base  {a}\n"
