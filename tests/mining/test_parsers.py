"""Reading a job: pytest's report, JUnit XML, tracebacks and error lines, step ends, env facts."""

from __future__ import annotations

import io

import pytest

from stackcheck.errors import InputError
from stackcheck.mining.envfacts import EnvWatcher, cell_of, facts_from_env, facts_from_job_name
from stackcheck.mining.extract import mining_regions, scan_lines
from stackcheck.mining.inputs import LogFile
from stackcheck.mining.junit import read_junit
from stackcheck.triage.reader import iter_lines

from .conftest import MATRIX, matrix_runs


def scan_text(text: str):
    return scan_lines(iter_lines(io.BytesIO(text.encode()), "<test>"))


def scan_file(path):
    with open(path, "rb") as fh:
        return scan_lines(iter_lines(fh, str(path)))


def test_pytest_report_of_a_numpy_2_job():
    run = next(
        r for r in matrix_runs() if r["job"] == "unit (debian-12, 3.11, numpy-2.2.6)" and r["run"] == "8801"
    )
    scan = scan_file(MATRIX / run["log"])
    fails = {f.test: f for f in scan.failures.values()}
    assert scan.failed and scan.pytest_result.startswith(("2 failed", "3 failed"))
    f = fails["tests/test_stats.py::test_mean_dtype"]
    assert (f.kind, f.exception, f.frames) == (
        "pytest",
        "AttributeError",
        ("matrixpkg/stats.py:mean_dtype", "tests/test_stats.py:test_mean_dtype"),
    )
    # the whole message, from the E line: pytest cut the summary's copy to "…was..."
    assert f.message == "`np.float_` was removed in the NumPy 2.0 release. Use `np.float64` instead."
    assert fails["tests/test_stats.py::test_total"].message == "module 'numpy' has no attribute 'product'"
    assert scan.facts["python"] == "3.11.7" and scan.facts["pkg:numpy"] == "2.2.6"


def test_a_code_bug_without_exception_line_takes_the_location_type():
    run = next(r for r in matrix_runs() if r["job"].startswith("window"))
    (f,) = scan_file(MATRIX / run["log"]).failures.values()
    assert (f.exception, f.message, f.test) == (
        "AssertionError",
        "assert [3, 5] == [3, 5, 7]",
        "tests/test_window.py::test_moving_sum",
    )


def test_python_traceback_outside_pytest():
    scan = scan_text(
        "step 1\nTraceback (most recent call last):\n"
        '  File "/home/runner/work/proj/proj/train.py", line 10, in <module>\n    main()\n'
        '  File "/home/runner/work/proj/proj/src/proj/model.py", line 3, in build\n'
        "    torch.zeros(1).cuda()\n"
        '  File "/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py", line 310, in _lazy_init\n'
        "    raise AssertionError\n"
        "AssertionError: Torch not compiled with CUDA enabled\n"
        "##[error]Process completed with exit code 1.\n"
    )
    (f,) = scan.failures.values()
    assert (f.kind, f.exception, f.message) == (
        "traceback",
        "AssertionError",
        "Torch not compiled with CUDA enabled",
    )
    assert f.frames == ("src/proj/model.py:build", "train.py:<module>") and f.line == 9
    assert scan.failed


def test_error_lines_skip_what_only_says_it_failed():
    scan = scan_text(
        "npm ERR! code ELIFECYCLE\nerror: linker `cc` not found\n"
        "##[error]Process completed with exit code 101.\n"
    )
    assert [(f.exception, f.message, f.kind) for f in scan.failures.values()] == [
        ("", "linker `cc` not found", "error")
    ]


def test_a_failed_step_with_no_error_line_gives_its_last_line():
    scan = scan_text(
        "Running awesome_bot\nIssues :-(\n> Links\n  1. [L296] 301 https://x.org/a\n"
        'The command "awesome_bot README.md" exited with 1.\n'
    )
    (f,) = scan.failures.values()
    assert (f.kind, f.message, f.line) == ("step", "1. [L296] 301 https://x.org/a", 4)


def test_step_regions_hold_the_lines_before_a_non_zero_exit():
    lines = [f"line {i}" for i in range(30)] + ["Done. Your build exited with 1."]
    regions = list(mining_regions(lines))
    (step,) = [r for r in regions if r.kind == "step"]
    assert (step.start, step.end, step.lines[0]) == (11, 30, "line 10")


