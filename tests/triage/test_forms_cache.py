"""The forms triage derives from the rules' signature patterns, kept between runs.

Deriving the loosened forms, cut variants and the gate's fragments of every pattern of the
knowledge base costs ~20 ms of every start; they are kept in the cache directory under a key of
the patterns, the deriving module's bytes and the Python version. Proven here: what is read
back is exactly what is derived (and gives the same index), a second run derives nothing, and
another pattern list, other deriving code, another Python, a torn or foreign file and
STACKCHECK_NO_CACHE each derive afresh."""

from __future__ import annotations

import json
import os
import sys

import pytest

from stackcheck.knowledge import load_knowledge
from stackcheck.models.rule import Rule
from stackcheck.triage import signatures
from stackcheck.triage.signatures import SignatureIndex, derived_forms, variants

NAME = "facts/triage-forms-test.json"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("STACKCHECK_NO_CACHE", raising=False)
    return tmp_path


@pytest.fixture
def patterns() -> list[str]:
    return [p for rule in load_knowledge().rules for p in rule.signatures]


def counting(monkeypatch) -> list[str]:
    """The patterns :func:`variants` is asked to derive from here on."""
    asked: list[str] = []

    def counted(pattern):
        asked.append(pattern)
        return variants(pattern)

    monkeypatch.setattr(signatures, "variants", counted)
    return asked


def as_json(value):
    return json.loads(json.dumps(value))


def test_kept_forms_are_the_derived_ones_and_a_second_run_derives_nothing(cache, patterns, monkeypatch):
    fresh = [variants(p) for p in patterns]
    assert any(v[3] is not None for entry in fresh for v in entry)  # fragments of costly forms …
    assert any(len(entry) == 2 for entry in fresh)  # … and cut variants are among them
    asked = counting(monkeypatch)
    assert derived_forms(patterns, NAME) == fresh
    assert asked == patterns
    assert oct((cache / NAME).stat().st_mode & 0o777) == "0o600"
    asked.clear()
    assert derived_forms(patterns, NAME) == fresh
    assert asked == []


def test_an_index_from_kept_forms_equals_one_derived_afresh(cache):
    rules = load_knowledge().rules
    SignatureIndex(rules, cached_as=NAME)  # writes the file
    kept, fresh = SignatureIndex(rules, cached_as=NAME), SignatureIndex(rules)
    assert [(s.rule.id, s.index, s.form, s.specificity, s.cut) for s in kept.signatures] == [
        (s.rule.id, s.index, s.form, s.specificity, s.cut) for s in fresh.signatures
    ]
    assert (kept._gate_of, kept._costly_of) == (fresh._gate_of, fresh._costly_of)
    text = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\nNo module named 'torch'\n"
    assert [(h.signature.rule.id, h.start, h.matched) for h in kept.search(text)] == [
        (h.signature.rule.id, h.start, h.matched) for h in fresh.search(text)
    ]


def test_other_patterns_code_or_python_derive_again(cache, patterns, monkeypatch):
    derived_forms(patterns, NAME)
    asked = counting(monkeypatch)
    changed = [*patterns[:-1], patterns[-1] + "x"]
    assert derived_forms(changed, NAME) == [variants(p) for p in changed]
    assert asked == changed
    asked.clear()
    monkeypatch.setattr(signatures, "_code_digest", lambda: "edited")
    derived_forms(changed, NAME)
    assert asked == changed
    asked.clear()
    monkeypatch.setattr(sys, "version", "3.99.0 (other)")
    derived_forms(changed, NAME)
    assert asked == changed
    asked.clear()
    derived_forms(changed, NAME)  # the file now holds what was derived last
    assert asked == []


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # torn
        lambda text: "[]",  # another shape
        lambda text: text.replace('"stackcheck_cache":1', '"stackcheck_cache":2'),  # another format
        lambda text: text.replace('"entries":[', '"entries":[[],', 1),  # one entry too many
        lambda text: text.replace(",false,", ',"no",', 1),  # a field of another type
    ],
)
def test_a_torn_or_foreign_file_is_derived_again_and_rewritten(cache, patterns, monkeypatch, damage):
    fresh = derived_forms(patterns, NAME)
    path = cache / NAME
    path.write_text(damage(path.read_text()))
    asked = counting(monkeypatch)
    assert derived_forms(patterns, NAME) == fresh
    assert asked == patterns
    assert as_json(json.loads(path.read_text())["entries"]) == as_json(fresh)


def test_no_cache_derives_and_writes_nothing(cache, patterns, monkeypatch):
    monkeypatch.setenv("STACKCHECK_NO_CACHE", "1")
    asked = counting(monkeypatch)
    derived_forms(patterns, NAME)
    derived_forms(patterns, NAME)
    assert asked == patterns + patterns
    assert os.listdir(cache) == []


def test_an_index_without_a_name_keeps_nothing(cache):
    SignatureIndex([Rule(id="KB900", title="t", category="other", signatures=["Segmentation fault .*core"])])
    assert os.listdir(cache) == []


def test_triage_keeps_the_forms_of_the_loaded_knowledge_base(cache):
    from stackcheck.triage.diagnose import _loaded_signatures, loaded_signatures

    _loaded_signatures.cache_clear()
    try:
        index = loaded_signatures()
    finally:
        _loaded_signatures.cache_clear()
    kept = list((cache / "facts").glob("triage-forms-*.json"))
    assert len(kept) == 1
    entries = json.loads(kept[0].read_text())["entries"]
    assert sum(len(entry) for entry in entries) >= len(index.signatures)


@pytest.mark.parametrize("flag, kept", [([], 1), (["--no-cache"], 0)])
def test_the_triage_command_keeps_the_forms_unless_told_not_to(cache, tmp_path, flag, kept):
    import subprocess

    log = tmp_path / "error.log"
    log.write_text("RuntimeError: CUDA error: out of memory\n")
    code = "import sys; sys.argv = ['stackcheck', *sys.argv[1:]]; from stackcheck.cli import main; main()"
    env = {**os.environ, "STACKCHECK_CACHE_DIR": str(cache / "c")}
    env.pop("STACKCHECK_NO_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", code, "triage", "--no-env", *flag, str(log)], env=env, capture_output=True
    )
    assert done.returncode == 0 and b"KB102" in done.stdout
    assert len(list((cache / "c").glob("facts/triage-forms-*.json"))) == kept
