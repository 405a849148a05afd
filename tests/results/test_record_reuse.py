"""`results record` pays only for what it does not have: a preflight judged once per process
for one (snapshot, profile, registry), a preflight report given with --report used instead of
judging again (and refused, in one line, when it is not this result's), and no git outside a
repository."""

from __future__ import annotations

import json

import msgspec
import pytest

from stackcheck.errors import InputError, Refused
from stackcheck.results import recording
from tests.results.conftest import full_draft, snapshot_path


@pytest.fixture
def judged(monkeypatch):
    """Counts calls of the judge; the in-process memo starts empty."""
    import stackcheck.judge

    monkeypatch.setattr(recording, "_JUDGED", {})
    calls = []
    real = stackcheck.judge.judge

    def counting(snapshot, **kw):
        calls.append(kw["profile"].id)
        return real(snapshot, **kw)

    monkeypatch.setattr(stackcheck.judge, "judge", counting)
    return calls


def preflight_report(profile="LAB-GPU", snapshot="h100-single", catalog=None, skip=()):
    """What `stackcheck preflight -p PROFILE --snapshot S --json` reports, as a Report."""
    from stackcheck.environment import load_snapshot
    from stackcheck.judge import judge

    report = judge(
        load_snapshot(str(snapshot_path(snapshot))),
        command="preflight",
        profile=catalog.get(profile),
        skip=skip,
    )
    report.environment["registry"] = catalog.source
    return report


def test_one_snapshot_is_judged_once_per_process(record_in, judged, catalog):
    first = record_in(full_draft(run_label="one"))
    second = record_in(full_draft(run_label="two"))
    assert judged == ["LAB-GPU"]
    assert first.record.profile == second.record.profile
    assert (first.record.profile.verdict, first.record.profile.registry_digest) == ("ok", catalog.digest)
    record_in(full_draft(run_label="three", profile="LAB-BROKEN"))
    record_in(full_draft(run_label="four", evidence="smoke"), snapshot="cpu-laptop")
    assert judged == ["LAB-GPU", "LAB-BROKEN", "LAB-GPU"], "another profile or snapshot is judged anew"


def test_the_memo_hands_out_copies(record_in, judged):
    a = record_in(full_draft(run_label="one", profile="LAB-BROKEN"))
    a.record.profile.failing_checks.append("TAMPERED")
    b = record_in(full_draft(run_label="two", profile="LAB-BROKEN"))
    assert "TAMPERED" not in b.record.profile.failing_checks and b.record.profile.verdict == "blocked"


def test_another_registry_is_judged_anew(tmp_path, ledger, judged, registry_file):
    from stackcheck.catalog import load_catalog
    from stackcheck.results import record

    other = tmp_path / "other.json"
    data = json.loads(registry_file.read_text())
    data["profiles"][0]["requirements"] = ["transformers>=99"]
    other.write_text(json.dumps(data))
    snap = snapshot_path("h100-single")
    ok = record(
        full_draft(run_label="one"),
        snapshot=snap,
        ledger=ledger,
        catalog=load_catalog(str(registry_file)),
        cwd=tmp_path,
    )
    blocked = record(
        full_draft(run_label="two"),
        snapshot=snap,
        ledger=ledger,
        catalog=load_catalog(str(other)),
        cwd=tmp_path,
    )
    assert judged == ["LAB-GPU", "LAB-GPU"]
    assert (ok.record.profile.verdict, blocked.record.profile.verdict) == ("ok", "blocked")


@pytest.mark.parametrize("profile", ["LAB-GPU", "LAB-BROKEN"])
def test_a_report_at_hand_is_used_not_judged_again(tmp_path, ledger, catalog, judged, monkeypatch, profile):
    from stackcheck.results import record

    report = preflight_report(profile, catalog=catalog)
    judged.clear()
    snap = snapshot_path("h100-single")
    given = record(
        full_draft(run_label="given", profile=profile),
        snapshot=snap,
        ledger=ledger,
        catalog=catalog,
        cwd=tmp_path,
        report=report,
    )
    assert judged == []
    monkeypatch.setattr(recording, "_JUDGED", {})
    fresh = record(
        full_draft(run_label="fresh", profile=profile),
        snapshot=snap,
        ledger=ledger,
        catalog=catalog,
        cwd=tmp_path,
    )
    assert judged == [profile]
    assert given.record.profile == fresh.record.profile
    assert given.record.snapshot_digest == fresh.record.snapshot_digest == report.snapshot_digest


