"""`stackcheck artifact check` on tiny real models (built with transformers, adapters with
PEFT): each fault the issue names injected into a copy, found with its ID, verdict and fix."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest

from tests.artifacts.conftest import edit_json, header_of, rewrite, write_safetensors
from tests.factories import run_cli


def findings(capsys, *argv: str) -> tuple[int, dict[str, list[dict]]]:
    code, out, _err = run_cli(capsys, "artifact", "check", *argv, "--json")
    doc = json.loads(out)
    by_id: dict[str, list[dict]] = {}
    for c in doc["checks"]:
        by_id.setdefault(c["id"], []).append(c)
    return code, by_id


def verdicts(by_id: dict[str, list[dict]]) -> dict[str, str]:
    return {k: "/".join(c["verdict"] for c in v) for k, v in by_id.items()}


def test_clean_llama_qwen_and_adapters_pass(built, capsys):
    code, f = findings(capsys, str(built / "llama"))
    assert code == 0
    assert verdicts(f) == {
        "ART002": "ok",
        "ART003": "ok",
        "ART004": "ok",
        "ART005": "ok",
        "ART006": "ok",
        "ART020": "ok",
        "ART021": "ok",
        "ART022": "ok",
    }
    assert f["ART003"][0]["observed"] == "llama-style: 2 layers, every shape as config.json implies"
    assert f["ART004"][0]["observed"] == "tie_word_embeddings false, lm_head.weight saved"
    code, f = findings(capsys, str(built / "qwen"))
    assert code == 0 and f["ART004"][0]["observed"] == "tie_word_embeddings true, lm_head.weight not saved"
    code, f = findings(capsys, str(built / "adapter"), "--base", str(built / "llama"), "--for", "vllm")
    assert code == 0
    assert verdicts(f) == {
        "ART006": "ok",
        "ART010": "ok",
        "ART011": "ok",
        "ART012": "ok",
        "ART014": "ok",
        "ART015": "ok",
        "ART016": "ok",
    }
    assert f["ART011"][0]["evidence"] == {"r": "8", "lora_alpha": "16", "scaling": "2"}
    code, f = findings(capsys, str(built / "adapter_qwen"), "--base", str(built / "qwen"), "--for", "sglang")
    assert (
        code == 0 and f["ART012"][0]["observed"] == "targets k_proj, o_proj, q_proj: all supported by sglang"
    )


def test_chat_template_sha256_is_the_template_files_digest(built, capsys):
    import hashlib

    _, f = findings(capsys, str(built / "llama"))
    digest = hashlib.sha256((built / "llama" / "chat_template.jinja").read_bytes()).hexdigest()
    assert f["ART022"][0]["evidence"] == {"chat_template_sha256": digest, "file": "chat_template.jinja"}


def test_fp16_adapter_for_bf16_base(built, capsys):
    code, f = findings(capsys, str(built / "adapter_fp16"), "--base", str(built / "llama"), "--for", "vllm")
    assert code == 0  # a warning: vLLM casts it
    (c,) = f["ART010"]
    assert c["verdict"] == "warning"
    assert c["observed"] == (
        "adapter stored in F16, base in BF16: vllm casts the adapter to --lora-dtype "
        "(default auto: the base model's dtype)"
    )
    assert "v.to(torch.bfloat16)" in c["fix"] and c["fix"].endswith("adapter_fp16/adapter_model.safetensors")


def test_a_max_lora_rank_vllm_does_not_accept_is_blocked(built, capsys):
    code, f = findings(capsys, str(built / "adapter_r64"), "--for", "vllm", "--max-lora-rank", "100")
    assert code == 1
    (c,) = f["ART011"]
    assert c["verdict"] == "blocked"
    assert c["observed"] == (
        "--max-lora-rank 100 is not a value vllm accepts (one of 8, 16, 32, 64, 128, 256, 320, 512) "
        "(lora_alpha 128, scaling 2)"
    )
    assert c["fix"] == (
        "start vllm with --max-lora-rank 128: vllm serve "
        f"{built / 'llama'} --enable-lora --lora-modules adapter={built / 'adapter_r64'} --max-lora-rank 128"
    )


def test_rank_64_against_vllm_limit_16(built, capsys):
    code, f = findings(capsys, str(built / "adapter_r64"), "--for", "vllm")
    assert code == 1
    (c,) = f["ART011"]
    assert c["verdict"] == "blocked"
    assert c["observed"] == "rank 64 above --max-lora-rank 16 (the default) (lora_alpha 128, scaling 2)"
    assert c["fix"] == (
        "start vllm with --max-lora-rank 64: vllm serve "
        f"{built / 'llama'} --enable-lora --lora-modules adapter={built / 'adapter_r64'} --max-lora-rank 64"
    )
    code, f = findings(capsys, str(built / "adapter_r64"), "--for", "vllm", "--max-lora-rank", "64")
    assert code == 0 and f["ART011"][0]["verdict"] == "ok"
    code, f = findings(capsys, str(built / "adapter_r64"), "--for", "peft")
    assert code == 0 and f["ART011"][0]["observed"] == "rank 64, lora_alpha 128, scaling 2"


def test_dora_and_bias_refused_by_vllm(copy, capsys):
    a = copy("adapter")
    edit_json(a / "adapter_config.json", use_dora=True, bias="lora_only")
    code, f = findings(capsys, str(a), "--for", "vllm")
    assert code == 1
    assert f["ART011"][0]["observed"] == (
        "DoRA (use_dora true): vllm refuses it; bias 'lora_only': vllm loads no adapter bias "
        "(lora_alpha 16, scaling 2)"
    )
    assert "merge_and_unload()" in f["ART011"][0]["fix"]


def test_unsupported_target_module_for_sglang_and_vllm(built, capsys):
    for engine in ("sglang", "vllm"):
        code, f = findings(
            capsys, str(built / "adapter_embed"), "--base", str(built / "llama"), "--for", engine
        )
        assert code == 1
        (c,) = f["ART012"]
        assert c["verdict"] == "blocked" and c["evidence"] == {"unsupported": "embed_tokens"}
        assert c["observed"].endswith("for llama-style models; the adapter targets embed_tokens")
    code, f = findings(capsys, str(built / "adapter_embed"), "--base", str(built / "llama"), "--for", "peft")
    assert code == 0 and f["ART012"][0]["verdict"] == "ok"


def test_modules_to_save_refused_by_vllm(built, capsys):
    code, f = findings(capsys, str(built / "adapter_mts"), "--base", str(built / "llama"), "--for", "vllm")
    assert code == 1
    assert f["ART013"][0]["observed"] == (
        "modules_to_save lm_head: vllm loads LoRA pairs only and refuses full modules"
    )
    code, f = findings(capsys, str(built / "adapter_mts"), "--base", str(built / "llama"))
    assert code == 0 and f["ART013"][0]["verdict"] == "ok"


def test_added_tokens_without_resized_embeddings(built, copy, capsys):
    code, f = findings(capsys, str(built / "adapter_tokens"), "--base", str(built / "llama"))
    assert code == 1
    (c,) = f["ART020"]
    assert c["evidence"] == {"tokenizer_size": "132", "embedding_rows": "128"}
    assert "'<tool_8>' (128)" in c["observed"] and "modules_to_save=['embed_tokens', 'lm_head']" in c["fix"]
    # the same tokenizer beside the model itself
    m = copy("llama")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (m / name).write_bytes((built / "adapter_tokens" / name).read_bytes())
    code, f = findings(capsys, str(m))
    assert code == 1 and "resize_token_embeddings" in f["ART020"][0]["fix"]


def test_missing_shard(copy, capsys):
    m = copy("llama_sharded")
    (m / "model-00003-of-00009.safetensors").unlink()
    code, f = findings(capsys, str(m))
    assert code == 1
    (c,) = f["ART001"]
    assert c["verdict"] == "blocked" and c["evidence"] == {"missing": "model-00003-of-00009.safetensors"}
    assert c["observed"].startswith(
        "model.safetensors.index.json names 1 shard(s) not in "
        + str(m)
        + ": model-00003-of-00009.safetensors"
    )
    assert f["ART003"][0]["verdict"] == "ok"  # the tensors of the missing shard are ART001's


def test_duplicated_tensor(copy, capsys):
    m = copy("llama_sharded")
    index = json.loads((m / "model.safetensors.index.json").read_text())["weight_map"]
    name = "model.norm.weight"
    other = next(s for s in sorted(set(index.values())) if s != index[name])
    rewrite(m / other, lambda t: {**t, name: ("BF16", [32])})
    code, f = findings(capsys, str(m))
    assert code == 1
    (c,) = f["ART002"]
    shards = ", ".join(sorted([index[name], other]))
    assert c["observed"] == f"1 tensor(s) in more than one shard: {name} ({shards})"


def test_split_tie_both_ways(copy, capsys):
    q = copy("qwen")  # tied: lm_head not saved
    rewrite(q / "model.safetensors", lambda t: {**t, "lm_head.weight": ("BF16", [128, 32])})
    code, f = findings(capsys, str(q))
    assert code == 0 and f["ART004"][0]["verdict"] == "warning"
    assert f["ART004"][0]["observed"].startswith("tie_word_embeddings is true but lm_head.weight is saved")
    q = copy("qwen")
    edit_json(q / "config.json", tie_word_embeddings=False)
    code, f = findings(capsys, str(q))
    assert code == 1 and f["ART004"][0]["verdict"] == "blocked"
    assert f["ART004"][0]["fix"].startswith("if the model was trained with tied embeddings: python -c ")


def test_shapes_and_dtype_against_config(copy, capsys):
    m = copy("llama")
    edit_json(m / "config.json", num_key_value_heads=4)
    code, f = findings(capsys, str(m))
    assert code == 1
    assert f["ART003"][0]["observed"].startswith(
        "4 shape(s) differ: model.layers.0.self_attn.k_proj.weight [16, 32] (config: [32, 32])"
    )
    m = copy("llama")
    rewrite(m / "model.safetensors", lambda t: {k: ("F32", s) for k, (_, s) in t.items()})
    code, f = findings(capsys, str(m))
    assert code == 0 and f["ART005"][0]["verdict"] == "warning"
    assert f["ART005"][0]["observed"] == (
        "config.json declares bfloat16 (BF16); 21 in F32 of 21 floating-point tensors: "
        "loaders cast them on load"
    )


def test_fsdp_flat_param_names(copy, capsys):
    m = copy("llama")
    write_safetensors(
        m / "model.safetensors",
        {
            "_fsdp_wrapped_module._flat_param": ("BF16", [4096]),
            "_fsdp_wrapped_module.lm_head.weight": ("BF16", [8]),
        },
    )
    code, f = findings(capsys, str(m))
    assert code == 1
    assert f["ART006"][0]["observed"].startswith("2 tensor name(s) carry FSDP wrapper names: ")
    assert "full_state_dict=True" in f["ART006"][0]["fix"]


def test_distributed_checkpoint_world_size(copy, capsys):
    d = copy("dcp")
    (d / "__1_0.distcp").write_bytes(b"")
    code, f = findings(capsys, str(d))
    assert code == 0  # its .metadata pickle imports only DCP's own classes
    (c,) = f["ART007"]
    assert c["verdict"] == "warning" and c["evidence"] == {"world_size": "2"}
    assert c["fix"].endswith(f"dcp_to_torch {d} OUT.pt")
    assert f["ART030"][0]["verdict"] == "ok" and f["ART030"][0]["subject"] == ".metadata"
    (d / ".metadata").unlink()
    code, f = findings(capsys, str(d))
    assert code == 1 and f["ART007"][0]["verdict"] == "blocked"


class Hostile:
    def __reduce__(self):
        return (os.system, ("touch PWNED",))


def test_hostile_pickled_adapter_is_never_executed(copy, capsys, tmp_path, monkeypatch):
    a = copy("adapter")
    (a / "adapter_model.safetensors").unlink()
    (a / "adapter_model.bin").write_bytes(pickle.dumps({"w": Hostile()}, protocol=4))
    monkeypatch.chdir(tmp_path)
    code, f = findings(capsys, str(a))
    assert code == 1
    (c,) = f["ART030"]
    assert c["subject"] == "adapter_model.bin"
    assert c["observed"] == "unpickling imports posix.system (runs code)"
    assert c["fix"].startswith("do not load it: delete it and find out where it came from: rm ")
    assert not (tmp_path / "PWNED").exists()


def test_headers_are_read_without_importing_torch(built):
    script = (
        "import sys; from stackcheck.artifacts import check; "
        f"r = check({str(built / 'adapter_tokens')!r}, base={str(built / 'llama')!r}, target='vllm'); "
        "print(r.verdict, sorted(m for m in ('torch', 'safetensors', 'transformers', 'peft', 'numpy') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "blocked []"


def test_bad_input_is_one_line_and_exit_2(copy, tmp_path, capsys):
    bad = tmp_path / "cut.safetensors"
    bad.write_bytes(b"\x05\x00\x00")
    code, out, err = run_cli(capsys, "artifact", "check", str(bad))
    assert (code, out) == (2, "")
    assert (
        err.strip()
        == f"stackcheck: error: {bad}: 3 bytes, expected a safetensors file (8-byte header length)"
    )
    bad.write_bytes((1000).to_bytes(8, "little") + b'{"a": 1}')
    code, _, err = run_cli(capsys, "artifact", "check", str(bad))
    assert code == 2
    assert (
        err.strip()
        == f"stackcheck: error: {bad}: safetensors header length 1000 is larger than the file (16 bytes)"
    )
    bad.write_bytes((10).to_bytes(8, "little") + b'{"a": 1,  ' + b"\0" * 4)
    code, _, err = run_cli(capsys, "artifact", "check", str(bad))
    assert code == 2 and "safetensors header is not valid JSON" in err and err.count("\n") == 1
    m = copy("llama")
    (m / "config.json").write_text('{"model_type": "llama",\n "hidden_size": 32,,}')
    code, _, err = run_cli(capsys, "artifact", "check", str(m))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"stackcheck: error: {m / 'config.json'}: line 2 col ")
    code, _, err = run_cli(capsys, "artifact", "check", str(tmp_path / "nowhere"))
    assert (
        code == 2 and err.strip() == f"stackcheck: error: {tmp_path / 'nowhere'}: no such file or directory"
    )


def test_header_length_above_the_cap_is_refused_before_reading(tmp_path, capsys):
    big = tmp_path / "big.safetensors"
    with open(big, "wb") as fh:
        fh.write((200_000_000).to_bytes(8, "little"))
        fh.truncate(300_000_000)  # sparse: the length fits the file, not the cap
    code, _, err = run_cli(capsys, "artifact", "check", str(big))
    assert code == 2 and err.strip() == (
        f"stackcheck: error: {big}: safetensors header length 200000000 is above the 100000000-byte limit"
    )


def test_truncated_shard_data(copy, capsys):
    m = copy("llama")
    path = m / "model.safetensors"
    size = path.stat().st_size
    os.truncate(path, size - 100)
    code, f = findings(capsys, str(m))
    assert code == 1 and f["ART008"][0]["verdict"] == "blocked"
    assert f["ART008"][0]["observed"].startswith(
        "model.safetensors: 2 tensor(s) end past the end of the file "
        "(e.g. model.layers.1.self_attn.v_proj.weight, data ends at byte 53504 of 53468)"
    )


def test_adapter_names_with_the_adapter_name_kept(copy, capsys):
    a = copy("adapter")
    rewrite(
        a / "adapter_model.safetensors",
        lambda t: {k.replace(".lora_A.", ".lora_A.default."): v for k, v in t.items()},
    )
    code, f = findings(capsys, str(a), "--for", "vllm")
    assert code == 1
    assert f["ART015"][0]["observed"].startswith("4 of 8 tensor names keep the adapter name (.default.): ")


def test_adapter_for_another_base(built, capsys):
    code, f = findings(capsys, str(built / "adapter"), "--base", str(built / "qwen"))
    assert f["ART014"][0]["verdict"] == "warning"
    assert f["ART014"][0]["observed"] == (
        f"adapter declares base {built / 'llama'} (no revision recorded); the base given is {built / 'qwen'}"
    )


def test_header_reader_agrees_with_safetensors(built):
    """Our header reader and the safetensors library see the same names, dtypes and shapes
    (the library runs in a child process: this one stays free of it)."""
    from stackcheck.artifacts.headers import read_header

    path = built / "llama" / "model.safetensors"
    ours = {k: [t.dtype, list(t.shape)] for k, t in read_header(path).tensors.items()}
    script = (
        "import json, sys; from safetensors import safe_open; f = safe_open(sys.argv[1], 'np'); "
        "print(json.dumps({k: [f.get_slice(k).get_dtype(), f.get_slice(k).get_shape()] for k in f.keys()}))"
    )
    theirs = json.loads(
        subprocess.run(
            [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True
        ).stdout
    )
    assert ours == theirs and len(ours) == 21
    assert header_of(path)["__metadata__"] == {"format": "pt"}


def test_adapter_declares_another_revision_of_a_hub_base(built, copy, tmp_path, capsys):
    import shutil

    at = "1" * 40
    base = tmp_path / "hub" / "models--org--tiny" / "snapshots" / at
    shutil.copytree(built / "llama", base)
    a = copy("adapter")
    edit_json(a / "adapter_config.json", base_model_name_or_path="org/tiny", revision="2" * 40)
    _, f = findings(capsys, str(a), "--base", str(base))
    (c,) = f["ART014"]
    assert c["verdict"] == "warning"
    assert (
        c["observed"] == f"adapter declares org/tiny at revision {'2' * 40}; the base given is revision {at}"
    )
    edit_json(a / "adapter_config.json", revision=at)
    _, f = findings(capsys, str(a), "--base", str(base))
    assert f["ART014"][0]["verdict"] == "ok"


@pytest.mark.parametrize(
    ("name", "file", "field", "value", "expected"),
    [
        ("adapter", "adapter_config.json", "r", "x", "a positive integer"),
        ("adapter", "adapter_config.json", "r", -4, "a positive integer"),
        ("adapter", "adapter_config.json", "lora_alpha", "x", "a number"),
        (
            "adapter",
            "adapter_config.json",
            "rank_pattern",
            "x",
            "an object of module name → positive integer",
        ),
        (
            "adapter",
            "adapter_config.json",
            "rank_pattern",
            {"q_proj": "x"},
            "an object of module name → positive integer",
        ),
        ("adapter", "adapter_config.json", "alpha_pattern", [1], "an object of module name → number"),
        ("adapter", "adapter_config.json", "modules_to_save", 5, "a list of module names"),
        ("adapter", "adapter_config.json", "target_modules", 5, "a module name or a list of them"),
        ("adapter_tokens", "tokenizer.json", "added_tokens", 5, "a list of added tokens"),
    ],
)
def test_a_field_of_the_wrong_type_is_one_line_and_exit_2(copy, capsys, name, file, field, value, expected):
    art = copy(name)
    edit_json(art / file, **{field: value})
    for argv in (
        ("artifact", "check", str(art)),
        ("artifact", "register", "x", str(art), "--registry", str(art / "r.json")),
    ):
        code, out, err = run_cli(capsys, *argv)
        assert (code, out) == (2, "")
        assert err == f"stackcheck: error: {art / file}: {field}: expected {expected}\n"
    assert not (art / "r.json").exists()


def test_a_config_with_absurdly_many_layers_is_judged_in_bounded_memory(copy, capsys):
    m = copy("llama")
    edit_json(m / "config.json", num_hidden_layers=10**30)
    code, by_id = findings(capsys, str(m))
    assert code == 1
    assert by_id["ART003"][0]["verdict"] == "blocked"
    assert by_id["ART003"][0]["observed"] == (
        "config.json: num_hidden_layers 1000000000000000000000000000000: expected at most 100000"
    )


def test_a_check_that_crashes_is_an_error_never_ok_and_never_a_traceback(built, capsys, monkeypatch):
    from stackcheck.artifacts import checks

    def boom(cfg):
        raise RuntimeError("boom")

    monkeypatch.setattr(checks, "_rank", boom)
    code, out, err = run_cli(
        capsys, "artifact", "check", str(built / "adapter"), "--base", str(built / "llama")
    )
    assert code == 1 and "Traceback" not in err
    assert out.splitlines()[0] == "artifact: ERROR"
    code, by_id = findings(capsys, str(built / "adapter"), "--base", str(built / "llama"))
    assert code == 1
    assert verdicts(by_id)["ART010"] == "ok"  # what the family yielded before the crash is kept
    assert verdicts(by_id)["ART011"] == "error"
    assert by_id["ART011"][0]["reason"].startswith("internal error in check ART011: RuntimeError: boom; ")


def test_a_file_no_check_reads_is_one_line_not_ok(tmp_path, capsys):
    for name, data in (("notes.json", b'{"a": 1}'), ("empty.bin", b""), ("README.md", b"# model\n")):
        path = tmp_path / name
        path.write_bytes(data)
        code, out, err = run_cli(capsys, "artifact", "check", str(path))
        assert (code, out) == (2, "")
        assert err == (
            f"stackcheck: error: {path}: not a safetensors, ONNX, GGUF or pickle file "
            "(expected one of those, or a model or adapter directory)\n"
        )


def test_a_directory_no_check_reads_is_one_line_not_ok(tmp_path, capsys):
    for name, files in (("empty", {}), ("docs", {"README.md": b"# model\n", "notes.txt": b"x"})):
        folder = tmp_path / name
        folder.mkdir()
        for f, data in files.items():
            (folder / f).write_bytes(data)
        code, out, err = run_cli(capsys, "artifact", "check", str(folder))
        assert (code, out) == (2, "")
        assert err == (
            f"stackcheck: error: {folder}: no model, adapter, tokenizer, weights, checkpoint, ONNX, GGUF or "
            "pickle file found (expected config.json, adapter_config.json, *.safetensors, … or a file of one "
            "of those)\n"
        )


def test_a_chat_template_above_the_json_cap_is_refused_before_reading(copy, capsys):
    m = copy("llama")
    template = m / "chat_template.jinja"
    with open(template, "wb") as fh:
        fh.truncate(65 * 1024 * 1024)  # sparse: nothing is written
    code, out, err = run_cli(capsys, "artifact", "check", str(m))
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: {template}: {65 * 1024 * 1024} bytes, larger than the {64 * 1024 * 1024}-byte "
        "limit for a chat template\n"
    )
