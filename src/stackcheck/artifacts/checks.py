"""The artifact checks (ART0xx): each judges the facts :func:`~stackcheck.artifacts.layout.gather`
read — nothing here opens a file — and says what it observed, what a loader expects and the
exact call or engine flag that fixes it. They are declared with
:func:`~stackcheck.checks.registry.declare` (``stackcheck explain ART003``)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from math import sqrt
from typing import Any

from stackcheck.artifacts.headers import FLOAT_DTYPES, TORCH_DTYPES, TensorInfo
from stackcheck.artifacts.layout import Artifact
from stackcheck.artifacts.targets import family_of, target
from stackcheck.artifacts.targets import table as targets_table
from stackcheck.checks.registry import CheckSpec, by_id, declare
from stackcheck.models.finding import CheckResult, Verdict
from stackcheck.shellcmd import code, command

__all__ = ["CHECKS", "Options", "judge_artifact"]

COMMAND = "artifact"


def _art(id: str, title: str, expected: str, explain: str) -> CheckSpec:
    return declare(id, title, explain=explain, command=COMMAND, expected=expected)


CHECKS: dict[str, CheckSpec] = by_id(
    _art(
        "ART001",
        "shard index names a missing shard",
        "every shard the index names is present",
        "The shard index (model.safetensors.index.json) maps each tensor to a shard file; "
        "from_pretrained and every engine open each file it names, and stop at the first one that "
        "is missing, after the earlier shards were loaded. Download the missing shards again "
        "(huggingface-cli download REPO --revision REV).",
    ),
    _art(
        "ART002",
        "tensor in more than one shard, or not where the index says",
        "every tensor in exactly the shard the index names",
        "A tensor stored in two shards is loaded twice (the later copy wins, silently) and a "
        "tensor the index places in a shard that lacks it fails the load. Re-save the model with "
        "save_pretrained, which writes shards and index together.",
    ),
    _art(
        "ART003",
        "tensor shapes disagree with config.json",
        "every tensor the architecture needs, with the shape config.json implies",
        "The shapes of the embedding, attention (heads, KV heads, head_dim), MLP and norm tensors "
        "follow from hidden_size, num_attention_heads, num_key_value_heads, intermediate_size, "
        "vocab_size and num_hidden_layers. A mismatch is a size-mismatch error on load, a missing "
        "tensor is initialised at random. Re-save config and weights together from the model "
        "that trained them.",
    ),
    _art(
        "ART004",
        "tied embeddings disagree with tie_word_embeddings",
        "lm_head.weight saved exactly when tie_word_embeddings is false",
        "With tie_word_embeddings true, loaders point lm_head at embed_tokens and ignore a saved "
        "lm_head.weight (a converter that split the tie loses its trained head); with it false, a "
        "missing lm_head.weight is initialised at random. Make config.json say what the weights "
        "are.",
    ),
    _art(
        "ART005",
        "stored dtype differs from the config's dtype",
        "floating-point tensors stored in the dtype config.json declares (torch_dtype / dtype)",
        "from_pretrained(dtype='auto') and the engines load the dtype config.json declares and "
        "cast what the file stores: a float32 file declared bfloat16 takes twice the disk and "
        "download, a bfloat16 file declared float16 may overflow. Save with the dtype you mean.",
    ),
    _art(
        "ART006",
        "FSDP or torch.compile names in the weights",
        "plain module names (no _fsdp_wrapped_module, _flat_param, _orig_mod)",
        "A state dict taken from an FSDP-wrapped or torch.compile'd model carries the wrappers' "
        "names (or FSDP's flattened parameters), which from_pretrained and the engines do not map: "
        "every weight is reported missing. Save a full state dict "
        "(torch.distributed.checkpoint.state_dict.get_model_state_dict with "
        "StateDictOptions(full_state_dict=True)) or the unwrapped module (model._orig_mod).",
    ),
    _art(
        "ART007",
        "torch.distributed checkpoint",
        "a checkpoint a plain loader reads (safetensors shards)",
        "A torch.distributed.checkpoint directory (.metadata plus __RANK_N.distcp files) was written "
        "by a given number of ranks; from_pretrained, torch.load and the engines cannot read it, "
        "and its .metadata is a pickle. Convert it once: python -m "
        "torch.distributed.checkpoint.format_utils dcp_to_torch DIR OUT.pt.",
    ),
    _art(
        "ART008",
        "shard shorter than its header says",
        "every tensor's data inside the file",
        "The header lists tensor data beyond the end of the file: the download or copy was cut "
        "off. Loaders fail (or read garbage) at the first such tensor. Download it again.",
    ),
    _art(
        "ART010",
        "adapter dtype differs from the base model's",
        "adapter weights in the base model's dtype",
        "Loaders cast an adapter to the base's (or the LoRA layers') dtype: float16 to bfloat16 "
        "loses mantissa bits, bfloat16 to float16 can overflow to inf. What each target does is "
        "in the table (artifacts/data/targets.json). Cast the adapter once, deliberately.",
    ),
    _art(
        "ART011",
        "adapter rank or features beyond what the target accepts",
        "LoRA rank within the target's limit; no feature the target refuses (DoRA, bias)",
        "vLLM starts with --max-lora-rank 16 and refuses a larger adapter at load; it refuses "
        "DoRA and adapter bias. Start the engine with a larger --max-lora-rank (one of the values "
        "it accepts) or merge the adapter into the base (merge_and_unload).",
    ),
    _art(
        "ART012",
        "adapter targets modules the target does not support",
        "target modules the target supports for this architecture",
        "Serving engines implement LoRA for a fixed set of modules per architecture (vLLM: "
        "packed_modules_mapping; SGLang: SUPPORTED_LORA_TARGET_MODULES); others are refused at "
        "load. Retrain with supported target_modules, or merge the adapter and serve the merged "
        "model.",
    ),
    _art(
        "ART013",
        "adapter saves full modules the target cannot load",
        "no modules_to_save for a target that refuses them",
        "modules_to_save stores full copies of modules (often embed_tokens and lm_head after "
        "adding tokens); vLLM refuses them ('vLLM only supports modules_to_save being None.'). "
        "Merge the adapter into the base and serve the merged model.",
    ),
    _art(
        "ART014",
        "adapter declares another base model",
        "the base model (and revision) the adapter declares is the one given",
        "adapter_config.json records base_model_name_or_path and revision; an adapter applied to "
        "another base loads without an error when the shapes happen to agree, and gives wrong "
        "output. Give the base it was trained on.",
    ),
    _art(
        "ART015",
        "adapter tensor names a loader does not map",
        "PEFT's saved names: base_model.model.MODULE.lora_A.weight / lora_B.weight",
        "PeftModel.save_pretrained strips the adapter name (.default.) from the keys; a raw "
        "model.state_dict() keeps it, and PEFT then loads nothing (it only warns about missing "
        "adapter keys) while vLLM refuses the names. Save with PeftModel.save_pretrained.",
    ),
    _art(
        "ART016",
        "adapter shapes disagree with the base model",
        "lora_A [r, in_features] and lora_B [out_features, r] of modules the base has",
        "Each LoRA pair must match the base module it adapts; an adapter for another size of the "
        "model fails with a size mismatch, one for another architecture names modules that do "
        "not exist. Give the base it was trained on.",
    ),
    _art(
        "ART020",
        "tokenizer larger than the embedding",
        "every token id below the number of embedding rows",
        "Tokens added to the tokenizer need rows in the embedding (and lm_head): an id past the "
        "last row is an IndexError on CPU and a device-side assert on CUDA, and an adapter that "
        "added tokens must save the resized embeddings. Resize with "
        "model.resize_token_embeddings(len(tokenizer)) before training and save them.",
    ),
    _art(
        "ART021",
        "special tokens undefined",
        "eos_token and pad_token defined",
        "Without eos_token generation never stops on its own; without pad_token batched "
        "generation and padding collators fail ('Asking to pad but the tokenizer does not have a "
        "padding token'). A pad equal to eos is common; a collator that masks pad out of the "
        "labels then never trains the model to stop.",
    ),
    _art(
        "ART022",
        "chat template",
        "a chat template, identified by its sha256",
        "apply_chat_template and the engines' chat endpoints need the tokenizer's chat template "
        "(chat_template.jinja, chat_template.json or tokenizer_config.json); its sha256 is the "
        "value the result identity records. Without one, pass --chat-template to the engine.",
    ),
    _art(
        "ART040",
        "ONNX model the installed onnxruntime cannot load",
        "an IR version and opsets the installed onnxruntime implements",
        "An ONNX file records its IR version and the opset of each operator domain; an "
        "onnxruntime older than the exporter refuses it ('Unsupported model IR version', 'opset "
        "... is under development'). The IR version and opsets are read from the protobuf; "
        "onnxruntime itself is asked, in a child process, to create a CPU session. Export with "
        "the opset the runtime implements (torch.onnx.export(..., opset_version=N)) or upgrade "
        "onnxruntime.",
    ),
    _art(
        "ART041",
        "onnxruntime build and the CUDA / cuDNN it needs",
        "the onnxruntime wheel's providers, with the CUDA and cuDNN wheels they load",
        "The CPU wheel (onnxruntime) has CPUExecutionProvider only; onnxruntime-gpu's "
        "CUDAExecutionProvider loads the CUDA runtime and cuDNN of the major versions it was "
        "built with (a sourced table in artifacts/data/targets.json) and falls back to CPU, with a "
        "warning only, when they are missing.",
    ),
    _art(
        "ART050",
        "GGUF architecture unknown to the installed gguf package",
        "an architecture the installed llama.cpp gguf package names",
        "A GGUF file names its architecture, file type (quantization) and tensors in its header, "
        "read here with llama.cpp's own gguf package; an architecture that package does not name "
        "is one the matching llama.cpp release does not load ('unknown model architecture'). "
        "Upgrade llama.cpp (and pip install -U gguf).",
    ),
    _art(
        "ART030",
        "pickle in the artifact imports callables",
        "no pickle, or one that imports only tensor-rebuild helpers",
        "Loading a pickle (adapter_model.bin, pytorch_model.bin, optimizer.pt, .metadata) runs what "
        "its GLOBAL / STACK_GLOBAL opcodes import. The opcodes are read with the hygiene scanner, "
        "never unpickled; anything beyond the tensor allow-list is what "
        "torch.load(weights_only=True) refuses too.",
    ),
)

_FSDP_MARKS = (
    "_fsdp_wrapped_module",
    "_flat_param",
    "flat_param",
    "_checkpoint_wrapped_module",
    "_orig_mod.",
)
_LORA_KEY = re.compile(
    r"^(?P<module>.+)\.(?P<part>lora_A|lora_B|lora_embedding_A|lora_embedding_B|lora_magnitude_vector)"
    r"(?P<name>\.default)?(?:\.(?P<leaf>weight|bias))?$"
)
# DCP's own classes, which its .metadata pickle imports by design (and the path it was saved to)
_DCP_MODULES = ("torch.distributed.checkpoint.", "torch.distributed._shard.")
_DCP_PATHS = {("pathlib", "PosixPath"), ("pathlib", "WindowsPath"), ("pathlib", "PurePosixPath")}
SHOWN = 5


@dataclass(frozen=True)
class Options:
    target: str = "transformers"
    max_lora_rank: int | None = None


def _result(
    id: str,
    verdict: Verdict,
    observed: str = "",
    fix: str | None = None,
    *,
    subject: str | None = None,
    evidence: dict[str, str] | None = None,
) -> CheckResult:
    spec = CHECKS[id]
    return CheckResult(
        id=id,
        title=spec.title,
        verdict=verdict,
        observed=observed,
        expected=spec.expected,
        fix=fix,
        subject=subject,
        evidence=evidence or {},
    )


def _skip(id: str, reason: str) -> CheckResult:
    return CheckResult(id=id, title=CHECKS[id].title, verdict="skipped", reason=reason)


def _listed(items: list[str], n: int = SHOWN) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def _py(source: str) -> str:
    return command("python", "-c", source)


def judge_artifact(art: Artifact, base: Artifact | None, opts: Options) -> list[CheckResult]:
    """Every ART finding about ``art`` (and its ``base``, for an adapter), in ID order."""
    families: list[tuple[Iterator[CheckResult], tuple[str, ...]]] = []
    if art.headers or art.missing_shards or art.index_file:
        families += [
            (_shards(art), ("ART001", "ART002", "ART008")),
            (_shapes(art), ("ART003",)),
            (_tie(art), ("ART004",)),
            (_dtype(art), ("ART005",)),
        ]
    families += [(_wrapped(art), ("ART006",)), (_distcp(art), ("ART007",))]
    if art.is_adapter:
        families.append((_adapter(art, base, opts), tuple(f"ART01{i}" for i in range(7))))
    if art.tokenizer is not None:
        families.append((_tokenizer(art, base, opts), ("ART020", "ART021", "ART022")))
    families += [(_pickles(art), ("ART030",)), (_onnx(art), ("ART040", "ART041")), (_gguf(art), ("ART050",))]
    out: list[CheckResult] = []
    for findings, ids in families:
        out += _guarded(findings, ids)
    return sorted(out, key=lambda c: c.id)


def _guarded(findings: Iterator[CheckResult], ids: tuple[str, ...]) -> list[CheckResult]:
    """The findings of one family of checks (``ids``); one that raises keeps what it yielded
    and adds an ``error`` result on the first ID it had not reached: a bug in a check never
    passes the artifact, nor ends the command with a traceback."""
    from stackcheck.errors import InputError
    from stackcheck.models.finding import internal_error

    out: list[CheckResult] = []
    try:
        out.extend(findings)
    except InputError:
        raise
    except Exception as exc:
        done = {c.id for c in out}
        at = next((i for i in ids if i not in done), ids[-1])
        reason = internal_error(exc, f"check {at}")
        out.append(CheckResult(id=at, title=CHECKS[at].title, verdict="error", reason=reason))
    return out


# ---- checkpoint ------------------------------------------------------------------------


def _shards(art: Artifact) -> Iterator[CheckResult]:
    idx = art.index_file
    if idx is not None:
        if art.missing_shards:
            names = sorted(art.missing_shards)
            lost = sorted(t for t, s in art.weight_map.items() if s in art.missing_shards)
            yield _result(
                "ART001",
                "blocked",
                f"{idx} names {len(names)} shard(s) not in {art.root}: {_listed(names)} "
                f"({len(lost)} tensor(s), e.g. {_listed(lost, 2)})",
                "download them again from the model's repository at the revision of the others, e.g. "
                + code(command("huggingface-cli", "download", "REPO", *names, "--local-dir", str(art.root))),
                evidence={"missing": " ".join(names)},
            )
        else:
            yield _result("ART001", "ok", f"{idx}: all {len(set(art.weight_map.values()))} shards present")
    twice = sorted(t for t, s in art.locations.items() if len(s) > 1)
    misplaced = sorted(
        t
        for t, shard in art.weight_map.items()
        if shard in art.headers and t not in art.headers[shard].tensors
    )
    problems = []
    if twice:
        problems.append(
            f"{len(twice)} tensor(s) in more than one shard: "
            + _listed([f"{t} ({', '.join(art.locations[t])})" for t in twice])
        )
    if misplaced:
        problems.append(
            f"{len(misplaced)} tensor(s) the index places in a shard that lacks them: "
            + _listed([f"{t} (index: {art.weight_map[t]})" for t in misplaced])
        )
    if problems:
        yield _result(
            "ART002",
            "blocked",
            "; ".join(problems),
            "re-save config, shards and index together from the loaded model: "
            + _py(
                "import sys; from transformers import AutoModelForCausalLM as M; "
                'M.from_pretrained(sys.argv[1], dtype="auto").save_pretrained(sys.argv[2])'
            )
            + " TRUSTED_COPY OUT_DIR",
            evidence={"duplicated": " ".join(twice), "misplaced": " ".join(misplaced)},
        )
    else:
        yield _result("ART002", "ok", f"{len(art.locations)} tensors, each in one shard")
    cut = sorted(
        ((name, t) for name, h in art.headers.items() for t in h.past_end()), key=lambda c: (c[0], c[1].begin)
    )
    if cut:
        files = sorted({name for name, _ in cut})
        yield _result(
            "ART008",
            "blocked",
            f"{_listed(files)}: {len(cut)} tensor(s) end past the end of the file "
            f"(e.g. {cut[0][1].name}, data ends at byte {cut[0][1].end} of "
            f"{art.headers[cut[0][0]].data_bytes})",
            "download the file again (the copy was cut off): "
            + command("huggingface-cli", "download", "REPO", *files, "--local-dir", str(art.root)),
        )


MAX_LAYERS = 100_000  # far above any published model (a few hundred layers)
OTHER_CONFIG = (
    "config.json and the weights come from different models: copy the config.json that was saved "
    "with these weights"
)


def _dims(cfg: dict[str, Any]) -> dict[str, int] | None:
    try:
        hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
        kv = int(cfg.get("num_key_value_heads") or heads)
        head_dim = int(cfg.get("head_dim") or hidden // heads)
        return {
            "hidden_size": hidden,
            "vocab_size": int(cfg["vocab_size"]),
            "intermediate_size": int(cfg["intermediate_size"]),
            "q_dim": heads * head_dim,
            "kv_dim": kv * head_dim,
            "num_hidden_layers": int(cfg["num_hidden_layers"]),
        }
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def _shapes(art: Artifact) -> Iterator[CheckResult]:
    fam = family_of(art.config)
    if art.config is None:
        yield _skip("ART003", "no config.json beside the weights")
        return
    if fam is None:
        yield _skip("ART003", f"no tensor layout known for model_type {art.config.get('model_type')!r}")
        return
    dims = _dims(art.config)
    if dims is None:
        yield _result(
            "ART003",
            "blocked",
            "config.json lacks hidden_size, num_attention_heads, intermediate_size, vocab_size or "
            "num_hidden_layers (or one is not a number)",
            "re-save the config from the model: "
            + _py("import sys; from transformers import AutoConfig; AutoConfig.from_pretrained(sys.argv[1])")
            + " MODEL_ID",
        )
        return
    name, family = fam
    layers = dims["num_hidden_layers"]
    if layers > MAX_LAYERS:  # the expected tensor names are listed per layer: bounded memory
        yield _result(
            "ART003",
            "blocked",
            f"config.json: num_hidden_layers {layers}: expected at most {MAX_LAYERS}",
            OTHER_CONFIG,
        )
        return
    missing, wrong = [], []
    lost = {t for t, shard in art.weight_map.items() if shard in art.missing_shards}  # ART001's
    for template, axes in family["tensors"].items():
        names = [template.format(i=i) for i in range(layers)] if "{i}" in template else [template]
        want = tuple(dims[a] for a in axes)
        for tname in names:
            t = art.tensor(tname)
            if t is None:
                if template not in family["optional"] and tname not in lost:
                    missing.append(tname)
            elif t.shape != want:
                wrong.append(f"{tname} {list(t.shape)} (config: {list(want)})")
    prefix = family["layer_prefix"]
    found_layers = {int(n[len(prefix) :].split(".", 1)[0]) for n in art.locations if n.startswith(prefix)}
    extra = sorted(i for i in found_layers if i >= layers)
    if not (missing or wrong or extra):
        yield _result("ART003", "ok", f"{name}-style: {layers} layers, every shape as config.json implies")
        return
    parts = []
    if wrong:
        parts.append(f"{len(wrong)} shape(s) differ: {_listed(wrong, 3)}")
    if missing:
        parts.append(f"{len(missing)} tensor(s) missing: {_listed(missing, 3)}")
    if extra:
        parts.append(
            f"weights for layers {_listed([str(i) for i in extra])} but num_hidden_layers is {layers}"
        )
    vocab_only = bool(wrong) and all(("embed_tokens" in w or "lm_head" in w) for w in wrong) and not missing
    fix = (
        "the embedding was resized without updating config.json (or the reverse): load, resize and "
        "save both: "
        + _py(
            "import sys; from transformers import AutoModelForCausalLM as M, AutoTokenizer as T; "
            "m = M.from_pretrained(sys.argv[1], ignore_mismatched_sizes=True); "
            "m.resize_token_embeddings(len(T.from_pretrained(sys.argv[1]))); m.save_pretrained(sys.argv[2])"
        )
        + " "
        + command(str(art.root), "OUT_DIR")
        if vocab_only
        else OTHER_CONFIG + ", or re-save both from the trained model with model.save_pretrained(OUT_DIR)"
    )
    yield _result("ART003", "blocked", "; ".join(parts), fix, evidence={"family": name})


def _tie(art: Artifact) -> Iterator[CheckResult]:
    if art.config is None:
        return
    fam = family_of(art.config)
    lm_head = fam[1]["lm_head"] if fam else "lm_head.weight"
    default = fam[1].get("tie_word_embeddings_default", False) if fam else True
    tied = bool(art.config.get("tie_word_embeddings", default))
    has_head = lm_head in art.locations
    cfg = str(art.root / "config.json")
    if tied and has_head:
        yield _result(
            "ART004",
            "warning",
            f"tie_word_embeddings is true but {lm_head} is saved: loaders tie it to the embedding "
            "and ignore the saved head",
            "if the head was trained apart from the embedding, say so in config.json: "
            + _py(_set_json("tie_word_embeddings", False))
            + " "
            + command(cfg)
            + "; else drop lm_head.weight by re-saving with save_pretrained",
        )
    elif not tied and not has_head:
        yield _result(
            "ART004",
            "blocked",
            f"tie_word_embeddings is false and {lm_head} is not saved: it is initialised at random on load",
            "if the model was trained with tied embeddings: "
            + _py(_set_json("tie_word_embeddings", True))
            + " "
            + command(cfg)
            + "; else save the trained lm_head with the other weights",
        )
    else:
        yield _result(
            "ART004",
            "ok",
            f"tie_word_embeddings {str(tied).lower()}, {lm_head} {'saved' if has_head else 'not saved'}",
        )


def _set_json(key: str, value: object) -> str:
    """Python source that sets ``key`` in the JSON file named by its first argument."""
    return (
        "import json, sys; p = sys.argv[1]; d = json.load(open(p)); "
        f'd["{key}"] = {_literal(value)}; json.dump(d, open(p, "w"), indent=2)'
    )


def _literal(value: object) -> str:
    """``value`` as Python source, strings in double quotes (the source goes in single quotes)."""
    import json

    return json.dumps(value) if isinstance(value, str) else repr(value)


def _floats(tensors: list[TensorInfo]) -> Counter[str]:
    return Counter(t.dtype for t in tensors if t.dtype in FLOAT_DTYPES)


def _declared_dtype(cfg: dict[str, Any] | None) -> str | None:
    value = (cfg or {}).get("torch_dtype") or (cfg or {}).get("dtype")
    return TORCH_DTYPES.get(str(value).replace("torch.", "")) if value else None


def _dtype(art: Artifact) -> Iterator[CheckResult]:
    declared = _declared_dtype(art.config)
    stored = _floats([t for h in art.headers.values() for t in h.tensors.values()])
    if declared is None or not stored:
        return
    other = {d: n for d, n in stored.items() if d != declared}
    if not other:
        yield _result("ART005", "ok", f"{sum(stored.values())} floating-point tensors in {declared}")
        return
    seen = ", ".join(f"{n} in {d}" for d, n in sorted(other.items()))
    torch_name = next(k for k, v in TORCH_DTYPES.items() if v == declared)
    yield _result(
        "ART005",
        "warning",
        f"config.json declares {torch_name} ({declared}); {seen} of {sum(stored.values())} floating-point "
        "tensors: loaders cast them on load",
        "save in the dtype you serve: "
        + _py(
            "import sys, torch; from transformers import AutoModelForCausalLM as M; "
            f"M.from_pretrained(sys.argv[1], dtype=torch.{torch_name}).save_pretrained(sys.argv[2])"
        )
        + " "
        + command(str(art.root), "OUT_DIR"),
        evidence={"declared": declared, **{f"stored.{d}": str(n) for d, n in stored.items()}},
    )


def _wrapped(art: Artifact) -> Iterator[CheckResult]:
    names = list(art.locations)
    if art.adapter_header is not None:
        names += list(art.adapter_header.tensors)
    if not names:
        return
    hits = sorted(n for n in names if any(m in n for m in _FSDP_MARKS))
    if not hits:
        yield _result("ART006", "ok", f"{len(names)} tensor names, none with wrapper names")
        return
    compiled = all("_orig_mod." in n for n in hits)
    fix = (
        "save the compiled model's inner module: model._orig_mod.save_pretrained(OUT_DIR) "
        "(or strip the '_orig_mod.' prefix from every key)"
        if compiled
        else "save a full, unflattened state dict on rank 0: get_model_state_dict(model, "
        "options=StateDictOptions(full_state_dict=True, cpu_offload=True)) from "
        "torch.distributed.checkpoint.state_dict, then save_pretrained(OUT_DIR, state_dict=sd)"
    )
    yield _result(
        "ART006",
        "blocked",
        f"{len(hits)} tensor name(s) carry {'torch.compile' if compiled else 'FSDP'} wrapper names: "
        f"{_listed(hits, 3)}",
        fix,
    )


def _distcp(art: Artifact) -> Iterator[CheckResult]:
    if not (art.distcp_ranks or art.distcp_metadata):
        return
    ranks = sorted(art.distcp_ranks)
    world = len(ranks)
    out = "OUT.pt"
    convert = command(
        "python", "-m", "torch.distributed.checkpoint.format_utils", "dcp_to_torch", str(art.root), out
    )
    if not art.distcp_metadata:
        yield _result(
            "ART007",
            "blocked",
            f"{world} rank file(s) (__RANK_N.distcp) but no .metadata: torch.distributed.checkpoint "
            "cannot load it at any world size",
            "copy the .metadata file written with these shards (rank 0 writes it at the end of the save)",
            evidence={"world_size": str(world)},
        )
        return
    yield _result(
        "ART007",
        "warning",
        f"torch.distributed checkpoint written by {world} rank(s) (ranks {_listed([str(r) for r in ranks])})"
        ": from_pretrained, torch.load and the engines cannot read it; "
        "torch.distributed.checkpoint.load reshards it for another world size",
        f"convert it once for a plain loader: {convert}",
        evidence={"world_size": str(world)},
    )


# ---- adapter ---------------------------------------------------------------------------


def _adapter_modules(art: Artifact) -> tuple[dict[str, dict[str, TensorInfo]], list[str], list[str]]:
    """LoRA tensors by module path (``model.layers.0.self_attn.q_proj``) and part; the keys
    that keep the adapter name (``.default.``); the keys without PEFT's ``base_model.model.``."""
    by_module: dict[str, dict[str, TensorInfo]] = {}
    named, unprefixed = [], []
    for key, t in (art.adapter_header.tensors if art.adapter_header else {}).items():
        m = _LORA_KEY.match(key)
        if not m:
            continue
        module = m.group("module")
        if m.group("name"):
            named.append(key)
        if module.startswith("base_model.model."):
            module = module[len("base_model.model.") :]
        else:
            unprefixed.append(key)
        by_module.setdefault(module, {})[
            m.group("part") + ("." + m.group("leaf") if m.group("leaf") else "")
        ] = t
    return by_module, named, unprefixed