def test_junit_with_control_bytes_is_read(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_bytes(
        b'<?xml version="1.0"?><testsuites><testsuite name="s"><testcase classname="t.test_a" '
        b'name="test_b"><failure message="ValueError: bad \x1b[31mred\x1b[0m">Traceback\x08 text'
        b'</failure></testcase><testcase classname="t.test_a" name="test_c"/></testsuite></testsuites>'
    )
    failures, cases = read_junit(LogFile(str(path), lambda: open(path, "rb")))
    assert cases == 2
    assert [(f.exception, f.message, f.test, f.kind) for f in failures] == [
        ("ValueError", "bad red", "t.test_a::test_b", "junit")
    ]


@pytest.mark.parametrize(
    "data, problem",
    [
        (
            b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><testsuites/>',
            "has a document type declaration; JUnit reports need none (refused)",
        ),
        (
            b"<testsuites><testcase>",
            "line 1: not well-formed XML (no element found: line 1, column 22), expected a JUnit report",
        ),
        (b"<html></html>", "root element <html>, expected <testsuites> or <testsuite> (JUnit)"),
    ],
)
def test_bad_junit_is_one_line(tmp_path, data, problem):
    path = tmp_path / "bad.xml"
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        read_junit(LogFile(str(path), lambda: open(path, "rb")))
    assert str(exc.value) == f"{path}: {problem}"


def test_facts_from_job_names():
    assert facts_from_job_name("test (ubuntu-22.04, 3.11, torch-2.3)") == (
        "test",
        {"os": "ubuntu-22.04", "python": "3.11", "pkg:torch": "2.3", "platform": "linux"},
    )
    assert facts_from_job_name("tests (windows-latest, py3.12, cu121, numpy==2.0, fast)") == (
        "tests",
        {
            "os": "windows-latest",
            "python": "3.12",
            "torch_cuda": "12.1",
            "pkg:numpy": "2.0",
            "matrix.4": "fast",
            "platform": "windows",
        },
    )
    assert facts_from_job_name("Test 3.10 x64 wheels for macos-latest") == (
        "Test <python> <arch> wheels for <os>",
        {"python": "3.10", "arch": "x64", "os": "macos-latest", "platform": "darwin"},
    )
    assert facts_from_job_name("lint") == ("lint", {})


def test_facts_the_log_prints():
    w = EnvWatcher()
    for line in (
        "Image: ubuntu-22.04",
        "Successfully set up CPython (3.10.13)",
        "numpy==2.0.2",
        "Successfully installed torch-2.3.1+cu121 typing_extensions-4.12.2",
        "platform linux -- Python 3.10.13, pytest-8.3.3, pluggy-1.5.0",
    ):
        w.feed(line)
    assert w.finish() == {
        "os": "ubuntu-22.04",
        "platform": "linux",
        "python": "3.10.13",
        "pkg:numpy": "2.0.2",
        "pkg:torch": "2.3.1+cu121",
        "pkg:typing-extensions": "4.12.2",
    }


def test_a_collect_env_block_gives_torch_and_driver_facts():
    from pathlib import Path

    sample = (Path(__file__).parents[1] / "data" / "collect_env" / "torch21-cu121-driver470.txt").read_text()
    w = EnvWatcher()
    for line in ["Run python -m torch.utils.collect_env", *sample.splitlines(), "pytest -q"]:
        w.feed(line)
    assert w.finish() == {
        "python": "3.11.6",
        "platform": "linux",
        "arch": "x86_64",
        "pkg:torch": "2.1.0+cu121",
        "torch_cuda": "12.1",
    }


def test_sidecar_env_and_cells():
    assert facts_from_env(
        {"python": "3.11.7", "numpy": "2.0.2", "os": "debian-12", "packages": {"Torch": "2.3"}}
    ) == {
        "python": "3.11.7",
        "pkg:numpy": "2.0.2",
        "os": "debian-12",
        "pkg:torch": "2.3",
        "platform": "linux",
    }
    assert cell_of({"b": "1", "a": "2"}) == cell_of({"a": "2", "b": "1"})
    assert cell_of({"a": "1"})[0] != cell_of({"a": "2"})[0]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_LINES = st.lists(
    st.one_of(
        st.text(max_size=120),
        st.sampled_from(
            [
                "Traceback (most recent call last):",
                '  File "a/b.py", line 3, in f',
                "ValueError: x",
                "=" * 10 + " FAILURES " + "=" * 10,
                "_" * 5 + " test_a " + "_" * 5,
                "E   KeyError: 'k'",
                "a/b.py:3: KeyError",
                "FAILED t.py::test_a - KeyError: 'k'",
                "##[error]Process completed with exit code 2.",
                "=" * 5 + " 1 failed in 0.1s " + "=" * 5,
                "numpy==2.0.2",
                "Successfully installed x-1",
            ]
        ),
    ),
    max_size=60,
)


@settings(max_examples=200)
@given(_LINES)
def test_any_log_scans_to_a_result(lines):
    scan = scan_lines([" ".join(line.split()) if "\n" in line or "\r" in line else line for line in lines])
    assert scan.lines == len(lines)
    for f in scan.failures.values():
        assert len(f.key) == 16 and 1 <= f.line <= len(lines)
