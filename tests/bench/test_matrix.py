"""The matrix in text, Markdown and JSON, and pytest-benchmark's JSON read and written
(checked against the real pytest-benchmark: its own reader loads what we write, and we read
what it writes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import msgspec
import pytest

from stackcheck.bench.matrix import from_pytest_benchmark, load_run, markdown, text, to_pytest_benchmark
from stackcheck.bench.run import BenchRun, CaseResult


def case(backend, shape, status, times=(), reason="", group="attention/sdpa", op="attention"):
    from stackcheck.bench.timing import summary

    return CaseResult(
        backend=backend,
        group=group,
        op=op,
        shape=shape,
        geometry="b1 h4 s16 d16",
        dtype="float32",
        status=status,
        reason=reason,
        times_s=list(times),
        stats=summary(list(times)),
        flops=1e6,
        tflops=1e6 / summary(list(times))["median"] / 1e12 if times else None,
    )


RUN = BenchRun(
    created_at="2026-12-01T12:00:00.000000Z",
    device={"kind": "cpu", "name": "x86_64", "arch": "", "torch": "2.13.0+cpu"},
    environment={"torch": "2.13.0+cpu"},
    cases=[
        case("sdpa-math", "s1", "ok", [0.002, 0.002, 0.002, 0.002, 0.002]),
        case("sdpa-math", "s2", "wrong", reason="max error 0.1 exceeds the float32 bound 0.0001"),
        case("sdpa-cudnn", "s1", "skipped", reason="CPU-only: no CUDA GPU here for cuDNN attention"),
        case("sdpa-cudnn", "s2", "skipped", reason="CPU-only: no CUDA GPU here for cuDNN attention"),
        case("matmul-fp32", "g", "ok", [1e-5, 2e-5, 3e-5, 2e-5, 2e-5], group="gemm/matmul", op="gemm"),
    ],
)


def test_text_matrix():
    assert text(RUN) == (
        "bench on cpu x86_64 (torch 2.13.0+cpu)\n"
        "\n"
        "attention:\n"
        "  group           backend     s1           s2\n"
        "  attention/sdpa  sdpa-math   ok 2 ms ±0%  WRONG [1]\n"
        "  attention/sdpa  sdpa-cudnn  skipped [2]  skipped [2]\n"
        "  [1] wrong: max error 0.1 exceeds the float32 bound 0.0001\n"
        "  [2] skipped: CPU-only: no CUDA GPU here for cuDNN attention\n"
        "\n"
        "gemm:\n"
        "  group        backend      g\n"
        "  gemm/matmul  matmul-fp32  ok 20 µs ±0%\n"
        "\n"
        "2 ok, 1 wrong, 2 skipped, 0 error\n"
    )


def test_markdown_matrix():
    assert markdown(RUN) == (
        "# Backend matrix — cpu x86_64 (torch 2.13.0+cpu)\n"
        "\n"
        "## attention\n"
        "\n"
        "| group | backend | s1 | s2 |\n"
        "|---|---|---|---|\n"
        "| attention/sdpa | sdpa-math | ok 2 ms ±0% | WRONG [1] |\n"
        "| attention/sdpa | sdpa-cudnn | skipped [2] | skipped [2] |\n"
        "\n"
        "1. wrong: max error 0.1 exceeds the float32 bound 0.0001\n"
        "2. skipped: CPU-only: no CUDA GPU here for cuDNN attention\n"
        "\n"
        "## gemm\n"
        "\n"
        "| group | backend | g |\n"
        "|---|---|---|\n"
        "| gemm/matmul | matmul-fp32 | ok 20 µs ±0% |\n"
    )


def test_pytest_benchmark_round_trip_keeps_every_case():
    doc = to_pytest_benchmark(RUN)
    assert [b["name"] for b in doc["benchmarks"]] == ["sdpa-math[s1]", "matmul-fp32[g]"]
    b = doc["benchmarks"][1]
    assert (b["group"], b["stats"]["rounds"], b["stats"]["median"], b["stats"]["data"]) == (
        "gemm/matmul",
        5,
        2e-5,
        [1e-5, 2e-5, 3e-5, 2e-5, 2e-5],
    )
    back = from_pytest_benchmark(msgspec.json.encode(doc), "pb.json")
    assert back.source == "pytest-benchmark"
    assert sorted(c.key for c in back.cases) == sorted(c.key for c in RUN.cases)
    by_key = {c.key: c for c in back.cases}
    for original in RUN.cases:
        got = by_key[original.key]
        assert (got.status, got.reason, got.times_s, got.group, got.op, got.dtype) == (
            original.status,
            original.reason,
            original.times_s,
            original.group,
            original.op,
            original.dtype,
        )
    assert (back.device, back.environment) == (RUN.device, RUN.environment)


def test_real_pytest_benchmark_loads_what_we_write(tmp_path, monkeypatch, capsys):
    pytest.importorskip("pytest_benchmark")
    from pytest_benchmark.cli import main

    path = tmp_path / "pb.json"
    path.write_bytes(msgspec.json.encode(to_pytest_benchmark(RUN)))
    monkeypatch.setattr(
        sys, "argv", ["pytest-benchmark", "compare", str(path), "--columns=min,median,rounds"]
    )
    main()
    out = capsys.readouterr().out
    assert "benchmark 'attention/sdpa': 1 tests" in out and "benchmark 'gemm/matmul': 1 tests" in out
    assert "sdpa-math[s1]" in out and "matmul-fp32[g]" in out


def test_we_read_what_real_pytest_benchmark_writes(tmp_path):
    pytest.importorskip("pytest_benchmark")
    (tmp_path / "test_pb.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('n', [10, 20])\n"
        "def test_sum(benchmark, n):\n"
        "    benchmark.group = 'sums'\n"
        "    benchmark(sum, range(n))\n"
    )
    out = tmp_path / "out.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "test_pb.py",
            f"--benchmark-json={out}",
            "--benchmark-save-data",
            "--benchmark-min-rounds=5",
            "--benchmark-max-time=0.001",
        ],
        cwd=tmp_path,
        # a child of an xdist worker: pytest-benchmark would see PYTEST_XDIST_WORKER and not time anything
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and out.exists(), done.stdout + done.stderr
    run = load_run(out)
    assert run.source == "pytest-benchmark"
    assert [(c.backend, c.shape, c.group, c.status) for c in run.cases] == [
        ("test_sum", "10", "sums", "ok"),
        ("test_sum", "20", "sums", "ok"),
    ]
    assert all(len(c.times_s) >= 5 and c.stats["median"] > 0 for c in run.cases)


def test_cli_matrix_formats(cli_main, tmp_path):
    path = tmp_path / "bench.json"
    path.write_bytes(msgspec.json.encode(RUN))
    assert cli_main("bench", "matrix", str(tmp_path)) == (0, text(RUN), "")
    assert cli_main("bench", "matrix", str(path), "--format", "markdown") == (0, markdown(RUN), "")
    code, out, _ = cli_main("bench", "matrix", str(path), "--format", "json")
    assert code == 0 and msgspec.json.decode(out, type=BenchRun) == RUN
    code, _, _ = cli_main(
        "bench", "matrix", str(path), "--format", "pytest-benchmark", "-o", str(tmp_path / "pb.json")
    )
    assert code == 0 and load_run(tmp_path / "pb.json").source == "pytest-benchmark"
    (tmp_path / "bad.json").write_text('{"cases": [{"backend": 1}]}')
    code, out, err = cli_main("bench", "matrix", str(tmp_path / "bad.json"))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(
        f"stackcheck: error: {tmp_path / 'bad.json'}: cases[0].backend: expected `str`, got `int`"
    )


def test_cli_matrix_to_an_unwritable_output_is_one_line(cli_main, tmp_path):
    path = tmp_path / "bench.json"
    path.write_bytes(msgspec.json.encode(RUN))
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-dir.md").mkdir()
    for out_path, why in (
        (tmp_path / "a-file" / "m.md", f"{tmp_path / 'a-file'} is a file, not a directory"),
        (tmp_path / "a-dir.md", "Is a directory"),
    ):
        code, out, err = cli_main("bench", "matrix", str(path), "--format", "markdown", "-o", str(out_path))
        assert (code, out) == (2, "")
        assert err == f"stackcheck: error: {out_path}: cannot write the matrix: {why}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-dir.md", "a-file", "bench.json"]
    assert list((tmp_path / "a-dir.md").iterdir()) == []


def test_run_files_over_a_directory_are_one_line(tmp_path):
    from stackcheck.bench.suite import write_outputs
    from stackcheck.errors import InputError

    (tmp_path / "matrix.txt").mkdir()
    with pytest.raises(InputError) as err:
        write_outputs(RUN, tmp_path)
    assert str(err.value) == f"{tmp_path / 'matrix.txt'}: cannot write the run: Is a directory"


def test_a_json_object_that_is_no_run_is_refused(cli_main, tmp_path):
    good = tmp_path / "bench.json"
    good.write_bytes(msgspec.json.encode(RUN))
    for doc, missing in (({}, "kind, cases"), ({"kind": "stackcheck-bench"}, "cases")):
        bad = tmp_path / "other.json"
        bad.write_text(json.dumps(doc))
        expected = (
            f"stackcheck: error: {bad}: no {missing}: expected a bench.json (bench run -o) "
            "or a pytest-benchmark JSON\n"
        )
        assert cli_main("bench", "matrix", str(bad)) == (2, "", expected)
        assert cli_main("bench", "compare", str(good), str(bad)) == (2, "", expected)


def test_a_run_read_from_a_file_is_redacted(tmp_path):
    """A token in a case's reason (exception text can quote one) never reaches the matrix."""
    token = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
    doc = msgspec.to_builtins(RUN)
    doc["cases"][0]["reason"] = f"401 for https://huggingface.co with token {token}"
    path = tmp_path / "bench.json"
    path.write_bytes(msgspec.json.encode(doc))
    run = load_run(path)
    shown = text(run) + markdown(run) + msgspec.json.encode(run).decode()
    assert token not in shown and "<redacted>" in run.cases[0].reason
