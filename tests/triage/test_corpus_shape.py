"""Shape of the public triage corpus (tests/data/triage/corpus, see its README.md): every case
file has the agreed fields, ids are unique, each case sits in the split its id hashes to, the
index table agrees with the files, and the corpus is as large and as wide as promised."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from stackcheck.models.rule import CATEGORIES

from .conftest import TRIAGE_DATA

CORPUS = TRIAGE_DATA / "corpus"
SPLITS = ("train", "heldout")
# categories the corpus needs beyond the rule vocabulary (proposed in the corpus README)
PROPOSED = (
    "infrastructure",
    "test-assertion",
    "timeout-or-hang",
    "illegal-memory-access",
    "disk-full",
    "shared-memory",
    "resolver-conflict",
    "protobuf",
    "glibc",
    "extension-build",
)
FIELDS = {"id", "source", "text", "category", "root_cause", "fix", "confirmed_by", "culprit", "notes"}
URL = re.compile(r"https://github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)$")
NAME = re.compile(r"(\d{3})-[a-z0-9-]+\.json$")
MIN_CASES, MIN_REPOS = 200, 50
RULES = Path(__file__).parent.parent.parent / "src" / "stackcheck" / "knowledge" / "data" / "rules"
# held-out lines that rule examples already contained before the corpus existed (README.md)
KNOWN_OVERLAPS = {
    ("pytorch/pytorch#167244", "KB001"),
    ("hkchengrex/STCN#132", "KB112"),
    ("kcosta42/VQGAN-CLIP-Docker#1", "KB115"),
    ("kcosta42/VQGAN-CLIP-Docker#1", "KB116"),
    # third batch: torch's standard sm_120 warning (KB001) and cpp_extension's CUDA-mismatch line
    # (KB211), both already rule examples before these cases were gathered
    ("Hellod035/LeggedLab#26", "KB001"),
    ("deepseek-ai/DeepSeek-VL2#59", "KB001"),
    ("kodenii/Responsible-Visual-Editing#4", "KB211"),
}


def split_of(case_id: str) -> str:
    """The split rule of the README: first byte of sha256(id) below 77 -> heldout (~30 %)."""
    return "heldout" if hashlib.sha256(case_id.encode("utf-8")).digest()[0] < 77 else "train"


def _files() -> list[Path]:
    return sorted(p for s in SPLITS for p in (CORPUS / s).glob("*.json"))


def _load() -> list[tuple[Path, dict]]:
    return [(p, json.loads(p.read_text(encoding="utf-8"))) for p in _files()]


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_case_file_has_the_agreed_fields(path):
    case = json.loads(path.read_text(encoding="utf-8"))
    assert set(case) == FIELDS
    assert NAME.fullmatch(path.name), path.name
    for key in ("id", "text", "root_cause", "fix", "confirmed_by"):
        assert isinstance(case[key], str) and case[key].strip(), key
    assert case["culprit"] is None or (isinstance(case["culprit"], str) and case["culprit"].strip())
    assert isinstance(case["notes"], str)
    assert case["category"] in CATEGORIES + PROPOSED
    assert set(case["source"]) == {"url", "repository"}
    m = URL.fullmatch(case["source"]["url"])
    assert m, case["source"]["url"]
    assert m.group(1) == case["source"]["repository"]
    assert case["id"].split("#")[0] == case["source"]["repository"]
    assert case["id"].split("#")[1].split("-")[0] == m.group(2)
    assert path.parent.name == split_of(case["id"])


def test_ids_and_numbers_are_unique():
    loaded = _load()
    ids = [c["id"] for _, c in loaded]
    assert len(ids) == len(set(ids))
    numbers = [NAME.fullmatch(p.name).group(1) for p, _ in loaded]
    assert len(numbers) == len(set(numbers))


def test_no_stray_files_in_the_corpus():
    allowed = {"README.md", "ORIGINS.md", *SPLITS}
    assert {p.name for p in CORPUS.iterdir()} == allowed
    for s in SPLITS:
        assert {p.suffix for p in (CORPUS / s).iterdir()} == {".json"}


def test_split_rule_examples():
    """Pins the hash rule itself, so a changed rule cannot silently move cases."""
    assert hashlib.sha256(b"pytorch/pytorch#15800").digest()[0] < 77
    assert split_of("pytorch/pytorch#15800") == "heldout"
    assert split_of("pytorch/pytorch#2104") == "train"


def test_index_table_agrees_with_the_files():
    rows = {}
    for line in (CORPUS / "ORIGINS.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and NAME.fullmatch(cells[0]):
            rows[cells[0]] = cells
    expected = {
        p.name: [p.name, c["id"], c["source"]["repository"], c["source"]["url"], c["category"], p.parent.name]
        for p, c in _load()
    }
    assert rows == expected


def test_readme_lists_every_proposed_category_used():
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    used = {c["category"] for _, c in _load()} - set(CATEGORIES)
    for name in used:
        assert f"`{name}`" in readme, name


def test_held_out_lines_are_not_rule_examples():
    """A held-out line (60+ characters, not also in a train text) copied into a rule's examples
    would make the held-out score meaningless; only the overlaps that predate the corpus pass."""
    loaded = _load()
    train_lines = {
        line.strip() for p, c in loaded if p.parent.name == "train" for line in c["text"].splitlines()
    }
    examples = []
    for f in sorted(RULES.glob("*.json")):
        for rule in json.loads(f.read_text(encoding="utf-8"))["rules"]:
            for text in rule.get("examples", []) + rule.get("counter_examples", []):
                examples.append((rule["id"], text))
    found = set()
    for p, c in loaded:
        if p.parent.name != "heldout":
            continue
        for line in c["text"].splitlines():
            line = line.strip()
            if len(line) >= 60 and line not in train_lines:
                found |= {(c["id"], rid) for rid, text in examples if line in text}
    assert found == KNOWN_OVERLAPS


def test_corpus_has_at_least_200_cases():
    assert len(_files()) >= MIN_CASES


def test_corpus_spans_at_least_50_repositories():
    assert len({c["source"]["repository"] for _, c in _load()}) >= MIN_REPOS


def test_both_splits_are_used():
    counts = {s: len(list((CORPUS / s).glob("*.json"))) for s in SPLITS}
    assert counts["heldout"] > 0 and counts["train"] > counts["heldout"]
