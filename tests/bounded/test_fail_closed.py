"""A check that crashes fails the report closed: verdict ``error``, exit 1, the exception
named with a request to report it — never ``skipped`` inside an OK report with exit 0.
And a 4,400-digit distribution version (Python's int-conversion limit) no longer crashes
PKG003: the forbidden engine is still blocked."""

from __future__ import annotations

import json

import jsonschema
import msgspec
import pytest

from stackcheck.checks import registry
from stackcheck.judge import judge
from stackcheck.models.finding import BUG_REPORT, CheckResult, Report, exit_code, internal_error, worst
from stackcheck.render.text import report_text
from tests.bounded.hostile import BIG, cli
from tests.factories import dist, make_profile, make_snapshot

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _crashing(ctx):
    yield registry.ok(observed="first subject fine", subject="a")
    raise ValueError("boom")


@pytest.fixture
def crashing_check(monkeypatch):
    registry.all_checks()  # load the real ones first: the fixture adds one beside them
    commands = frozenset({registry.PREFLIGHT})
    spec = registry.CheckSpec("ZZZ999", "A check with a bug", "test only", _crashing, commands)
    monkeypatch.setitem(registry._CHECKS, "ZZZ999", spec)
    return spec


def test_a_crashing_check_makes_the_report_error_and_exit_1(crashing_check):
    report = judge(make_snapshot(), command="preflight", profile=make_profile())
    mine = [c for c in report.checks if c.id == "ZZZ999"]
    assert [(c.verdict, c.subject) for c in mine] == [("ok", "a"), ("error", None)]  # what it yielded is kept
    assert mine[1].reason == f"internal error in check ZZZ999: ValueError: boom; {BUG_REPORT}"
    assert report.verdict == "error"
    assert exit_code(report.verdict) == 1 and exit_code(report.verdict, strict=True) == 1
    others = [c for c in report.checks if c.id != "ZZZ999"]
    assert others and all(c.verdict != "error" for c in others)  # the other checks still ran


def test_the_error_verdict_is_shown_first_with_its_reason(crashing_check):
    text = report_text(judge(make_snapshot(), command="preflight", profile=make_profile()))
    lines = text.splitlines()
    assert lines[0].startswith("preflight TEST-PROFILE: ERROR")
    assert lines[1] == "  ERROR   ZZZ999  A check with a bug"
    assert lines[2] == f"            reason:   internal error in check ZZZ999: ValueError: boom; {BUG_REPORT}"
    assert lines[-1].endswith(" ok, 1 error, 8 skipped  (-v shows every check)")  # KERN004 skips: no kernels


def test_an_error_report_validates_against_the_report_schema(crashing_check):
    report = judge(make_snapshot(), command="preflight", profile=make_profile())
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(json.loads(msgspec.json.encode(report)), schema)


def test_error_outranks_blocked_and_skipped_never_counts():
    assert worst(["ok", "blocked", "error", "warning"]) == "error"
    assert worst(["blocked", "warning"]) == "blocked"
    assert worst(["skipped", "skipped"]) == "ok"
    assert exit_code("ok", strict=True) == 0 and exit_code("blocked") == 1


def test_internal_error_text_is_one_bounded_line():
    reason = internal_error(RuntimeError("line one\nline two " + "x" * 1000), "check X1")
    assert "\n" not in reason
    assert reason.startswith("internal error in check X1: RuntimeError: line one; ")
    assert internal_error(KeyError(), "check X1") == f"internal error in check X1: KeyError; {BUG_REPORT}"
    long = internal_error(ValueError("y" * 1000), "check X1")
    assert long == f"internal error in check X1: ValueError: {'y' * 299}…; {BUG_REPORT}"


