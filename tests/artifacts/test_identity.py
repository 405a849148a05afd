"""``results record --artifact PATH``: the model, adapter and tokenizer identity filled from
the artifact (hub cache revision, dtype, chat template sha256, adapter file digests)."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from stackcheck.results.recording import record
from tests.artifacts.conftest import edit_json
from tests.results.conftest import (  # noqa: F401
    DELETE,
    catalog,
    cli_runner,
    full_draft,
    ledger,
    registry_file,
    snapshot_path,
)

REV = "0123456789abcdef0123456789abcdef01234567"
EMPTY = {f"model.{f}": "" for f in ("revision", "tokenizer_revision", "chat_template_sha256", "dtype")}


@pytest.fixture
def rec(ledger, catalog, tmp_path):  # noqa: F811
    """rec(draft, artifact=None) → Recorded, on the h100-single snapshot through the real API."""

    def run(draft: dict, artifact=None):
        snap = snapshot_path("h100-single")
        return record(draft, snapshot=snap, ledger=ledger, catalog=catalog, cwd=tmp_path, artifact=artifact)

    return run


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_model_in_a_hub_cache_fills_revision_template_and_dtype(built, tmp_path, rec):  # noqa: F811
    snap_dir = tmp_path / "hub" / "models--org--tiny-llama" / "snapshots" / REV
    shutil.copytree(built / "llama", snap_dir)
    done = rec(full_draft(**EMPTY), artifact=snap_dir)
    m = done.record.model
    assert (m.revision, m.tokenizer_revision, m.dtype) == (REV, REV, "bfloat16")
    assert m.chat_template_sha256 == sha(built / "llama" / "chat_template.jinja")
    assert m.adapter is None


def test_adapter_identity_and_declared_base_revision(built, copy, rec):  # noqa: F811
    a = copy("adapter_tokens")
    edit_json(a / "adapter_config.json", revision=REV)
    done = rec(full_draft(**EMPTY), artifact=a)
    m = done.record.model
    assert m.revision == REV and m.tokenizer_revision == ""  # not from a hub snapshot: unknown
    assert m.chat_template_sha256 == sha(a / "chat_template.jinja")
    ad = m.adapter
    assert ad is not None
    assert (ad.name, ad.base_model, ad.base_revision, ad.r, ad.lora_alpha) == (
        "adapter_tokens",
        str(built / "llama"),
        REV,
        8,
        16.0,
    )
    assert ad.weights_sha256 == sha(a / "adapter_model.safetensors")
    assert ad.config_sha256 == sha(a / "adapter_config.json")
    assert len(ad.tokenizer_sha256) == 64
    # the adapter is part of the experiment's identity: the same fields without it, another key
    again = rec(
        full_draft(
            **{
                "model.revision": REV,
                "model.chat_template_sha256": m.chat_template_sha256,
                "model.tokenizer_revision": "",
                "model.dtype": "bfloat16",
            }
        )
    )
    assert done.record.identity_key != again.record.identity_key


def test_what_the_draft_states_wins(built, tmp_path, rec):  # noqa: F811
    done = rec(full_draft(), artifact=built / "llama")
    assert done.record.model.chat_template_sha256 == "1" * 64 and done.record.model.revision == "a" * 40


def test_cli_option(built, tmp_path, capsys, registry_file, monkeypatch):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    draft = tmp_path / "r.json"
    draft.write_text(json.dumps(full_draft(**EMPTY)))
    run = cli_runner(capsys, registry_file, "--ledger-dir", str(tmp_path / "ledger"))
    code, out, err = run(
        "record",
        str(draft),
        "--snapshot",
        str(snapshot_path("h100-single")),
        "--artifact",
        str(built / "adapter"),
        "--json",
    )
    assert code == 0, err
    stored = json.loads(out)
    rec = json.loads(open(stored["path"]).read())
    assert rec["model"]["adapter"]["name"] == "adapter"
    assert rec["model"]["adapter"]["weights_sha256"] == sha(built / "adapter" / "adapter_model.safetensors")


def test_a_file_that_cannot_be_read_is_one_line_naming_it(tmp_path):
    """file_sha256 is the one place artifact files are hashed: an unreadable one (here a
    directory where the adapter weights should be) is an InputError, never a traceback."""
    from stackcheck.artifacts.layout import file_sha256
    from stackcheck.errors import InputError

    (tmp_path / "adapter_model.bin").mkdir()
    with pytest.raises(InputError, match=r"adapter_model\.bin: cannot read the artifact file: "):
        file_sha256(tmp_path / "adapter_model.bin")
    with pytest.raises(InputError, match=r"adapter_model\.bin: cannot read the tokenizer file: "):
        file_sha256(tmp_path / "adapter_model.bin", "tokenizer file")