def _rank(cfg: dict[str, Any]) -> int:
    ranks = [cfg.get("r") or 8, *(cfg.get("rank_pattern") or {}).values()]
    return max(int(r) for r in ranks if isinstance(r, (int, float)))


def _merge_fix(art: Artifact) -> str:
    return (
        "merge it into the base and serve the merged model: "
        + _py(
            "import sys; from peft import AutoPeftModelForCausalLM as A; "
            "A.from_pretrained(sys.argv[1]).merge_and_unload().save_pretrained(sys.argv[2])"
        )
        + " "
        + command(str(art.root), "MERGED_DIR")
    )


def _adapter(art: Artifact, base: Artifact | None, opts: Options) -> Iterator[CheckResult]:
    cfg = art.adapter_config or {}
    tgt = target(opts.target)
    by_module, named, unprefixed = _adapter_modules(art)
    yield from _adapter_dtype(art, base, opts, tgt)
    yield from _adapter_rank(art, cfg, opts, tgt, base)
    leaves = sorted({m.rsplit(".", 1)[-1] for m in by_module})
    declared = cfg.get("target_modules")
    if isinstance(declared, list):
        leaves = sorted(set(leaves) | {str(d) for d in declared})
    fam = family_of(base.config if base else None)
    supported = (tgt.get("target_modules") or {}).get(fam[0]) if fam else None
    if tgt.get("target_modules") is None:
        yield _result(
            "ART012", "ok", f"{opts.target} adapts any Linear/Embedding module: {', '.join(leaves)}"
        )
    elif base is None or fam is None or supported is None:
        yield _skip("ART012", "give the base model (--base) of an architecture the table knows")
    else:
        bad = [m for m in leaves if m not in supported]
        if bad:
            yield _result(
                "ART012",
                "blocked",
                f"{opts.target} supports LoRA on {', '.join(supported)} for {fam[0]}-style models; "
                f"the adapter targets {', '.join(bad)}",
                _merge_fix(art),
                evidence={"unsupported": " ".join(bad)},
            )
        else:
            yield _result("ART012", "ok", f"targets {', '.join(leaves)}: all supported by {opts.target}")
    saved = [str(m) for m in (cfg.get("modules_to_save") or [])]
    if saved and not tgt["modules_to_save"]:
        yield _result(
            "ART013",
            "blocked",
            f"modules_to_save {', '.join(saved)}: {opts.target} loads LoRA pairs only "
            "and refuses full modules",
            _merge_fix(art),
        )
    elif saved:
        yield _result("ART013", "ok", f"modules_to_save {', '.join(saved)}: {opts.target} loads them")
    yield from _declared_base(art, base, cfg)
    if named or unprefixed:
        bad_keys = sorted(set(named) | set(unprefixed))
        what = "keep the adapter name (.default.)" if named else "lack PEFT's base_model.model. prefix"
        yield _result(
            "ART015",
            "blocked",
            f"{len(bad_keys)} of {len(art.adapter_header.tensors) if art.adapter_header else 0} tensor names "
            f"{what}: {_listed(bad_keys, 2)}",
            "save with PEFT, which writes the names loaders map: peft_model.save_pretrained(OUT_DIR) "
            "(not torch/safetensors save of peft_model.state_dict())",
        )
    elif art.adapter_header is not None:
        yield _result("ART015", "ok", f"{len(art.adapter_header.tensors)} tensors with PEFT's names")
    yield from _adapter_shapes(by_module, base, cfg)