def test_preflight_cli_exits_1_when_a_real_check_crashes(monkeypatch, tmp_path, capsys):
    """PKG001–PKG003 made to raise (as the 4,400-digit version once did): exit 1, not 0."""
    from stackcheck.cli import main
    from stackcheck.deps.index import DistIndex

    def broken(self, text, extras=()):
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    monkeypatch.setattr(DistIndex, "evaluate", broken)
    snap = tmp_path / "snap.json"
    snap.write_bytes(msgspec.json.encode(make_snapshot(dist("vllm", "0.11.0", top_level=["vllm"]))))
    reg = tmp_path / "reg.json"
    profile = {"id": "P", "forbidden": [{"requirement": "vllm"}]}
    reg.write_text(json.dumps({"include_builtin": False, "profiles": [profile]}))
    with pytest.raises(SystemExit) as exited:
        main(["preflight", "--snapshot", str(snap), "--registry", str(reg), "-p", "P", "--json"])
    assert exited.value.code == 1
    report = msgspec.json.decode(capsys.readouterr().out, type=Report)
    assert report.verdict == "error"
    assert [c.reason for c in report.checks if c.id == "PKG003"] == [
        "internal error in check PKG003: ValueError: Exceeds the limit (4300 digits) for integer string "
        f"conversion; {BUG_REPORT}"
    ]


@pytest.mark.parametrize("requirement", ["vllm", "vllm>=0.5", "vllm<0.5", "vllm!=0.11.0"])
def test_forbidden_engine_with_a_4400_digit_version_is_still_blocked(requirement):
    snap = make_snapshot(dist("vllm", BIG, top_level=["vllm"]))
    report = judge(snap, command="preflight", profile=make_profile(forbidden=[{"requirement": requirement}]))
    pkg003 = [c for c in report.checks if c.id == "PKG003"]
    assert [c.verdict for c in pkg003] == ["blocked"]
    assert pkg003[0].observed == (
        "vllm '1111111111111111111111111111…11111111' (not a PEP 440 version, 4400 characters) "
        "is installed (in /env/lib/python3.12/site-packages)"
    )
    assert report.verdict == "blocked" and not [c for c in report.checks if c.verdict == "error"]


def test_forbidden_engine_with_a_4400_digit_version_blocks_on_the_command_line(tmp_path):
    snap = tmp_path / "snap.json"
    snap.write_bytes(msgspec.json.encode(make_snapshot(dist("vllm", BIG, top_level=["vllm"]))))
    proc = cli("preflight", "--snapshot", str(snap), "-p", "GUARD-NO-ENGINES", "--json")
    assert proc.returncode == 1, proc.stderr
    report = msgspec.json.decode(proc.stdout, type=Report)
    assert report.verdict == "blocked"
    found = [(c.verdict, c.subject) for c in report.checks if c.id == "PKG003" and c.verdict != "ok"]
    assert found == [("blocked", "vllm")]


def test_accept_summary_counts_errors_first():
    from stackcheck.accept.run import _summary_line

    report = Report(
        checks=[
            CheckResult(id="A1", title="a", verdict="blocked", fix="fix a"),
            CheckResult(id="E1", title="e", verdict="error", reason="internal error in check E1: …"),
            CheckResult(id="O1", title="o", verdict="ok"),
        ]
    )
    assert _summary_line(report) == ("1 error, 1 blocked, 1 ok: E1 e; A1 a", None)


def test_a_result_record_keeps_an_error_preflight_verdict():
    from stackcheck.results.contract import ProfileRef

    ref = msgspec.json.decode(b'{"id": "P", "verdict": "error"}', type=ProfileRef)
    assert ref.verdict == "error"


def test_an_accept_step_whose_judging_crashes_is_an_error_not_a_traceback():
    from stackcheck.accept.run import _guarded
    from stackcheck.accept.steps import ChildRun, Needs, judge_numpy

    needs = Needs(None, lambda *args: "python -m pip install " + " ".join(args))
    odd = ChildRun({"numpy": "2.0"}, None, "", 0.1)  # a child that printed JSON without the errors table
    result = _guarded("ACC001", judge_numpy, odd, needs)
    said = f"internal error in step ACC001: KeyError: 'errors'; {BUG_REPORT}"
    assert (result.id, result.verdict, result.reason) == ("ACC001", "error", said)
