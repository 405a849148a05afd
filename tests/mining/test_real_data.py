"""The shared real data sets: a GitHub Actions run (GHALogs), Loghub 2k, LogChunks. Each test
extracts what it needs into its tmp dir (figures over whole sets are in benchmarks/bench_mine.py)."""

from __future__ import annotations

import csv
import importlib.util
import shutil
import zipfile
from pathlib import Path

from stackcheck.mining.extract import mining_regions
from stackcheck.mining.ingest import scan_jobs
from stackcheck.mining.inputs import discover
from stackcheck.mining.metrics import grouping_accuracy
from stackcheck.mining.templates import TemplateMiner
from stackcheck.triage.reader import iter_lines
from stackcheck.triage.regions import extract_regions

from .conftest import extract

BENCH = Path(__file__).parents[2] / "benchmarks"


def test_the_real_github_actions_run_folder_and_zip(tmp_path):
    folder = extract("gha_run_example.tar.xz", tmp_path) / "gha_example"
    (folder / "log.tar.gz").unlink()  # the dataset's own copy of the same logs
    records = scan_jobs(discover(folder))
    assert len(records) == 22 and {r.outcome for r in records} == {"passed"}  # a green run
    by_job = {r.job: r for r in records}
    win = by_job["Test 3.9 x64 wheels for windows-latest"]
    assert win.family == "Test <python> <arch> wheels for <os>"
    assert {k: win.facts[k] for k in ("python", "os", "platform", "arch")} == {
        "python": "3.9.13",
        "os": "windows-2022",
        "platform": "windows",
        "arch": "x64",
    }
    assert (
        by_job["Test 3.10 x64 wheels for ubuntu-latest"].facts["os"] == "ubuntu-22.04"
    )  # the runner image wins
    assert sum(r.lines for r in records) == 45234
    # the same run as GitHub's log archive
    archive = tmp_path / "logs_6262785113.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*.txt")):
            zf.write(path, path.relative_to(folder).as_posix())
    zipped = scan_jobs(discover(archive))
    assert {r.run for r in zipped} == {"6262785113"}
    assert sorted((r.job, r.lines, r.outcome, [f.key for f in r.failures]) for r in zipped) == sorted(
        (r.job, r.lines, r.outcome, [f.key for f in r.failures]) for r in records
    )


def test_a_job_with_only_step_logs_is_read_in_step_order(tmp_path):
    folder = extract("gha_run_example.tar.xz", tmp_path) / "gha_example"
    run = tmp_path / "steps-only"
    shutil.copytree(folder / "Twine check", run / "Twine check")
    (record,) = scan_jobs(discover(run))
    steps = sorted((folder / "Twine check").glob("*.txt"), key=lambda p: int(p.name.split("_")[0]))
    assert record.job == "Twine check"
    assert record.lines == sum(len(p.read_bytes().splitlines()) for p in steps)


def loghub_ga(root: Path, system: str, **settings) -> float:
    with open(
        root / "loghub" / system / f"{system}_2k.log_structured.csv", newline="", encoding="utf-8"
    ) as fh:
        rows = list(csv.DictReader(fh))
    miner = TemplateMiner(**settings)
    return round(grouping_accuracy([miner.add(r["Content"]) for r in rows], [r["EventId"] for r in rows]), 4)


def test_template_grouping_on_loghub(tmp_path):
    root = extract("loghub_2k.tar.xz", tmp_path)
    # logparser's Drain settings for OpenSSH, plus our masks: Drain3 with those settings alone reaches 0.787
    assert (
        loghub_ga(
            root, "OpenSSH", sim_th=0.6, depth=5, extra_masks=[r"(\d+\.){3}\d+", r"([\w-]+\.){2,}[\w-]+"]
        )
        == 0.9945
    )
    assert loghub_ga(root, "HDFS") == 0.9975  # masks and Drain's defaults


def test_failed_steps_tails_find_what_triage_regions_miss(tmp_path):
    """LogChunks (Brandt et al., MSR 2020): an awesome_bot link check, whose labelled reason
    ("> Links" and the dead links) carries no error keyword, only a non-zero step end after it."""
    spec = importlib.util.spec_from_file_location("triage_regions", BENCH / "triage_regions.py")
    tr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tr)
    root = extract("logchunks.tar.xz", tmp_path)
    wanted = root / "samples" / "Lisp" / "emacs-tw@awesome-emacs" / "failed" / "536981552.log"
    (chunk,) = [c for log, c in tr.examples(root) if log == wanted]
    with open(wanted, "rb") as fh:
        lines = [line.strip() for line in iter_lines(fh, str(wanted))]
    assert chunk[0] == "> Links"
    assert not any(chunk[0] in line for r in extract_regions(lines) for line in r.lines)
    steps = [r for r in mining_regions(lines) if r.kind == "step"]
    assert any(line.strip() == "> Links" for r in steps for line in r.lines)
