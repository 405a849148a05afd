"""Ingest: inputs of every shape, the store's idempotence, one transaction per run, concurrency,
PostgreSQL, and unusable input (one line, exit 2, nothing stored)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from stackcheck.cli import main
from stackcheck.errors import InputError
from stackcheck.mining.ingest import scan_jobs
from stackcheck.mining.inputs import discover
from stackcheck.mining.store import MineStore

from .conftest import MATRIX, matrix_runs


def run_cli(*args: str) -> tuple[int, str, str]:
    """The CLI in a child process (its own registry of checks and knowledge)."""
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", *args], capture_output=True, text=True, timeout=120
    )
    return proc.returncode, proc.stdout, proc.stderr


def stored_jobs(path: Path) -> int:
    with MineStore(str(path)) as st:
        return st.query("SELECT COUNT(*) FROM mine_jobs")[0][0]


def gha_zip(dest: Path, run: str, attempt: int) -> Path:
    """One run of the matrix laid out as GitHub Actions' log download: N_<job name>.txt."""
    path = dest / f"logs_{run}_{attempt}.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for k, r in enumerate((r for r in matrix_runs() if r["run"] == run and r["attempt"] == attempt), 1):
            zf.write(MATRIX / r["log"], f"{k}_{r['job']}.txt")
    return path


def test_the_sidecar_folder_gives_96_jobs_with_their_facts():
    sources = discover(MATRIX)
    assert len(sources) == 96
    records = scan_jobs(sources)
    first = records[0]
    assert (first.run, first.job, first.attempt, first.family) == (
        "8801",
        "unit (debian-12, 3.11, numpy-1.26.4)",
        1,
        "unit",
    )
    # the sidecar's facts win; the log adds what it prints (pip freeze, pytest's header)
    assert first.facts["pkg:numpy"] == "1.26.4" and first.facts["python"] == "3.11.7"
    assert first.facts["pkg:pytest"] == "8.3.3" and first.facts["platform"] == "linux"
    assert [r.outcome for r in records] == [r["outcome"] for r in matrix_runs()]


def test_a_github_actions_zip_without_sidecar_gives_the_same_signatures(tmp_path):
    """The job name (matrix values), pip freeze and pytest's header give the facts; the
    outcome comes from the log (##[error] Process completed with exit code 1)."""
    by_sidecar = {(r.job, r.attempt): r for r in scan_jobs(discover(MATRIX)) if r.run == "8802"}
    for attempt in (1, 2):
        zipped = scan_jobs(discover(gha_zip(tmp_path, "8802", attempt), attempt=attempt))
        assert len(zipped) == 12 and {r.run for r in zipped} == {"8802"}
        for r in zipped:
            twin = by_sidecar[(r.job, attempt)]
            assert r.outcome == twin.outcome
            assert [f.key for f in r.failures] == [f.key for f in twin.failures]
            assert r.facts["pkg:numpy"] == twin.facts["pkg:numpy"] and r.family == twin.family


def test_junit_alone_gives_the_same_signatures_as_the_log():
    run = matrix_runs()[1]  # unit, numpy 2.0.2: np.float_ and np.product
    from_log = scan_jobs(discover(MATRIX / run["log"], job=run["job"]))[0]
    from_junit = scan_jobs(discover(MATRIX / run["junit"], job=run["job"]))[0]
    assert from_junit.outcome == from_log.outcome == "failed"
    assert sorted(f.key for f in from_junit.failures) == sorted(f.key for f in from_log.failures)
    assert len(from_log.failures) == 2


def test_ingest_is_idempotent_per_run_job_attempt(tmp_path):
    db = tmp_path / "store.sqlite"
    records = scan_jobs(discover(MATRIX))
    with MineStore(str(db)) as st:
        first = st.ingest(records, source="m", now="t")
        again = st.ingest(records, source="m", now="t")
        hits = st.query("SELECT COUNT(*) FROM mine_hits")[0][0]
    assert [(r.run, r.stored, r.already) for r in first] == [
        (run, 24, 0) for run in ("8801", "8802", "8803", "8804")
    ]
    assert [(r.stored, r.already, r.signatures) for r in again] == [(0, 24, 0)] * 4
    assert stored_jobs(db) == 96
    assert hits == sum(len(r.failures) for r in records)


