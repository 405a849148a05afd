"""Failure-region extraction and line cleaning, on hand-made layouts and on real CI logs."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest

from stackcheck.errors import InputError
from stackcheck.triage.reader import MAX_LINE_CHARS, clean_line, iter_lines
from stackcheck.triage.regions import REGION_HEAD, REGION_TAIL, extract_regions
from tests.factories import SHARED

SHARED_LOGS = SHARED / "data" / "logs"


def region_benchmark():
    """benchmarks/triage_regions.py, which measures extraction on the shared log data."""
    spec = importlib.util.spec_from_file_location(
        "triage_regions", Path(__file__).parents[2] / "benchmarks" / "triage_regions.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def regions_of(text: str):
    return list(extract_regions(iter_lines(io.BytesIO(text.encode()), "<test>")))


def test_clean_line_removes_colour_timestamps_and_progress():
    assert clean_line("\x1b[31mERROR\x1b[0m: boom\n") == "ERROR: boom"
    assert clean_line("2023-10-04T12:34:56.1234567Z ##[error]Process completed with exit code 1.") == (
        "##[error]Process completed with exit code 1."
    )
    assert clean_line("10%\r50%\r100% done\r\n") == "100% done"
    assert clean_line("Solving environment: - \x08\x08failed\r") == "Solving environment: - failed"


def test_python_traceback_is_followed_to_its_exception_line():
    text = (
        "setup\nTraceback (most recent call last):\n"
        + "".join(f'  File "f{i}.py", line {i}, in g\n    call()\n' for i in range(30))
        + "ValueError: bad value\nnext step\n\n\nunrelated\n"
    )
    (region,) = regions_of(text)
    assert region.kind == "traceback"
    assert region.lines[0] == "setup" and "ValueError: bad value" in region.lines
    assert "unrelated" not in region.lines


def test_prefixed_rank_traceback_and_chained_exceptions():
    text = (
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "a.py", line 1, in <module>\n'
        "[rank0]:     main()\n"
        "[rank0]: KeyError: 'x'\n"
        "[rank0]: \n"
        "[rank0]: During handling of the above exception, another exception occurred:\n"
        "[rank0]: \n"
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "b.py", line 2, in <module>\n'
        "[rank0]: torch.distributed.DistBackendError: NCCL error\n"
    )
    (region,) = regions_of(text)
    assert region.start == 1 and region.end == 10
    assert region.lines[-1].endswith("DistBackendError: NCCL error")


def test_jupyter_traceback_reaches_the_exception():
    text = (
        "---------------------------------------------------------------------------\n"
        "IndexError                                Traceback (most recent call last)\n"
        "<ipython-input-14-58747f1080e0> in <cell line: 48>()\n"
        "     46 print(loss)\n"
        "---> 48 print(decode(m.generate(idx)))\n"
        "Cell In[76], line 31, in train(env, agent, max_timesteps)\n"
        "IndexError: index out of range in self\n"
    )
    (region,) = regions_of(text)
    assert region.lines[-1] == "IndexError: index out of range in self"


def test_separate_failures_make_separate_regions_and_quiet_lines_are_dropped():
    quiet = "".join(f"step {i} ok\n" for i in range(40))
    text = quiet + "ERROR: first failure\n" + quiet + "##[error]Process completed with exit code 1.\n" + quiet
    regions = regions_of(text)
    assert [r.kind for r in regions] == ["error", "error"]
    assert regions[0].start == 38 and regions[1].lines[3] == "##[error]Process completed with exit code 1."
    assert sum(len(r.lines) for r in regions) < 30


def test_signature_trigger_opens_a_region_without_error_keywords():
    text = "a\nb\nDisabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1\nc\n"
    assert regions_of(text) == []
    (region,) = extract_regions(text.splitlines(), also_trigger=lambda line: "Disabling PyTorch" in line)
    assert region.kind == "signature"


def test_an_endless_failure_is_capped_with_head_and_tail():
    text = "".join(f"ERROR {i}\n" for i in range(5000))
    (region,) = regions_of(text)
    assert len(region.lines) == REGION_HEAD + 1 + REGION_TAIL
    assert region.lines[0] == "ERROR 0" and region.lines[-1] == "ERROR 4999"
    assert "lines elided" in region.lines[REGION_HEAD]
    assert region.start == 1 and region.end == 5000


def test_reader_bounds_overlong_lines_and_rejects_binary_and_empty():
    lines = list(iter_lines(io.BytesIO(b"x" * (MAX_LINE_CHARS * 5) + b"\nERROR tail\n"), "<t>"))
    assert len(lines) == 2 and len(lines[0]) == MAX_LINE_CHARS and lines[1] == "ERROR tail"
    with pytest.raises(InputError, match="binary"):
        list(iter_lines(io.BytesIO(b"PK\x03\x04\x00\x00garbage"), "w.zip"))
    with pytest.raises(InputError, match="empty input"):
        list(iter_lines(io.BytesIO(b""), "e.txt"))


@pytest.fixture(scope="module")
def gha_logs(tmp_path_factory):
    archive = SHARED_LOGS / "gha_run_example.tar.xz"
    if not archive.exists():
        pytest.skip("shared log data not present")
    root = tmp_path_factory.mktemp("gha")
    region_benchmark().extract(archive, root)
    return sorted(root.rglob("*.txt"))


def test_github_actions_run_regions_are_few_and_bounded(gha_logs):
    """A real (passing) GitHub Actions run of PyTables wheel builds: 176 step logs, ~90k lines.
    Regions must stay a small share of the lines, and timestamps must be gone."""
    total = kept = 0
    for log in gha_logs:
        with open(log, "rb") as fh:
            lines = list(iter_lines(fh, str(log)))
        total += len(lines)
        for region in extract_regions(lines):
            kept += len(region.lines)
            assert len(region.lines) <= REGION_HEAD + 1 + REGION_TAIL
            assert not any(
                line[:4].isdigit() and "T" in line[:11] and line[10:11] == "T" for line in region.lines
            )
    assert len(gha_logs) > 150 and total > 50_000
    assert kept < 0.1 * total


@pytest.mark.slow
def test_logchunks_labelled_failures_are_found_in_most_logs(tmp_path):
    """LogChunks (MSR 2020): 797 Travis CI logs with a hand-labelled failure chunk. The chunk's
    first line must lie in an extracted region for most of them while regions keep a small
    share of the log (benchmarks/triage_regions.py prints the figures)."""
    archive = SHARED_LOGS / "logchunks.tar.xz"
    if not archive.exists():
        pytest.skip("shared log data not present")
    module = region_benchmark()
    module.extract(archive, tmp_path)
    result = module.measure(tmp_path)
    assert result["examples"] == 797
    assert result["found"] >= 0.7
    assert result["kept"] <= 0.1


def test_reader_rejects_random_bytes_without_nul_but_keeps_latin1_logs():
    random_bytes = bytes(range(0x80, 0x100)) * 2 + b"\n"  # no NUL, none of it UTF-8
    with pytest.raises(InputError, match="binary"):
        list(iter_lines(io.BytesIO(random_bytes), "x.bin"))
    latin1 = "Fehler: Gerät nicht verfügbar — CUDA error: out of memory at step 12\n".encode(
        "latin-1", "replace"
    )
    assert "CUDA error: out of memory" in next(iter_lines(io.BytesIO(latin1), "x.log"))