def _adapter_dtype(art: Artifact, base: Artifact | None, opts: Options, tgt: dict) -> Iterator[CheckResult]:
    if art.adapter_header is None:
        return
    stored = _floats(list(art.adapter_header.tensors.values()))
    if base is None:
        return
    common = _floats([t for h in base.headers.values() for t in h.tensors.values()]).most_common(1)
    want = _declared_dtype(base.config) or (common[0][0] if common else None)
    if want is None or not stored:
        return
    other = sorted(d for d in stored if d != want)
    if not other:
        yield _result("ART010", "ok", f"adapter and base both {want}")
        return
    torch_name = next((k for k, v in TORCH_DTYPES.items() if v == want), "bfloat16")
    path = str(art.root / (art.adapter_weights or "adapter_model.safetensors"))
    overflow = " (values above 65504 become inf)" if want == "F16" and "BF16" in other else ""
    yield _result(
        "ART010",
        "warning",
        f"adapter stored in {', '.join(other)}, base in {want}: {opts.target} {tgt['dtype']}{overflow}",
        "cast the adapter to the base's dtype once: "
        + _py(
            "import sys, torch; from safetensors.torch import load_file, save_file; "
            f"sd = load_file(sys.argv[1]); save_file({{k: v.to(torch.{torch_name}) for k, v in sd.items()}}, "
            'sys.argv[1], metadata={"format": "pt"})'
        )
        + " "
        + command(path),
        evidence={"adapter": " ".join(sorted(stored)), "base": want},
    )


