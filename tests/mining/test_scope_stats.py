"""Scope by contrast, the Wilson bound, the grouping metrics, similarity, extra rule files."""

from __future__ import annotations

import json

import pytest

from stackcheck.errors import InputError
from stackcheck.knowledge import load_knowledge
from stackcheck.knowledge.loader import load_rule_files
from stackcheck.mining.metrics import adjusted_rand_index, f1_group_accuracy, grouping_accuracy
from stackcheck.mining.scope import CellStat, contrast
from stackcheck.mining.similarity import similar_pairs
from stackcheck.mining.stats import min_attempts, reproducibility, wilson_lower
from stackcheck.models.rule import Scope


def cell(name: str, failures: int, attempts: int = 4, **facts: str) -> CellStat:
    return CellStat(name, {k.replace("__", ":"): v for k, v in facts.items()}, attempts, failures)


def test_one_package_separates_with_the_simplest_bound():
    cells = [
        cell("a", 4, pkg__numpy="1.26.4", python="3.11"),
        cell("b", 0, pkg__numpy="1.25.2", python="3.12"),
        cell("c", 4, pkg__numpy="2.0.2", python="3.11"),
        cell("d", 4, pkg__numpy="2.1.3", python="3.12"),
    ]
    cells[0].failures = 0
    r = contrast(cells, "module 'numpy' has no attribute 'product'")
    assert (r.separated, r.text, r.scope) == (True, "numpy>=2", Scope(packages=["numpy>=2"]))
    assert r.in_scope == {"c", "d"}


def test_an_upper_and_a_lower_bound():
    cells = [
        cell("old", 0, pkg__torch="2.1.2"),
        cell("mid", 4, pkg__torch="2.3.1"),
        cell("mid2", 3, pkg__torch="2.4.0"),
        cell("new", 0, pkg__torch="2.5.1"),
    ]
    r = contrast(cells)
    assert (r.text, r.scope) == ("torch>=2.3,<2.5", Scope(packages=["torch>=2.3,<2.5"]))


def test_the_fact_the_failure_names_wins_a_tie():
    cells = [
        cell("a", 0, pkg__numpy="1.26", pkg__scipy="1.11"),
        cell("b", 4, pkg__numpy="2.0", pkg__scipy="1.13"),
    ]
    assert contrast(cells, "AttributeError: np.float_ numpy").text == "numpy>=2"
    r = contrast(cells, "scipy.linalg failed")
    assert (r.text, r.also) == ("scipy>=1.13", ["numpy>=2"])


def test_platform_is_a_set_and_os_is_text_only():
    cells = [
        cell("l", 0, platform="linux", os="ubuntu-22.04"),
        cell("w", 4, platform="windows", os="windows-2022"),
    ]
    r = contrast(cells)
    assert (r.text, r.scope) == ("platform=windows", Scope(platform=["windows"]))
    only_os = [cell("u22", 0, os="ubuntu-22.04"), cell("u24", 4, os="ubuntu-24.04")]
    r = contrast(only_os)
    assert r.separated and r.scope == Scope()
    assert r.text == "os=ubuntu-24.04 (not expressible as a preflight scope: triage only)"


def test_two_facts_together_when_no_single_one_separates():
    cells = [
        cell("a", 4, python="3.12", pkg__numpy="2.0"),
        cell("b", 0, python="3.11", pkg__numpy="2.0"),
        cell("c", 0, python="3.12", pkg__numpy="1.26"),
    ]
    r = contrast(cells, "numpy")
    assert (r.text, r.scope) == ("numpy>=2 and python>=3.12", Scope(packages=["numpy>=2"], python=">=3.12"))


def test_no_separation_when_every_cell_fails_or_failures_are_rare():
    assert contrast([cell("a", 4), cell("b", 3)]).text.startswith("fails in every cell seen (2)")
    intermittent = [cell("a", 1, attempts=8, x="1"), cell("b", 0, attempts=8, x="2")]
    r = contrast(intermittent)
    assert not r.separated and r.text.startswith("fails in only 12% of the attempts of the cells it fails in")
    mixed = [cell("a", 4, x="1"), cell("b", 0, x="1")]
    assert contrast(mixed).text.startswith(
        "no environment fact separates its 1 failing cell(s) from the 1 clean one(s)"
    )


def test_wilson_bound_and_the_attempts_it_takes():
    assert min_attempts() == 22 and min_attempts(confidence=0.9) == 16
    assert round(wilson_lower(22, 22), 4) == 0.8513 and round(wilson_lower(21, 21), 4) == 0.8454
    assert round(wilson_lower(5, 10), 4) == 0.2366 and wilson_lower(0, 0) == 0.0
    assert [
        reproducibility(22, 22),
        reproducibility(21, 21),
        reproducibility(20, 22),
        reproducibility(3, 9),
    ] == ["reproducible", "unconfirmed", "flaky", "flaky"]


def test_grouping_metrics():
    truth = ["a", "a", "b", "b", "c"]
    assert (
        grouping_accuracy(truth, truth)
        == f1_group_accuracy(truth, truth)
        == adjusted_rand_index(truth, truth)
        == 1.0
    )
    pred = ["x", "x", "y", "z", "z"]  # a exact; b split; c merged with half of b
    assert grouping_accuracy(pred, truth) == 0.4
    assert f1_group_accuracy(pred, truth) == pytest.approx(1 / 3)
    assert adjusted_rand_index(pred, truth) == pytest.approx(0.375)


def test_similar_signatures_are_suggested_not_merged():
    texts = [
        "AttributeError module numpy has no attribute product",
        "AttributeError module numpy has no attribute float_",
        "OSError libcudart.so.12 cannot open shared object file",
    ]
    pairs = similar_pairs(texts, threshold=0.6)
    assert [(i, j) for i, j, _ in pairs] == [(0, 1)]


def _rule(rule_id: str, **extra) -> dict:
    return {
        "id": rule_id,
        "title": "t",
        "category": "other",
        "signatures": ["boom"],
        "sources": ["mined"],
        **extra,
    }


def test_extra_rule_files_enter_through_the_knowledge_loader(tmp_path):
    path = tmp_path / "extra.json"
    path.write_text(json.dumps({"schema_version": "1.0", "rules": [_rule("KBM-00000001")]}))
    kb = load_knowledge(rules=[path])
    assert "KBM-00000001" in {r.id for r in kb.rules}
    assert len(kb.rules) == len(load_knowledge(rules=[]).rules) + 1
    path.write_text(json.dumps({"schema_version": "1.0", "rules": [_rule("KBM-00000002")]}))
    assert "KBM-00000002" in {
        r.id for r in load_knowledge(rules=[path]).rules
    }  # an edited file is read again


@pytest.mark.parametrize(
    "rules, problem",
    [
        ([_rule("KB001")], "rule KB001: id: duplicate, already defined in"),
        (
            [_rule("KBM-1", provenance="mined")],
            "rule KBM-1: mined: a rule has mining statistics exactly when its provenance is 'mined'",
        ),
        (
            [_rule("KBM-1", signatures=["(a"])],
            "rule KBM-1: signatures[0]: not a valid RE2 pattern (missing ): (a)",
        ),
    ],
)
def test_a_bad_extra_rule_file_is_one_line(tmp_path, rules, problem):
    path = tmp_path / "extra.json"
    path.write_text(json.dumps({"schema_version": "1.0", "rules": rules}))
    with pytest.raises(InputError) as exc:
        load_knowledge(rules=[path])
    assert str(exc.value).startswith(f"{path}: {problem}")
    with pytest.raises(InputError):
        load_rule_files([tmp_path / "absent.json"])