def test_a_failure_inside_a_run_stores_none_of_it(tmp_path, monkeypatch):
    db = tmp_path / "store.sqlite"
    records = [r for r in scan_jobs(discover(MATRIX)) if r.run in ("8801", "8802")]
    with MineStore(str(db)) as st:
        st.ingest(records[:24], source="m", now="t")  # run 8801 whole
        calls = []
        real = MineStore._insert_job

        def flaky_insert(self, tx, record):
            calls.append(record)
            if len(calls) == 13:
                raise OSError("disk full")
            real(self, tx, record)

        monkeypatch.setattr(MineStore, "_insert_job", flaky_insert)
        with pytest.raises(OSError):
            st.ingest(records[24:], source="m", now="t")
        runs = st.query("SELECT run, COUNT(*) FROM mine_jobs GROUP BY run")
        hits = st.query("SELECT COUNT(*) FROM mine_hits WHERE run = '8802'")[0][0]
    assert runs == [("8801", 24)] and hits == 0  # 12 jobs of 8802 had been written, then rolled back


_INGEST_CHILD = """
import sys
from stackcheck.mining.ingest import scan_jobs
from stackcheck.mining.inputs import discover
from stackcheck.mining.store import MineStore
records = scan_jobs(discover(sys.argv[1]))
with MineStore(sys.argv[2]) as st:
    print(sum(r.stored for r in st.ingest(records, source="m", now="t")))
"""


def test_concurrent_ingests_of_one_run_store_it_once(tmp_path):
    db = tmp_path / "store.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _INGEST_CHILD, str(MATRIX), str(db)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    stored = sorted(int(p.communicate(timeout=120)[0]) for p in procs)
    assert all(p.returncode == 0 for p in procs)
    assert sum(stored) == 96 and stored_jobs(db) == 96


@pytest.mark.postgres
def test_postgresql_store_gives_the_same_rules(tmp_path, matrix_mined):
    import psycopg

    from stackcheck.mining.rules import build_rules
    from tests.results.conftest import postgres_dsn, with_search_path

    dsn = postgres_dsn()
    schema = f"mine_{tmp_path.name[-12:].replace('-', '_').lower()}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        records = scan_jobs(discover(MATRIX))
        with MineStore(with_search_path(dsn, schema)) as st:
            st.ingest(records, source="m", now="t")
            again = st.ingest(records, source="m", now="t")
            mined = build_rules(st)
        assert sum(r.stored for r in again) == 0

        def strip(rows):
            return [(r.id, r.coverage, r.failure_rate, r.reproducibility, r.scope) for r in rows]

        assert strip(mined.summary) == strip(matrix_mined.summary)
        from stackcheck.results.index import redact

        assert mined.store == redact(with_search_path(dsn, schema))  # never a password
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


# ----- unusable input: one line naming the file (and line), exit 2, nothing stored ---------------


def cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_a_truncated_zip_is_one_line_exit_2(tmp_path, capsys):
    whole = gha_zip(tmp_path, "8801", 1).read_bytes()
    cut = tmp_path / "logs_8801.zip"
    cut.write_bytes(whole[: len(whole) // 2])
    db = tmp_path / "store.sqlite"
    code, out, err = cli(capsys, "mine", "ingest", str(cut), "--store", str(db))
    assert code == 2 and out == ""
    assert (
        err == f"stackcheck: error: {cut}: not a readable zip archive (File is not a zip file); "
        "a truncated download?\n"
    )
    assert not db.exists()


def test_a_corrupt_member_stops_the_ingest_before_anything_is_stored(tmp_path, capsys):
    path = gha_zip(tmp_path, "8801", 1)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.infolist()[5]
    start = info.header_offset + 30 + len(info.filename.encode()) + 200
    data[start : start + 50] = bytes(50)  # damage one member's deflated bytes, keep the directory
    path.write_bytes(bytes(data))
    db = tmp_path / "store.sqlite"
    code, out, err = cli(capsys, "mine", "ingest", str(path), "--store", str(db))
    assert (code, out) == (2, "")
    assert err == (
        f"stackcheck: error: {path}: 6_unit (debian-12, 3.12, numpy-2.3.4).txt: truncated or corrupt "
        "archive member (Error -3 while decompressing data: invalid distance too far back)\n"
    )
    assert not db.exists()  # the five members before it were scanned, nothing was written


def test_a_binary_file_is_refused(tmp_path, capsys):
    blob = tmp_path / "model.bin"
    blob.write_bytes(bytes(range(256)) * 64)
    code, out, err = cli(capsys, "mine", "ingest", str(blob), "--store", str(tmp_path / "s.sqlite"))
    assert (code, out) == (2, "")
    assert err == f"stackcheck: error: {blob}: binary data, expected an error text, traceback or log\n"


def test_an_unreadable_sidecar_line_names_file_and_line(tmp_path, capsys):
    folder = tmp_path / "matrix"
    shutil.copytree(MATRIX, folder)
    lines = (folder / "runs.jsonl").read_text().splitlines()
    lines[2] = lines[2][:40]  # cut mid-object
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    db = tmp_path / "store.sqlite"
    code, out, err = cli(capsys, "mine", "ingest", str(folder), "--store", str(db))
    assert code == 2 and out == ""
    assert err.startswith(f"stackcheck: error: {folder / 'runs.jsonl'}: line 3: not JSON (")
    assert err.count("\n") == 1 and not db.exists()


@pytest.mark.parametrize(
    "line, problem",
    [
        ('["a list"]', "line 1: expected a JSON object, found list"),
        ('{"job": ""}', "line 1: job: expected the job's name (a non-empty string)"),
        ('{"job": "t", "attempt": 0}', "line 1: attempt: expected a whole number >= 1, found 0"),
        (
            '{"job": "t", "outcome": "maybe"}',
            "line 1: outcome: expected failed or passed (or success/failure), found 'maybe'",
        ),
        ('{"job": "t", "log": "missing.txt"}', "line 1: log: no such file"),
        ("[" * 100_000 + "]" * 100_000, "line 1: JSON nested too deeply; expected one flat object a line"),
    ],
)
def test_sidecar_fields_are_checked(tmp_path, line, problem):
    (tmp_path / "runs.jsonl").write_text(line + "\n")
    with pytest.raises(InputError) as exc:
        scan_jobs(discover(tmp_path))
    assert str(exc.value).startswith(f"{tmp_path / 'runs.jsonl'}: {problem}")


def test_a_log_with_no_failure_is_a_passing_job(tmp_path, capsys):
    log = tmp_path / "build.log"
    log.write_text("Collecting numpy\nSuccessfully installed numpy-2.0.2\n===== 3 passed in 0.1s =====\n")
    db = tmp_path / "s.sqlite"
    code, out, err = cli(capsys, "mine", "ingest", str(log), "--store", str(db), "--run", "7", "--json")
    assert (code, err) == (0, "")
    (job,) = json.loads(out)["jobs"]
    assert (job["outcome"], job["signatures"], job["facts"]) == ("passed", 0, {"pkg:numpy": "2.0.2"})


def test_a_failed_job_whose_log_shows_no_reason_is_noted(tmp_path, capsys):
    log = tmp_path / "quiet.log"
    log.write_text("compiling\nlinking\n")
    code, out, err = cli(
        capsys, "mine", "ingest", str(log), "--store", str(tmp_path / "s.sqlite"), "--outcome", "failed"
    )
    assert code == 0
    assert out.splitlines() == [
        "run quiet: 1 job(s) stored (1 failed, 0 signature(s)), 0 already in " + str(tmp_path / "s.sqlite"),
        f"  note: {log}: failed, but no failure region was found in its log",
    ]


def test_an_empty_log_and_a_missing_path_are_refused(tmp_path, capsys):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert cli(capsys, "mine", "ingest", str(empty), "--store", str(tmp_path / "s.sqlite"))[:1] == (2,)
    code, _, err = cli(
        capsys, "mine", "ingest", str(tmp_path / "nope"), "--store", str(tmp_path / "s.sqlite")
    )
    assert (code, err) == (2, f"stackcheck: error: {tmp_path / 'nope'}: no such file or folder\n")


def test_the_store_refuses_a_symlinked_sqlite_file(tmp_path, capsys):
    target = tmp_path / "elsewhere.sqlite"
    link = tmp_path / "store.sqlite"
    link.symlink_to(target)
    code, _, err = cli(capsys, "mine", "ingest", str(MATRIX), "--store", str(link))
    assert code == 2 and "is a symbolic link" in err and not target.exists()