def _serve(tgt: dict, art: Artifact, base: Artifact | None, cfg: dict[str, Any], *extra: str) -> str:
    """The engine's start command for this adapter (the table's ``serve`` argv), plus ``extra``."""
    name = str(base.root) if base is not None else str(cfg.get("base_model_name_or_path") or "BASE")
    argv = [a.format(base=name, adapter=str(art.root)) for a in tgt["serve"]]
    return command(*argv, *extra)


def _adapter_rank(
    art: Artifact, cfg: dict[str, Any], opts: Options, tgt: dict, base: Artifact | None
) -> Iterator[CheckResult]:
    rank = _rank(cfg)
    alpha = cfg.get("lora_alpha") or 8
    rs = bool(cfg.get("use_rslora"))
    scale = alpha / sqrt(rank) if rs else alpha / rank
    ev = {"r": str(rank), "lora_alpha": str(alpha), "scaling": f"{scale:g}"}
    limits = tgt["max_lora_rank"]
    problems, fixes = [], []
    limit = opts.max_lora_rank if opts.max_lora_rank is not None else limits.get("default")
    if limit is not None and rank > limit:
        given = "--max-lora-rank " + str(limit) + ("" if opts.max_lora_rank is not None else " (the default)")
        problems.append(f"rank {rank} above {given}")
        allowed = [a for a in (limits.get("allowed") or [rank]) if a >= rank]
        if allowed and tgt.get("serve"):
            fixes.append(
                f"start {opts.target} with {limits['flag']} {allowed[0]}: "
                + _serve(tgt, art, base, cfg, limits["flag"], str(allowed[0]))
            )
        else:
            fixes.append(_merge_fix(art))
    accepted = limits.get("allowed")
    if opts.max_lora_rank is not None and accepted and opts.max_lora_rank not in accepted:
        # the engine refuses to start with it, whatever the adapter's rank
        problems.append(
            f"{limits['flag']} {opts.max_lora_rank} is not a value {opts.target} accepts "
            f"(one of {', '.join(map(str, accepted))})"
        )
        fit = [a for a in accepted if a >= max(rank, opts.max_lora_rank)]
        if fit and tgt.get("serve"):
            fixes.append(
                f"start {opts.target} with {limits['flag']} {fit[0]}: "
                + _serve(tgt, art, base, cfg, limits["flag"], str(fit[0]))
            )
    if cfg.get("use_dora") and not tgt["dora"]:
        problems.append(f"DoRA (use_dora true): {opts.target} refuses it")
        fixes.append(_merge_fix(art))
    if cfg.get("bias", "none") not in ("none", None) and not tgt["bias"]:
        problems.append(f"bias {cfg.get('bias')!r}: {opts.target} loads no adapter bias")
        fixes.append(_merge_fix(art))
    if problems:
        yield _result(
            "ART011",
            "blocked",
            f"{'; '.join(problems)} (lora_alpha {alpha}, scaling {scale:g})",
            "; or ".join(dict.fromkeys(fixes)),
            evidence=ev,
        )
    else:
        within = f" (limit {limit})" if limit is not None else ""
        yield _result(
            "ART011", "ok", f"rank {rank}{within}, lora_alpha {alpha}, scaling {scale:g}", evidence=ev
        )


