"""The identity of an artifact, as a result records it: the hub revision of a model read from
the Hugging Face cache path it lives in, its dtype, the sha256 of its chat template, and for
an adapter the digests of its files with the base it declares."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from stackcheck.artifacts.layout import Artifact, file_sha256, gather
from stackcheck.models.result import AdapterIdentity
from stackcheck.redaction import redact_text

__all__ = ["ArtifactIdentity", "file_sha256", "hub_snapshot", "identify"]

# <cache>/models--ORG--NAME/snapshots/<commit>/…: what huggingface_hub downloads into
_HUB_SNAPSHOT = re.compile(r"models--(?P<repo>[^/\\]+)[/\\]snapshots[/\\](?P<rev>[0-9a-f]{40})(?:[/\\]|$)")


@dataclass
class ArtifactIdentity:
    path: str
    repo: str = ""  # ORG/NAME, from the hub cache path
    revision: str = ""  # the commit of that cache snapshot
    dtype: str = ""  # config.json's dtype / torch_dtype
    chat_template_sha256: str = ""
    tokenizer_sha256: str = ""
    tokenizer_in_snapshot: bool = False  # the tokenizer files are part of the cached revision
    adapter: AdapterIdentity | None = None
    files: dict[str, str] = field(default_factory=dict)  # file → sha256 of what was hashed


def hub_snapshot(path: str | os.PathLike) -> tuple[str, str] | None:
    """(ORG/NAME, commit) when ``path`` lies in a Hugging Face cache snapshot, else None."""
    m = _HUB_SNAPSHOT.search(str(Path(path).absolute()))
    return (m.group("repo").replace("--", "/", 1), m.group("rev")) if m else None


def identify(
    path: str | os.PathLike, *, name: str | None = None, art: Artifact | None = None
) -> ArtifactIdentity:
    """The identity of the model or adapter directory at ``path`` (``name``: the adapter's
    registry name; its directory's name otherwise)."""
    art = art or gather(path, pickles=False)
    ident = ArtifactIdentity(path=str(path))
    hub = hub_snapshot(path)
    if hub:
        ident.repo, ident.revision = hub
    cfg = art.config or {}
    dtype = cfg.get("torch_dtype") or cfg.get("dtype")
    ident.dtype = str(dtype).replace("torch.", "") if dtype else ""
    tok = art.tokenizer
    if tok is not None:
        ident.tokenizer_sha256 = tok.digest
        ident.tokenizer_in_snapshot = hub is not None
        if tok.chat_template is not None:
            ident.chat_template_sha256 = hashlib.sha256(tok.chat_template.encode("utf-8")).hexdigest()
    if art.is_adapter:
        acfg = art.adapter_config or {}
        for fname in ("adapter_config.json", art.adapter_weights):
            if fname:
                ident.files[fname] = file_sha256(art.root / fname)
        rank = acfg.get("r")
        alpha = acfg.get("lora_alpha")
        ident.adapter = AdapterIdentity(
            name=name or art.root.name,
            # a hub URL may carry a token (https://user:hf_…@host/…): never stored or printed
            base_model=redact_text(str(acfg.get("base_model_name_or_path") or "")),
            base_revision=redact_text(str(acfg.get("revision") or "")),
            weights_sha256=ident.files.get(art.adapter_weights or "", ""),
            config_sha256=ident.files["adapter_config.json"],
            tokenizer_sha256=tok.digest if tok is not None else "",
            r=int(rank) if isinstance(rank, (int, float)) else None,
            lora_alpha=float(alpha) if isinstance(alpha, (int, float)) else None,
        )
    return ident
