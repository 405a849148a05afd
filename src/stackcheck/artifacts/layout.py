"""What an artifact directory holds, read from its small files and safetensors headers only.

:func:`gather` is the one impure step of ``artifact check``: it reads ``config.json``,
``adapter_config.json``, ``generation_config.json``, the tokenizer files, the shard index and
every safetensors header, finds torch.distributed checkpoint files and scans every pickle by
its opcodes (:mod:`stackcheck.hygiene.pickles`, never unpickled). The checks
(:mod:`stackcheck.artifacts.checks`) judge the :class:`Artifact` it returns.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stackcheck.artifacts.headers import Header, read_header
from stackcheck.errors import InputError

__all__ = ["Artifact", "Tokenizer", "file_sha256", "gather", "read_json"]

MAX_JSON_BYTES = 64 * 1024 * 1024  # a tokenizer.json of a 256k vocabulary is about 35 MB
MAX_FILES = 20_000  # files looked at for pickles and distributed-checkpoint shards
MAX_DEPTH = 4
INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
ADAPTER_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")
PICKLE_SUFFIXES = {".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle", ".joblib"}
TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")
_DISTCP = re.compile(r"__(\d+)_(\d+)\.distcp$")


@dataclass
class Tokenizer:
    files: list[str] = field(default_factory=list)
    vocab: int | None = None  # ids in the base vocabulary (tokenizer.json model.vocab)
    size: int | None = None  # len(tokenizer): the highest token id + 1, added tokens included
    added: list[tuple[int, str]] = field(default_factory=list)
    special: dict[str, str] = field(default_factory=dict)  # pad_token / eos_token / bos_token / unk_token
    chat_template: str | None = None
    template_file: str | None = None
    digest: str = ""  # sha256 over the tokenizer files, in name order


@dataclass
class Artifact:
    root: Path
    config: dict[str, Any] | None = None
    adapter_config: dict[str, Any] | None = None
    generation_config: dict[str, Any] | None = None
    tokenizer: Tokenizer | None = None
    index_file: str | None = None
    weight_map: dict[str, str] = field(default_factory=dict)  # tensor → shard, from the index
    missing_shards: list[str] = field(default_factory=list)
    headers: dict[str, Header] = field(default_factory=dict)  # shard file name → its header
    locations: dict[str, list[str]] = field(default_factory=dict)  # tensor → shards holding it
    adapter_header: Header | None = None
    adapter_weights: str | None = None
    pickles: list[tuple[str, Any]] = field(default_factory=list)  # (relative path, PickleScan)
    distcp_ranks: set[int] = field(default_factory=set)
    distcp_metadata: bool = False
    files: list[str] = field(default_factory=list)  # every file found, relative
    onnx: list[Any] = field(default_factory=list)  # formats.OnnxFacts of each .onnx file
    gguf: list[Any] = field(default_factory=list)  # formats.GgufFacts of each .gguf file
    pickle_budget: Any = None  # hygiene.pickles.RunBudget shared by the artifact's pickles

    @property
    def is_adapter(self) -> bool:
        return self.adapter_config is not None

    def tensor(self, name: str):
        """The header entry of ``name`` in the first shard that holds it, or None."""
        shards = self.locations.get(name)
        return self.headers[shards[0]].tensors[name] if shards else None


def file_sha256(path: Path, what: str = "artifact file") -> str:
    """The sha256 of the file at ``path``, read in 1 MiB pieces (bounded memory at any size);
    a file that cannot be read is a one-line InputError naming it as ``what``."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    return digest.hexdigest()


def read_json(path: Path, what: str) -> Any:
    """A JSON file of the artifact, bounded in size; invalid JSON is a one-line InputError."""
    from stackcheck.fileio import decode_json, read_bytes

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    if size > MAX_JSON_BYTES:
        raise InputError(f"{path}: {size} bytes, larger than the {MAX_JSON_BYTES}-byte limit for {what}")
    return decode_json(read_bytes(path, what), Any, str(path), what)


def _object(path: Path, what: str) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    doc = read_json(path, what)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object ({what})")
    return doc


def _positive_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _names(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(m, str) for m in v)


# adapter_config.json fields the checks compute with: what each must be when present (null is absent)
_ADAPTER_FIELDS: dict[str, tuple[str, Any]] = {
    "r": ("a positive integer", _positive_int),
    "lora_alpha": ("a number", _number),
    "rank_pattern": (
        "an object of module name → positive integer",
        lambda v: isinstance(v, dict) and all(map(_positive_int, v.values())),
    ),
    "alpha_pattern": (
        "an object of module name → number",
        lambda v: isinstance(v, dict) and all(map(_number, v.values())),
    ),
    "target_modules": ("a module name or a list of them", lambda v: isinstance(v, str) or _names(v)),
    "modules_to_save": ("a list of module names", _names),
}


