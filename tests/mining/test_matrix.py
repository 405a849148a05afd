"""The real CI matrix (tests/data/mining/make_matrix.py): NumPy 1.26 vs 2.x cells on Python 3.11
and 3.12, two job families, four runs re-run once. The miner must find the numpy>=2 cells of
the two removed APIs, call the set-order test flaky, and the off-by-one a code bug."""

from __future__ import annotations

from collections import Counter

from stackcheck.models.rule import Scope

from .conftest import by_test, matrix_runs, mine_matrix

NUMPY2 = {"2.0.2", "2.1.3", "2.2.6", "2.3.4"}


def test_the_matrix_is_what_make_matrix_says():
    runs = matrix_runs()
    assert len(runs) == 96
    cells = Counter((r["env"]["python"][:4], r["env"]["numpy"]) for r in runs)
    assert set(cells.values()) == {16}  # 2 families x 4 runs x 2 attempts per cell
    assert sorted(cells) == [
        ("3.11", "1.26.4"),
        ("3.11", "2.0.2"),
        ("3.11", "2.2.6"),
        ("3.12", "1.26.4"),
        ("3.12", "2.1.3"),
        ("3.12", "2.3.4"),
    ]
    # every unit job on numpy 2 failed; some numpy 1.26 unit jobs passed (the flaky test spared them)
    unit = [r for r in runs if r["job"].startswith("unit")]
    assert all(r["outcome"] == "failed" for r in unit if r["env"]["numpy"] in NUMPY2)
    assert {r["outcome"] for r in unit if r["env"]["numpy"] == "1.26.4"} == {"failed", "passed"}
    assert all(r["outcome"] == "failed" for r in runs if r["job"].startswith("window"))


def test_four_rules_one_per_planted_cause(matrix_mined):
    assert matrix_mined.jobs == 96 and matrix_mined.runs == 4
    assert matrix_mined.failed_jobs + matrix_mined.passing_jobs == 96
    assert matrix_mined.coverage == 1.0  # every failed job is explained
    tests = sorted(t for r in matrix_mined.rules.rules for t in r.mined.tests)
    assert tests == [
        "tests/test_stats.py::test_mean_dtype",
        "tests/test_stats.py::test_total",
        "tests/test_tags.py::test_default_device",
        "tests/test_window.py::test_moving_sum",
    ]
    assert all(r.provenance == "mined" and r.id.startswith("KBM-") for r in matrix_mined.rules.rules)


def test_removed_numpy_apis_are_scoped_to_numpy_2_and_reproducible(matrix_mined):
    for test, message in (
        ("test_mean_dtype", "`np.float_` was removed in the NumPy 2.0 release"),
        ("test_total", "module 'numpy' has no attribute 'product'"),
    ):
        rule = by_test(matrix_mined, test)
        m = rule.mined
        assert m.separated is True
        assert m.env_scope == "numpy>=2"
        assert rule.scope == Scope(packages=["numpy>=2"])  # what preflight evaluates
        assert m.exception == "AttributeError"
        assert message in rule.examples[0]
        # in scope: the 4 numpy-2 cells of the unit family, 8 attempts each, every one failing
        in_scope = [c for c in m.cells if c.in_scope]
        assert len(in_scope) == 4 and all("numpy=2." in c.cell for c in in_scope)
        assert (m.failures, m.attempts) == (32, 32)
        assert m.reproducibility == "reproducible" and m.wilson_lower == 0.8928
        assert m.false_positives == 0 and m.passing_jobs == matrix_mined.passing_jobs
        assert rule.confidence == "high"
        assert "pip install 'numpy<2'" in rule.fix


def test_the_set_order_test_is_flaky_not_reproducible(matrix_mined):
    rule = by_test(matrix_mined, "test_default_device")
    m = rule.mined
    assert m.reproducibility == "flaky"
    assert m.separated is False
    assert rule.scope == Scope()  # triage only: no environment to warn about
    assert 0 < m.failures < m.attempts == 48
    assert m.wilson_lower < 0.85
    assert rule.confidence == "low"
    assert rule.fix.startswith(f"Flaky: it failed {m.failures} of 48 attempts")


def test_the_off_by_one_is_a_code_bug(matrix_mined):
    rule = by_test(matrix_mined, "test_moving_sum")
    m = rule.mined
    assert m.separated is False
    assert m.env_scope.startswith("fails in every cell seen (6): no environment fact separates")
    assert (m.failures, m.attempts, m.reproducibility) == (48, 48, "reproducible")
    assert rule.scope == Scope()
    assert rule.fix.startswith("No environment fact separates failing from passing cells: a code bug.")


def test_half_the_attempts_cannot_confirm_reproducibility(tmp_path):
    """With two of the four runs, every numpy-2 attempt still fails, but 16 attempts cannot
    bring the Wilson bound to 0.85 (that takes 22): unconfirmed, not reproducible."""
    mined = mine_matrix(tmp_path / "half.sqlite", runs={"8801", "8802"})
    rule = by_test(mined, "test_mean_dtype")
    assert (rule.mined.failures, rule.mined.attempts) == (16, 16)
    assert rule.mined.reproducibility == "unconfirmed"
    assert rule.mined.min_attempts == 22
    assert rule.mined.env_scope == "numpy>=2"


def test_rules_match_their_examples_and_nothing_in_passing_jobs(matrix_mined):
    import re2

    from stackcheck.triage import triage_stream

    from .conftest import MATRIX

    for rule in matrix_mined.rules.rules:
        (pattern,) = rule.signatures
        compiled = re2.compile(pattern)
        assert rule.examples and all(compiled.search(e) for e in rule.examples)
    # every passing job's log, whole, matches no mined signature
    for run in matrix_runs():
        if run["outcome"] == "passed":
            with open(MATRIX / run["log"], "rb") as fh:
                d = triage_stream(fh, source=run["log"], rules=matrix_mined.rules.rules)
            assert d.matches == []