def refusal(**kw) -> str:
    with pytest.raises(Refused) as info:
        recording.from_report(**kw)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_a_report_of_another_snapshot_profile_or_registry_is_refused(catalog):
    from stackcheck.environment import load_snapshot, snapshot_digest

    digest = snapshot_digest(load_snapshot(str(snapshot_path("h100-single"))))
    laptop = preflight_report(snapshot="cpu-laptop", catalog=catalog)
    assert refusal(report=laptop, profile_id="LAB-GPU", digest=digest, catalog=catalog) == (
        "preflight report: not this result's preflight: it judged "
        f"snapshot {laptop.snapshot_digest[:19]}…, the result's is "
        f"{digest[:19]}…; run preflight and record on one snapshot (--snapshot FILE)"
    )
    assert refusal(
        report=preflight_report("LAB-BROKEN", catalog=catalog),
        profile_id="LAB-GPU",
        digest=digest,
        catalog=catalog,
    ) == (
        "preflight report: not this result's preflight: it judged "
        "profile 'LAB-BROKEN', the result declares 'LAB-GPU'"
    )
    builtin = preflight_report(catalog=catalog)
    builtin.environment["registry"] = "built-in"
    assert refusal(report=builtin, profile_id="LAB-GPU", digest=digest, catalog=catalog) == (
        "preflight report: not this result's preflight: it "
        f"used registry built-in, the result {catalog.source}"
    )
    skipping = preflight_report(catalog=catalog, skip=("GPU",))
    assert refusal(report=skipping, profile_id="LAB-GPU", digest=digest, catalog=catalog) == (
        "preflight report: not this result's preflight: it skipped GPU001, GPU002, GPU003, GPU004 (--skip)"
    )
    forged = preflight_report("LAB-BROKEN", catalog=catalog)
    forged.verdict = "ok"
    forged_digest = forged.snapshot_digest
    assert refusal(report=forged, profile_id="LAB-BROKEN", digest=forged_digest, catalog=catalog) == (
        "preflight report: not this result's preflight: its verdict 'ok' is not the worst of its checks"
    )
    empty = msgspec.structs.replace(preflight_report(catalog=catalog), checks=[])
    assert refusal(report=empty, profile_id="LAB-GPU", digest=digest, catalog=catalog) == (
        "preflight report: not this result's preflight: it has no checks"
    )


def test_the_skip_reason_is_the_one_run_checks_gives(catalog):
    reasons = {
        c.reason for c in preflight_report(catalog=catalog, skip=("GPU",)).checks if c.id.startswith("GPU")
    }
    assert reasons == {recording.SKIPPED_BY_USER}


def test_a_registry_named_by_another_path_is_the_same(tmp_path, catalog, registry_file, monkeypatch):
    from stackcheck.environment import load_snapshot, snapshot_digest

    report = preflight_report(catalog=catalog)
    monkeypatch.chdir(registry_file.parent)
    report.environment["registry"] = registry_file.name  # relative, as `--registry FILE` from its directory
    digest = snapshot_digest(load_snapshot(str(snapshot_path("h100-single"))))
    ref, scope = recording.from_report(report, "LAB-GPU", digest, catalog=catalog)
    assert (ref.verdict, ref.registry_source, scope) == ("ok", catalog.source, "single-gpu")


def test_a_doctor_report_or_unreadable_file_is_bad_input(tmp_path, catalog):
    doctor = preflight_report(catalog=catalog)
    doctor.kind = "doctor"
    path = tmp_path / "doctor.json"
    path.write_bytes(msgspec.json.encode(doctor))
    with pytest.raises(
        InputError,
        match=r"^.*doctor\.json: kind: expected a preflight report \(stackcheck preflight --json\), "
        r"got 'doctor'$",
    ):
        recording.from_report(str(path), "LAB-GPU", doctor.snapshot_digest, catalog=catalog)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(InputError, match="broken.json"):
        recording.from_report(str(tmp_path / "broken.json"), "LAB-GPU", "", catalog=catalog)


# ------------------------------------------------------------------ through the CLI
@pytest.fixture
def sc(tmp_path, results_cli):
    return lambda *args: results_cli(*args, ledger_dir=tmp_path / "ledger")


def cli_preflight(capsys, registry_file, *extra) -> str:
    from stackcheck.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["preflight", "-p", "LAB-GPU", "--registry", str(registry_file), "--json", *extra])
    return capsys.readouterr().out


def test_cli_record_with_the_report_of_its_snapshot(sc, tmp_path, registry_file, capsys, judged):
    snap = str(snapshot_path("h100-single"))
    report = tmp_path / "preflight.json"
    report.write_text(cli_preflight(capsys, registry_file, "--snapshot", snap))
    (tmp_path / "draft.json").write_text(json.dumps(full_draft()))
    judged.clear()
    code, out, err = sc(
        "record", str(tmp_path / "draft.json"), "--snapshot", snap, "--report", str(report), "--json"
    )
    assert (code, err, judged) == (0, "", [])
    stored = json.loads((tmp_path / json.loads(out)["path"]).read_text())
    assert (
        stored["profile"]["verdict"] == "ok"
        and stored["snapshot_digest"] == json.loads(report.read_text())["snapshot_digest"]
    )


def test_cli_record_refuses_the_report_of_another_snapshot(sc, tmp_path, registry_file, capsys):
    report = tmp_path / "preflight.json"
    report.write_text(cli_preflight(capsys, registry_file, "--snapshot", str(snapshot_path("cpu-laptop"))))
    (tmp_path / "draft.json").write_text(json.dumps(full_draft()))
    code, out, err = sc(
        "record",
        str(tmp_path / "draft.json"),
        "--snapshot",
        str(snapshot_path("h100-single")),
        "--report",
        str(report),
    )
    assert code == 1 and out == ""
    assert err.startswith(
        f"stackcheck: refused: {report}: not this result's preflight: it judged snapshot sha256:"
    )
    assert err.count("\n") == 1


def test_cli_report_needs_the_snapshot_it_judged(sc, tmp_path):
    (tmp_path / "draft.json").write_text(json.dumps(full_draft()))
    code, _, err = sc("record", str(tmp_path / "draft.json"), "--report", str(tmp_path / "preflight.json"))
    assert code == 2 and err.endswith("Error: --report needs the --snapshot FILE its preflight judged\n")


def test_record_outside_git_starts_no_subprocess(record_in, monkeypatch, tmp_path):
    monkeypatch.setattr("stackcheck.probe.proc.run", lambda *a, **k: pytest.fail(f"a subprocess ran: {a[0]}"))
    done = record_in(full_draft(), cwd=tmp_path)
    assert (done.record.git.commit, done.record.git.source) == ("c" * 40, "declared")