def _hub_revision(base: Artifact) -> str:
    """The commit of the hub cache snapshot the base lives in ("" when it is not in one)."""
    from stackcheck.artifacts.identity import hub_snapshot

    found = hub_snapshot(base.root)
    return found[1] if found else ""


def _same_base(declared: str, base: Artifact) -> bool:
    from stackcheck.artifacts.identity import hub_snapshot

    hub = hub_snapshot(base.root)
    given = {str(base.root), base.root.name, str((base.config or {}).get("_name_or_path", ""))}
    if hub:
        given.add(hub[0])
    try:
        from pathlib import Path

        if Path(declared).exists() and Path(declared).resolve() == base.root.resolve():
            return True
    except OSError:
        pass
    return declared in given or declared.rstrip("/").rsplit("/", 1)[-1] == base.root.name


def _declared_base(art: Artifact, base: Artifact | None, cfg: dict[str, Any]) -> Iterator[CheckResult]:
    declared = cfg.get("base_model_name_or_path")
    revision = cfg.get("revision")
    ev = {"base_model": str(declared or ""), "revision": str(revision or "")}
    rev = f" at revision {revision}" if revision else " (no revision recorded)"
    if not isinstance(declared, str) or not declared:
        yield _result(
            "ART014",
            "warning",
            "adapter_config.json records no base_model_name_or_path",
            "record it: "
            + _py(_set_json("base_model_name_or_path", "ORG/BASE"))
            + " "
            + command(str(art.root / "adapter_config.json")),
            evidence=ev,
        )
    elif base is not None and revision and (at := _hub_revision(base)) and at != revision:
        yield _result(
            "ART014",
            "warning",
            f"adapter declares {declared} at revision {revision}; the base given is revision {at}",
            "check against the revision it declares: "
            + command("huggingface-cli", "download", declared, "--revision", str(revision)),
            evidence=ev,
        )
    elif base is not None and not _same_base(declared, base):
        yield _result(
            "ART014",
            "warning",
            f"adapter declares base {declared}{rev}; the base given is {base.root}",
            "check with the base it declares: "
            + command("stackcheck", "artifact", "check", str(art.root), "--base", declared),
            evidence=ev,
        )
    else:
        yield _result("ART014", "ok", f"base {declared}{rev}", evidence=ev)