def _adapter_config(path: Path) -> dict[str, Any] | None:
    doc = _object(path, "adapter config")
    for name, (expected, valid) in _ADAPTER_FIELDS.items():
        if doc is not None and doc.get(name) is not None and not valid(doc[name]):
            raise InputError(f"{path}: {name}: expected {expected}")
    return doc


def gather(path: str | os.PathLike, *, pickles: bool = True) -> Artifact:
    """The facts of the artifact at ``path``: a model or adapter directory, or one safetensors
    file. ``pickles``: also scan every pickle in it (by opcode)."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file or directory")
    if p.is_file():
        art = Artifact(root=p.parent, files=[p.name])
        if p.suffix == ".safetensors":
            _add_shard(art, p.name)
        elif not _formats(art, [p]) and pickles:
            _scan_pickle(art, p, p.name)
            if not art.pickles:  # nothing here any check reads: not an "OK" artifact
                raise InputError(
                    f"{p}: not a safetensors, ONNX, GGUF or pickle file "
                    "(expected one of those, or a model or adapter directory)"
                )
        return art
    art = Artifact(root=p)
    art.config = _object(p / "config.json", "model config")
    art.adapter_config = _adapter_config(p / "adapter_config.json")
    art.generation_config = _object(p / "generation_config.json", "generation config")
    art.tokenizer = _tokenizer(p)
    _walk(art, pickles)
    _weights(art)
    _formats(art, [p / f for f in art.files if "/" not in f])
    if not _anything_to_check(art):  # an empty or unrelated directory is not an "OK" artifact
        raise InputError(
            f"{p}: no model, adapter, tokenizer, weights, checkpoint, ONNX, GGUF or pickle file found "
            "(expected config.json, adapter_config.json, *.safetensors, … or a file of one of those)"
        )
    return art


def _anything_to_check(art: Artifact) -> bool:
    facts = (art.config, art.adapter_config, art.generation_config, art.tokenizer, art.index_file)
    return any(f is not None for f in facts) or any(
        (
            art.headers,
            art.adapter_header,
            art.pickles,
            art.distcp_ranks,
            art.distcp_metadata,
            art.onnx,
            art.gguf,
        )
    )


def _formats(art: Artifact, paths: list[Path]) -> bool:
    """Read the ONNX and GGUF files among ``paths``; whether there was one."""
    from stackcheck.artifacts import formats

    for path in paths:
        if formats.is_onnx(path.name):
            art.onnx.append(formats.onnx_facts(path))
        elif formats.is_gguf(path.name):
            art.gguf.append(formats.gguf_facts(path))
    return bool(art.onnx or art.gguf)


def _walk(art: Artifact, pickles: bool) -> None:
    from stackcheck.hygiene.pickles import SNIFF_BYTES, sniff

    stack: list[tuple[Path, int]] = [(art.root, 0)]
    while stack and len(art.files) < MAX_FILES:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if depth < MAX_DEPTH and not entry.name.startswith("."):
                    stack.append((Path(entry.path), depth + 1))
                continue
            if not entry.is_file() or len(art.files) >= MAX_FILES:
                continue
            rel = os.path.relpath(entry.path, art.root)
            art.files.append(rel)
            m = _DISTCP.search(entry.name)
            if m:
                art.distcp_ranks.add(int(m.group(1)))
            if entry.name == ".metadata":
                art.distcp_metadata = True
            skip = (".safetensors", ".json", ".jinja", ".txt", ".md", ".onnx", ".gguf")
            if not pickles or entry.name.endswith(skip):
                continue
            suffix = os.path.splitext(entry.name)[1].lower()
            if suffix in PICKLE_SUFFIXES or entry.name == ".metadata":
                _scan_pickle(art, Path(entry.path), rel)
                continue
            try:
                with open(entry.path, "rb") as fh:
                    head = fh.read(SNIFF_BYTES)
            except OSError:
                continue
            if sniff(head, more=len(head) == SNIFF_BYTES) == "pickle":
                _scan_pickle(art, Path(entry.path), rel)


def _scan_pickle(art: Artifact, full: Path, rel: str) -> None:
    from stackcheck.hygiene import pickles

    if art.pickle_budget is None:
        art.pickle_budget = pickles.RunBudget()  # one budget for every pickle of the artifact
    scan = pickles.scan_file(str(full), pickle_expected=pickles.expected_by_name(rel), run=art.pickle_budget)
    if scan.is_pickle or scan.error or scan.limit:
        art.pickles.append((rel, scan))


def _weights(art: Artifact) -> None:
    root = art.root
    for name in INDEX_FILES:
        doc = _object(root / name, "shard index")
        if doc is None:
            continue
        wm = doc.get("weight_map")
        if not isinstance(wm, dict) or not all(isinstance(v, str) for v in wm.values()):
            raise InputError(f"{root / name}: weight_map: expected an object of tensor name → shard file")
        art.index_file, art.weight_map = name, wm
        break
    if art.index_file and art.index_file.startswith("model.safetensors"):
        shards = sorted(set(art.weight_map.values()))
    else:
        shards = sorted(
            f for f in art.files if f.endswith(".safetensors") and "/" not in f and f not in ADAPTER_WEIGHTS
        )
    for shard in shards:
        if "/" in shard or "\\" in shard or shard.startswith("."):
            raise InputError(
                f"{root / (art.index_file or '')}: shard {shard!r}: expected a file name in {root}"
            )
        if (root / shard).is_file():
            _add_shard(art, shard)
        else:
            art.missing_shards.append(shard)
    for name in ADAPTER_WEIGHTS:
        if (root / name).is_file():
            art.adapter_weights = name
            if name.endswith(".safetensors"):
                art.adapter_header = read_header(root / name)
            break


def _add_shard(art: Artifact, name: str) -> None:
    header = read_header(art.root / name)
    art.headers[name] = header
    for tensor in header.tensors:
        art.locations.setdefault(tensor, []).append(name)


def _token(value: Any) -> str | None:
    """A special token as tokenizer_config.json writes it: a string, or {"content": …}."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _tokenizer(root: Path) -> Tokenizer | None:
    names = (
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "tokenizer.model",
        "vocab.json",
        "merges.txt",
        *TEMPLATE_FILES,
    )
    present = [n for n in names if (root / n).is_file()]
    if not present:
        return None
    tok = Tokenizer(files=sorted(present))
    ids: list[int] = []
    fast = _object(root / "tokenizer.json", "tokenizer") if "tokenizer.json" in present else None
    if fast is not None:
        vocab = (fast.get("model") or {}).get("vocab") if isinstance(fast.get("model"), dict) else None
        if isinstance(vocab, dict):
            ids.extend(v for v in vocab.values() if isinstance(v, int))
            tok.vocab = max(ids) + 1 if ids else 0
        elif isinstance(vocab, list):
            tok.vocab = len(vocab)
            ids.append(len(vocab) - 1)
        added = fast.get("added_tokens") or []
        if not isinstance(added, list):
            raise InputError(f"{root / 'tokenizer.json'}: added_tokens: expected a list of added tokens")
        for entry in added:
            if isinstance(entry, dict) and isinstance(entry.get("id"), int):
                tok.added.append((entry["id"], str(entry.get("content", ""))))
    cfg = _object(root / "tokenizer_config.json", "tokenizer config") or {}
    decoder = cfg.get("added_tokens_decoder")
    if isinstance(decoder, dict) and not tok.added:
        for key, entry in decoder.items():
            if str(key).isdigit() and isinstance(entry, dict):
                tok.added.append((int(key), str(entry.get("content", ""))))
    ids.extend(i for i, _ in tok.added)
    tok.size = max(ids) + 1 if ids else None
    specials = _object(root / "special_tokens_map.json", "special tokens map") or {}
    for role in ("pad_token", "eos_token", "bos_token", "unk_token"):
        value = _token(cfg.get(role)) or _token(specials.get(role))
        if value is not None:
            tok.special[role] = value
    _chat_template(root, tok, cfg)
    digest = hashlib.sha256()
    for name in tok.files:
        digest.update(name.encode() + b"\0" + bytes.fromhex(file_sha256(root / name, "tokenizer file")))
    tok.digest = digest.hexdigest()
    return tok


def _chat_template(root: Path, tok: Tokenizer, cfg: dict[str, Any]) -> None:
    """The chat template transformers would use: chat_template.jinja, then chat_template.json,
    then tokenizer_config.json's chat_template (a string, or a list of named templates, where
    the one named "default" is used)."""
    if (root / "chat_template.jinja").is_file():
        from stackcheck.fileio import read_text

        size = (root / "chat_template.jinja").stat().st_size
        if size > MAX_JSON_BYTES:
            raise InputError(
                f"{root / 'chat_template.jinja'}: {size} bytes, larger than the {MAX_JSON_BYTES}-byte "
                "limit for a chat template"
            )
        tok.chat_template, tok.template_file = (
            read_text(root / "chat_template.jinja", "chat template"),
            ("chat_template.jinja"),
        )
        return
    for source, doc in (
        ("chat_template.json", _object(root / "chat_template.json", "chat template")),
        ("tokenizer_config.json", cfg),
    ):
        value = (doc or {}).get("chat_template")
        if isinstance(value, list):
            named = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
            value = named.get("default")
        if isinstance(value, str):
            tok.chat_template, tok.template_file = value, source
            return
