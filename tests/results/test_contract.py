"""The result contract: per-field validation, schema export, and never a traceback on bad input."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.results.contract import Draft, ResultRecord, problems
from stackcheck.results.validation import validate_file
from tests.results.conftest import full_draft


def draft_problems(**changes) -> list[str]:
    return problems(msgspec.convert(full_draft(**changes), Draft))


def test_complete_draft_has_no_problems():
    assert draft_problems() == []


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("model.revision", "main", "model.revision: expected 40 lowercase hex"),
        ("model.tokenizer_revision", "A" * 40, "model.tokenizer_revision: expected 40 lowercase hex"),
        ("model.chat_template_sha256", "abc", "model.chat_template_sha256: expected 64 lowercase hex"),
        ("workload.manifest_sha256", "x" * 64, "workload.manifest_sha256: expected 64"),
        ("workload.concurrency", 0, "workload.concurrency: must be positive"),
        ("topic", "  ", "topic: must not be empty"),
        ("run_label", "a\nb", "run_label: must be one line"),
        ("status", "failed", "failure_reason: required when status is 'failed'"),
        ("failure_reason", "OOM", "failure_reason: given but status is 'ok'"),
        ("metrics", {}, "metrics: an 'ok' result needs at least one metric"),
        ("tolerance", {"throughput": 0.1}, "tolerance.throughput: no such metric"),
        ("artifacts", [{"path": "x.log", "sha256": "nothex"}], "artifacts[0].sha256: expected 64"),
    ],
)
def test_each_field_problem_is_named(field, value, expected):
    found = draft_problems(**{field: value})
    assert any(p.startswith(expected) for p in found), found


def test_all_problems_are_reported_at_once():
    found = draft_problems(**{"model.revision": "main", "workload.samples": -1, "status": "failed"})
    assert len(found) == 3


def test_result_schema_is_exported_with_the_other_contracts():
    from stackcheck.models.schemas import contracts, schema_for

    assert contracts()["result"] is ResultRecord
    schema = schema_for(ResultRecord)
    record = schema["$defs"]["ResultRecord"]
    for field in (
        "schema_version",
        "run_label",
        "topic",
        "created_at",
        "profile",
        "snapshot",
        "snapshot_digest",
        "model",
        "backend",
        "workload",
        "metrics",
        "status",
        "evidence",
        "artifacts",
        "git",
        "stackcheck_version",
        "identity_key",
        "digest",
    ):
        assert field in record["properties"], field


def test_validate_draft_file_per_field(tmp_path):
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(full_draft(**{"model.revision": "main", "workload.seed": "zero"})))
    report = validate_file(path)
    assert not report.valid and not report.unreadable
    assert report.problems == ["workload.seed: expected `int | null`, got `str` (in a result draft)"]


def test_unknown_field_is_a_typo_not_silently_ignored(tmp_path):
    path = tmp_path / "draft.json"
    draft = full_draft()
    draft["model"]["revison"] = "a" * 40
    path.write_text(json.dumps(draft))
    report = validate_file(path)
    assert report.problems and "revison" in report.problems[0]


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.text(max_size=300).map(str.encode),
        st.dictionaries(
            st.sampled_from(["topic", "model", "digest", "kind", "metrics", "snapshot"]),
            st.one_of(st.none(), st.integers(), st.text(max_size=5), st.just({})),
        ).map(lambda d: json.dumps(d).encode()),
    )
)
def test_validate_never_raises_on_arbitrary_bytes(tmp_path, data):
    path = tmp_path / "any.json"
    path.write_bytes(data)
    report = validate_file(path)
    assert not report.valid
    assert report.problems and all(isinstance(p, str) and p for p in report.problems)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=8)),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=20,
    ).map(lambda v: {**full_draft(), **v} if isinstance(v, dict) else v)
)
def test_load_draft_gives_a_clear_error_or_a_valid_draft(value):
    from stackcheck.errors import InputError, Refused
    from stackcheck.results.recording import load_draft

    try:
        draft = load_draft(value) if isinstance(value, dict) else load_draft({"not": value})
    except (InputError, Refused) as exc:
        assert str(exc).strip()
    else:
        assert problems(draft) == []