def _adapter_shapes(
    by_module: dict[str, dict[str, TensorInfo]], base: Artifact | None, cfg: dict[str, Any]
) -> Iterator[CheckResult]:
    if base is None or not base.locations or not by_module:
        return
    problems = []
    for module, parts in sorted(by_module.items()):
        w = base.tensor(module + ".weight")
        if w is None:
            problems.append(f"{module}: not in the base")
            continue
        a, b = parts.get("lora_A.weight"), parts.get("lora_B.weight")
        if a is not None and len(a.shape) == 2 and len(w.shape) == 2 and a.shape[1] != w.shape[1]:
            problems.append(f"{module}.lora_A {list(a.shape)} vs base in_features {w.shape[1]}")
        if b is not None and len(b.shape) == 2 and len(w.shape) == 2 and b.shape[0] != w.shape[0]:
            problems.append(f"{module}.lora_B {list(b.shape)} vs base out_features {w.shape[0]}")
    if problems:
        yield _result(
            "ART016",
            "blocked",
            f"{len(problems)} problem(s): {_listed(problems, 3)}",
            "give the base the adapter was trained on (adapter_config.json base_model_name_or_path)",
        )
    else:
        yield _result("ART016", "ok", f"{len(by_module)} adapted modules match the base's shapes")


# ---- tokenizer -------------------------------------------------------------------------


