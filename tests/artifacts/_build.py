"""Builds the tiny real models the artifact tests judge (run in a child process, so the test
process never imports torch): ``python _build.py OUT``.

Llama-style (bfloat16, untied, 2 layers, hidden 32) with a tokenizer and chat template, the
same model sharded with an index, a Qwen-style tied model, and LoRA adapters made with PEFT:
bfloat16 r=8, float16, r=64, one targeting embed_tokens, one with modules_to_save, one whose
tokenizer gained tokens without resizing the embedding; plus a torch.distributed checkpoint.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from peft import LoraConfig, get_peft_model
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
DIMS = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2
)


def tokenizer() -> PreTrainedTokenizerFast:
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"w{i}": i for i in range(3, 120)}}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="</s>"
    )
    tok.chat_template = TEMPLATE
    return tok


def adapter(base: LlamaForCausalLM, base_dir: Path, out: Path, dtype=torch.bfloat16, **lora) -> None:
    lora.setdefault("r", 8)
    lora.setdefault("lora_alpha", 16)
    lora.setdefault("target_modules", ["q_proj", "v_proj"])
    pm = get_peft_model(base, LoraConfig(**lora))
    pm.peft_config["default"].base_model_name_or_path = str(base_dir)
    pm.to(dtype).save_pretrained(out)
    pm.unload()  # the base comes back without LoRA layers for the next adapter


def main(out: Path) -> None:
    torch.manual_seed(0)
    llama_dir = out / "llama"
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=128, dtype="bfloat16", **DIMS)).to(torch.bfloat16)
    llama.save_pretrained(llama_dir)
    tok = tokenizer()
    tok.save_pretrained(llama_dir)
    llama.save_pretrained(out / "llama_sharded", max_shard_size="8KB")
    tok.save_pretrained(out / "llama_sharded")
    qwen = Qwen2ForCausalLM(Qwen2Config(vocab_size=128, tie_word_embeddings=True, **DIMS)).to(torch.bfloat16)
    qwen.save_pretrained(out / "qwen")
    tok.save_pretrained(out / "qwen")
    adapter(llama, llama_dir, out / "adapter")
    adapter(llama, llama_dir, out / "adapter_fp16", dtype=torch.float16)
    adapter(llama, llama_dir, out / "adapter_r64", r=64, lora_alpha=128)
    adapter(llama, llama_dir, out / "adapter_embed", target_modules=["q_proj", "embed_tokens"])
    adapter(llama, llama_dir, out / "adapter_mts", modules_to_save=["lm_head"])
    adapter(llama, llama_dir, out / "adapter_tokens")
    grown = tokenizer()
    grown.add_tokens([f"<tool_{i}>" for i in range(12)])  # ids 120..131, the embedding has 128 rows
    grown.save_pretrained(out / "adapter_tokens")
    adapter(qwen, out / "qwen", out / "adapter_qwen", target_modules=["q_proj", "k_proj", "o_proj"])
    onnx_models(out / "onnx")
    gguf_files(out / "gguf")
    import torch.distributed.checkpoint as dcp

    dcp.save({"model": llama.state_dict()}, checkpoint_id=str(out / "dcp"), no_dist=True)


def onnx_models(out: Path) -> None:
    """A tiny Add graph at opset 17 / IR 8, and the same stamped opset 99 (too new)."""
    import onnx
    from onnx import TensorProto, helper

    out.mkdir()
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "tiny", [x], [y])
    for name, opset in (("ok.onnx", 17), ("new.onnx", 99)):
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="test")
        model.ir_version = 8
        onnx.save(model, str(out / name))


def gguf_files(out: Path) -> None:
    import gguf
    import numpy as np

    out.mkdir()
    for name, arch in (("tiny.gguf", "llama"), ("odd.gguf", "not-an-arch")):
        w = gguf.GGUFWriter(str(out / name), arch)
        w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
        w.add_tensor("token_embd.weight", np.zeros((8, 4), dtype=np.float16))
        w.add_tensor("output_norm.weight", np.zeros((4,), dtype=np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
