"""An adapter registry for the fine-tuning lifecycle: adapters registered by name with their
identity (base model and revision, file digests, tokenizer digest, chat template hash) after
``artifact check`` passes, listed, and mounted / switched on a loaded transformers model
through PEFT's own multi-adapter API — so what was mounted is what the result records
(``ModelIdentity.adapter``). Thin: PEFT does the injection; this module does the identity and
the checks.

The registry is one JSON file (default ``$XDG_DATA_HOME/stackcheck/adapters.json``), written
atomically; mounting re-hashes the adapter's files and refuses one that changed since it was
registered.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from stackcheck.errors import InputError, Refused
from stackcheck.models.result import AdapterIdentity

__all__ = ["Entry", "Registry", "default_path"]


class Entry(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: str
    path: str  # the adapter directory, absolute
    target: str = "transformers"  # what it was checked for
    base: str = ""  # the base model directory it was checked against
    identity: AdapterIdentity
    chat_template_sha256: str = ""
    registered_at: str = ""


class _File(msgspec.Struct, kw_only=True):
    schema_version: str = "1"
    adapters: list[Entry] = []


def default_path() -> Path:
    root = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(root) / "stackcheck" / "adapters.json"


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


class Registry:
    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else default_path()

    def _load(self) -> _File:
        from stackcheck.fileio import load_json

        if not self.path.exists():
            return _File()
        return load_json(self.path, _File, "adapter registry")

    def list(self) -> list[Entry]:
        return sorted(self._load().adapters, key=lambda e: e.name)

    def get(self, name: str) -> Entry:
        for entry in self._load().adapters:
            if entry.name == name:
                return entry
        raise InputError(f"{self.path}: no adapter named {name!r} (registered: {self._names()})")

    def _names(self) -> str:
        return ", ".join(e.name for e in self.list()) or "none"

    def register(
        self,
        name: str,
        path: str | os.PathLike,
        *,
        base: str | os.PathLike | None = None,
        target: str = "transformers",
        max_lora_rank: int | None = None,
        replace: bool = False,
    ) -> Entry:
        """Check the adapter at ``path`` (against ``base`` and for ``target``) and record its
        identity under ``name``. Refused when a check blocks, or the name is taken (unless
        ``replace``)."""
        from stackcheck.artifacts import check
        from stackcheck.artifacts.identity import identify
        from stackcheck.artifacts.layout import gather
        from stackcheck.fileio import atomic_write, cannot_write
        from stackcheck.identifiers import require

        require(name, "adapter name")
        art = gather(path, pickles=False)
        if not art.is_adapter:
            raise InputError(f"{path}: no adapter_config.json: not a PEFT adapter directory")
        report = check(path, base=base, target=target, max_lora_rank=max_lora_rank)
        failing = [c for c in report.checks if c.verdict in ("blocked", "error")]
        if failing:
            raise Refused(
                f"{name}: not registered, its checks block: "
                + "; ".join(f"{c.id} {c.observed}" for c in failing)
            )
        ident = identify(path, name=name, art=art)
        assert ident.adapter is not None
        doc = self._load()
        if any(e.name == name for e in doc.adapters) and not replace:
            raise Refused(f"{name}: already registered in {self.path} (replace it explicitly)")
        entry = Entry(
            name=name,
            path=str(Path(path).absolute()),
            target=target,
            base=str(Path(base).absolute()) if base is not None else "",
            identity=ident.adapter,
            chat_template_sha256=ident.chat_template_sha256,
            registered_at=_now(),
        )
        doc.adapters = [e for e in doc.adapters if e.name != name] + [entry]
        try:
            atomic_write(self.path, msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n")
        except OSError as exc:
            raise cannot_write(self.path, "the adapter registry", exc) from None
        return entry

    def verify(self, name: str) -> Entry:
        """The entry of ``name`` after re-hashing its files: Refused when they changed."""
        from stackcheck.artifacts.identity import identify

        entry = self.get(name)
        now = identify(entry.path, name=name).adapter
        if now is None or (now.weights_sha256, now.config_sha256) != (
            entry.identity.weights_sha256,
            entry.identity.config_sha256,
        ):
            raise Refused(
                f"{name}: the files in {entry.path} changed since it was registered; register it again"
            )
        return entry

    def mount(self, model: Any, name: str) -> tuple[Any, AdapterIdentity]:
        """Mount the registered adapter ``name`` on ``model`` with PEFT and make it active:
        a plain transformers model becomes a ``PeftModel`` (``PeftModel.from_pretrained``),
        a ``PeftModel`` gains one more adapter (``load_adapter``). Returns the model to use
        and the identity to record."""
        from peft import PeftModel

        entry = self.verify(name)
        if isinstance(model, PeftModel):
            if name not in model.peft_config:
                model.load_adapter(entry.path, adapter_name=name)
            model.set_adapter(name)
        else:
            model = PeftModel.from_pretrained(model, entry.path, adapter_name=name)
        return model, entry.identity

    def switch(self, model: Any, name: str) -> AdapterIdentity:
        """Make the mounted adapter ``name`` the active one (``PeftModel.set_adapter``)."""
        entry = self.get(name)
        if name not in getattr(model, "peft_config", {}):
            raise InputError(f"{name}: not mounted on this model (mount it first)")
        model.set_adapter(name)
        return entry.identity