def _embedding_rows(art: Artifact, base: Artifact | None) -> tuple[int, str] | None:
    """Rows of the input embedding the tokenizer indexes: the adapter's own saved embedding,
    else the model's (or the base's) embed_tokens."""
    if art.adapter_header is not None:
        for key, t in art.adapter_header.tensors.items():
            if key.endswith(("embed_tokens.weight", "wte.weight", "word_embeddings.weight")) and t.shape:
                return t.shape[0], f"the adapter's {key}"
    for owner in (art, base):
        if owner is None:
            continue
        for key, shards in owner.locations.items():
            if key.endswith(("embed_tokens.weight", "wte.weight", "word_embeddings.weight")):
                t = owner.headers[shards[0]].tensors[key]
                if t.shape:
                    who = "the base's" if owner is base else "the"
                    return t.shape[0], f"{who} {key}"
    return None


def _tokenizer(art: Artifact, base: Artifact | None, opts: Options) -> Iterator[CheckResult]:
    tok = art.tokenizer
    assert tok is not None
    rows = _embedding_rows(art, base)
    if tok.size is None:
        yield _skip("ART020", "no tokenizer.json or added_tokens_decoder to count the tokens of")
    elif rows is None:
        yield _skip("ART020", "no embedding to compare with (give the base model with --base)")
    elif tok.size > rows[0]:
        over = sorted((i, c) for i, c in tok.added if i >= rows[0])
        shown = _listed([f"{c!r} ({i})" for i, c in over], 3)
        if art.is_adapter:
            fix = (
                "train again with the embeddings resized and saved: "
                "model.resize_token_embeddings(len(tokenizer)) "
                "before get_peft_model, and LoraConfig(modules_to_save=['embed_tokens', 'lm_head']) "
                "(or trainable_token_indices)"
            )
        else:
            fix = (
                "resize the embedding to the tokenizer and save: "
                + _py(
                    "import sys; from transformers import AutoModelForCausalLM as M, AutoTokenizer as T; "
                    "m = M.from_pretrained(sys.argv[1]); "
                    "m.resize_token_embeddings(len(T.from_pretrained(sys.argv[1]))); "
                    "m.save_pretrained(sys.argv[1])"
                )
                + " "
                + command(str(art.root))
            )
        yield _result(
            "ART020",
            "blocked",
            f"tokenizer has {tok.size} ids ({tok.vocab if tok.vocab is not None else '?'} in the vocabulary, "
            f"{len(tok.added)} added); {rows[1]} has {rows[0]} rows: ids {shown} index past it",
            fix,
            evidence={"tokenizer_size": str(tok.size), "embedding_rows": str(rows[0])},
        )
    else:
        yield _result("ART020", "ok", f"{tok.size} token ids, {rows[1]} has {rows[0]} rows")
    pad, eos = tok.special.get("pad_token"), tok.special.get("eos_token")
    if eos is None or pad is None:
        lacking = " and ".join(r for r, v in (("eos_token", eos), ("pad_token", pad)) if v is None)
        yield _result(
            "ART021",
            "warning",
            f"tokenizer defines no {lacking}",
            "set it and save the tokenizer: "
            + _py(
                "import sys; from transformers import AutoTokenizer as T; "
                "t = T.from_pretrained(sys.argv[1]); "
                "t.pad_token = t.pad_token or t.eos_token; t.save_pretrained(sys.argv[1])"
            )
            + " "
            + command(str(art.root))
            if eos is not None
            else "take the tokenizer files saved with the model's training run",
        )
    else:
        same = " (pad is eos: mask only the padding, not eos, out of the labels)" if pad == eos else ""
        yield _result("ART021", "ok", f"eos {eos!r}, pad {pad!r}{same}")
    if tok.chat_template is not None:
        import hashlib

        digest = hashlib.sha256(tok.chat_template.encode("utf-8")).hexdigest()
        yield _result(
            "ART022",
            "ok",
            f"chat template from {tok.template_file}, sha256 {digest}",
            evidence={"chat_template_sha256": digest, "file": str(tok.template_file)},
        )
    else:
        flag = " (or start the engine with --chat-template FILE)" if opts.target in ("vllm", "sglang") else ""
        yield _result(
            "ART022",
            "warning",
            "no chat template in the tokenizer files: apply_chat_template and chat endpoints refuse",
            "save the template the model was trained with: tokenizer.chat_template = TEMPLATE; "
            f"tokenizer.save_pretrained(DIR){flag}",
        )


# ---- pickles ---------------------------------------------------------------------------


def _pickles(art: Artifact) -> Iterator[CheckResult]:
    from stackcheck.hygiene.pickles import is_dangerous

    for rel, scan in art.pickles:
        unsafe = scan.unsafe()
        if rel.rsplit("/", 1)[-1] == ".metadata":
            unsafe = [
                (m, n) for m, n in unsafe if not m.startswith(_DCP_MODULES) and (m, n) not in _DCP_PATHS
            ]
        if unsafe or scan.unresolved:
            shown = [f"{m}.{n}" + (" (runs code)" if is_dangerous(m, n) else "") for m, n in unsafe]
            if scan.unresolved:
                shown.append(f"{scan.unresolved} import(s) computed at load time")
            runs = any(is_dangerous(m, n) for m, n in unsafe)
            fix = (
                "do not load it: delete it and find out where it came from: "
                + command("rm", str(art.root / rel))
                if runs
                else "load it only from a trusted source, once, and re-save its tensors with "
                "safetensors.torch.save_file(state_dict, PATH.safetensors); then delete it"
            )
            yield _result(
                "ART030",
                "blocked",
                f"unpickling imports {_listed(shown, 6)}",
                fix,
                subject=rel,
                evidence={"imports": " ".join(f"{m}.{n}" for m, n in unsafe)},
            )
        elif scan.limit or scan.error:
            yield _result(
                "ART030",
                "warning",
                f"not read to its end: {scan.limit or scan.error}",
                "replace it with a safetensors copy from a trusted source",
                subject=rel,
            )
        else:
            yield _result(
                "ART030",
                "ok",
                "pickle of tensors only (torch.load(weights_only=True) loads it)",
                subject=rel,
            )


# ---- ONNX and GGUF ---------------------------------------------------------------------


def _onnx(art: Artifact) -> Iterator[CheckResult]:
    from stackcheck.artifacts.formats import installed_versions, onnxruntime_installed, ort_flavor_providers

    for f in art.onnx:
        subject = str(f.path)
        if f.unread:
            yield _skip("ART040", f.unread)
            continue
        opsets = ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in sorted(f.opsets.items()))
        ev = {"ir_version": str(f.ir_version), "opsets": opsets, "producer": f.producer}
        seen = f"IR version {f.ir_version}, opsets {opsets}" + (f" (from {f.producer})" if f.producer else "")
        if not f.runtime:
            yield _skip("ART040", f"{seen}; no onnxruntime installed to load it")
        elif f.session_error:
            yield _result(
                "ART040",
                "blocked",
                f"{seen}: {f.runtime} refuses it: {f.session_error}",
                "export again with an opset this onnxruntime implements, torch.onnx.export(..., "
                "opset_version=N), or upgrade it: "
                + command("python", "-m", "pip", "install", "-U", "onnxruntime"),
                subject=subject,
                evidence=ev,
            )
        else:
            yield _result("ART040", "ok", f"{seen}: {f.runtime} loads it", subject=subject, evidence=ev)
    if not art.onnx:
        return
    ort = onnxruntime_installed()
    if ort is None:
        return
    dist, version = ort
    providers = ort_flavor_providers(dist)
    if "CUDAExecutionProvider" not in providers:
        yield _result("ART041", "ok", f"{dist} {version}: {', '.join(providers)}")
        return
    table = targets_table()["onnxruntime_gpu"]
    from stackcheck.versions import parse_version

    v = parse_version(version)
    build = next(
        (b for b in table["builds"] if v is not None and (p := parse_version(b["from"])) and v >= p), None
    )
    if build is None:
        yield _skip("ART041", f"no CUDA / cuDNN requirements known for {dist} {version}")
        return
    wheels = {k: w.format(cuda=build["cuda"]) for k, w in table["wheels"].items()}
    have = installed_versions(tuple(wheels.values()))
    cudnn = have.get(wheels["cudnn"], "")
    need = f"CUDA {build['cuda']} and cuDNN {build['cudnn']}"
    if cudnn and cudnn.split(".")[0] != build["cudnn"]:
        yield _result(
            "ART041",
            "blocked",
            f"{dist} {version} needs {need}; {wheels['cudnn']} {cudnn} is installed: "
            "CUDAExecutionProvider fails to load and sessions fall back to CPU",
            command("python", "-m", "pip", "install", f"{wheels['cudnn']}=={build['cudnn']}.*"),
        )
    elif not cudnn:
        yield _result(
            "ART041",
            "warning",
            f"{dist} {version} needs {need}; no {wheels['cudnn']} wheel installed (a system cuDNN "
            f"{build['cudnn']} on the library path serves too)",
            command(
                "python", "-m", "pip", "install", f"{wheels['cudnn']}=={build['cudnn']}.*", wheels["cuda"]
            ),
        )
    else:
        yield _result("ART041", "ok", f"{dist} {version}: {', '.join(providers)}; {wheels['cudnn']} {cudnn}")


def _gguf(art: Artifact) -> Iterator[CheckResult]:
    for f in art.gguf:
        if f.unread:
            yield _skip("ART050", f.unread)
            continue
        types = ", ".join(f"{n} {k}" for k, n in sorted(f.tensor_types.items()))
        seen = f"{f.architecture or '?'}, file type {f.file_type or '?'}, {f.tensor_count} tensors ({types})"
        ev = {"architecture": f.architecture, "file_type": f.file_type, "tensors": str(f.tensor_count)}
        if f.arch_known:
            yield _result("ART050", "ok", seen, subject=str(f.path), evidence=ev)
        else:
            yield _result(
                "ART050",
                "blocked",
                f"{seen}: architecture {f.architecture!r} is not among the {f.known_architectures} "
                "the installed gguf package names",
                "use a llama.cpp release that supports it, and "
                + command("python", "-m", "pip", "install", "-U", "gguf"),
                subject=str(f.path),
                evidence=ev,
            )
