"""The compatibility matrix: backend × shape → ok (time) / wrong / skipped (why) / error.

One table per operation (attention, gemm, block), rows grouped by backend group, a numbered
note under the table for each distinct reason. Text, Markdown and JSON (the run document
itself), and pytest-benchmark's JSON both ways: the timed cases become its ``benchmarks``
(``stats.data`` holds every repetition), the cases it has no place for (skipped, wrong,
error) and the environment travel under a ``stackcheck`` key its readers ignore.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from stackcheck.bench.run import BENCH_SCHEMA_VERSION, BenchRun, CaseResult
from stackcheck.bench.timing import summary
from stackcheck.errors import InputError

__all__ = ["from_pytest_benchmark", "load_run", "markdown", "text", "to_pytest_benchmark"]

PYTEST_BENCHMARK_VERSION = "5.3.1"  # the format written (the one its 4.x and 5.x readers load)


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _cell(case: CaseResult, notes: dict[str, int]) -> str:
    if case.status == "ok":  # spread: half the interquartile range relative to the median (robust)
        median, iqr = case.stats.get("median"), case.stats.get("iqr")
        spread = f" ±{iqr / 2 / median:.0%}" if median and iqr is not None else ""
        return f"ok {_time(case.median_s)}{spread}"
    n = notes.setdefault(f"{case.status}: {case.reason}", len(notes) + 1)
    return f"{'WRONG' if case.status == 'wrong' else case.status} [{n}]"


def tables(run: BenchRun) -> list[tuple[str, list[str], list[list[str]], dict[str, int]]]:
    """(op, header, rows, notes) per operation, rows in run order (grouped by backend)."""
    out = []
    for op in dict.fromkeys(c.op for c in run.cases):
        cases = [c for c in run.cases if c.op == op]
        shapes = list(dict.fromkeys(c.shape for c in cases))
        notes: dict[str, int] = {}
        rows = []
        for backend in dict.fromkeys(c.backend for c in cases):
            by_shape = {c.shape: c for c in cases if c.backend == backend}
            group = next(c.group for c in cases if c.backend == backend)
            rows.append(
                [group, backend] + [_cell(by_shape[s], notes) if s in by_shape else "" for s in shapes]
            )
        out.append((op, ["group", "backend", *shapes], rows, notes))
    return out


def text(run: BenchRun) -> str:
    lines = [f"bench on {_device(run)}"]
    for op, header, rows, notes in tables(run):
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines += ["", f"{op}:"]
        for row in [header, *rows]:
            lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        lines += [f"  [{n}] {reason}" for reason, n in notes.items()]
    counts = {s: sum(c.status == s for c in run.cases) for s in ("ok", "wrong", "skipped", "error")}
    lines += ["", ", ".join(f"{n} {s}" for s, n in counts.items())]
    return "\n".join(lines) + "\n"


def markdown(run: BenchRun) -> str:
    lines = [f"# Backend matrix — {_device(run)}"]
    for op, header, rows, notes in tables(run):
        lines += ["", f"## {op}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
        if notes:
            lines.append("")
            lines += [f"{n}. {_md(reason)}" for reason, n in notes.items()]
    return "\n".join(lines) + "\n"


def _md(cell: str) -> str:
    return cell.replace("|", "\\|")


def _device(run: BenchRun) -> str:
    d = run.device
    name = d.get("name") or d.get("kind", "?")
    parts: tuple[str, ...] = (d.get("arch", ""), f"torch {d['torch']}" if d.get("torch") else "")
    parts += (f"{d['threads']} threads",) if d.get("threads") else ()
    extra = ", ".join(x for x in parts if x)
    return f"{d.get('kind', '?')} {name}" + (f" ({extra})" if extra else "")


# ----- pytest-benchmark JSON -------------------------------------------------------------
def to_pytest_benchmark(run: BenchRun) -> dict:
    """The run as pytest-benchmark's ``--benchmark-json`` document."""
    import platform

    benchmarks = []
    for c in run.cases:
        if c.status != "ok" or not c.times_s:
            continue
        s = summary(c.times_s)
        benchmarks.append(
            {
                "group": c.group,
                "name": f"{c.backend}[{c.shape}]",
                "fullname": f"stackcheck-bench::{c.backend}[{c.shape}]",
                "params": {"backend": c.backend, "shape": c.shape},
                "param": c.shape,
                "extra_info": _extra(c),
                "options": {
                    "disable_gc": False,
                    "timer": "cuda-events" if c.timer == "cuda-events" else "perf_counter",
                    "min_rounds": len(c.times_s),
                    "max_time": 0.0,
                    "min_time": 0.0,
                    "warmup": c.warmup > 0,
                },
                "stats": {
                    "min": s["min"],
                    "max": s["max"],
                    "mean": s["mean"],
                    "stddev": s["stdev"],
                    "rounds": len(c.times_s),
                    "median": s["median"],
                    "iqr": s["iqr"],
                    "q1": s["q1"],
                    "q3": s["q3"],
                    **_outliers(c.times_s, s),
                    "ops": 1 / s["mean"] if s["mean"] else 0.0,
                    "total": sum(c.times_s),
                    "data": list(c.times_s),
                    "iterations": 1,
                },
            }
        )
    env = run.environment
    return {
        "machine_info": {
            "node": "",
            "processor": run.device.get("name", ""),
            "machine": platform.machine(),
            "python_compiler": "",
            "python_implementation": platform.python_implementation(),
            "python_implementation_version": env.get("python", ""),
            "python_version": env.get("python", ""),
            "python_build": [],
            "release": "",
            "system": platform.system(),
            "cpu": {},
        },
        "commit_info": {
            "id": "",
            "time": None,
            "author_time": None,
            "dirty": False,
            "project": "",
            "branch": "",
        },
        "benchmarks": benchmarks,
        "datetime": run.created_at,
        "version": PYTEST_BENCHMARK_VERSION,
        "stackcheck": {
            "schema_version": BENCH_SCHEMA_VERSION,
            "device": run.device,
            "environment": run.environment,
            "snapshot_digest": run.snapshot_digest,
            "not_timed": [msgspec.to_builtins(c) for c in run.cases if c.status != "ok" or not c.times_s],
        },
    }


def _extra(c: CaseResult) -> dict:
    keys = ("op", "dtype", "geometry", "identity", "flops", "tflops", "peak_fraction", "max_error")
    return {k: getattr(c, k) for k in (*keys, "error_bound", "spec", "seed")}


def _outliers(times: list[float], s: dict[str, float]) -> dict:
    lo, hi = s["q1"] - 1.5 * s["iqr"], s["q3"] + 1.5 * s["iqr"]
    iqr_out = sum(t < lo or t > hi for t in times)
    sd_out = sum(abs(t - s["mean"]) > s["stdev"] for t in times)
    inside = [t for t in times if lo <= t <= hi] or times
    return {
        "iqr_outliers": iqr_out,
        "stddev_outliers": sd_out,
        "outliers": f"{sd_out};{iqr_out}",
        "ld15iqr": min(inside),
        "hd15iqr": max(inside),
    }


class _PBStats(msgspec.Struct):
    median: float = 0.0
    data: list[float] = []


class _PBBench(msgspec.Struct):
    name: str
    stats: _PBStats
    group: str | None = None
    fullname: str = ""
    param: str | None = None
    params: dict[str, Any] | None = None
    extra_info: dict[str, Any] = {}
    options: dict[str, Any] = {}


class _PBDoc(msgspec.Struct):
    benchmarks: list[_PBBench]
    datetime: str = ""
    machine_info: dict[str, Any] = {}
    stackcheck: dict[str, Any] = {}


def from_pytest_benchmark(data: bytes, where: str) -> BenchRun:
    """A pytest-benchmark JSON document (``--benchmark-json``; ``--benchmark-save-data`` keeps
    the repetitions a statistical comparison needs) as a run."""
    from stackcheck.fileio import decode_json

    doc = decode_json(data, _PBDoc, where, "pytest-benchmark JSON")
    cases = []
    for b in doc.benchmarks:
        params = b.params or {}
        backend = str(params.get("backend") or b.name.partition("[")[0])
        shape = str(params.get("shape") or b.param or b.name.partition("[")[2].rstrip("]"))
        extra = b.extra_info
        cases.append(
            CaseResult(
                backend=backend,
                group=b.group or "",
                op=str(extra.get("op", "")),
                shape=shape,
                geometry=str(extra.get("geometry", "")),
                dtype=str(extra.get("dtype", "")),
                identity=str(extra.get("identity", "torch")),
                status="ok",
                times_s=list(b.stats.data),
                stats=summary(b.stats.data) if b.stats.data else {"median": b.stats.median},
                warmup=1 if b.options.get("warmup") else 0,
                timer=str(b.options.get("timer", "")),
                flops=float(extra.get("flops") or 0.0),
                tflops=extra.get("tflops"),
                peak_fraction=extra.get("peak_fraction"),
                max_error=extra.get("max_error"),
                error_bound=extra.get("error_bound"),
                spec=extra.get("spec") or {},
                seed=int(extra.get("seed") or 0),
            )
        )
    sc = doc.stackcheck
    try:
        cases += [msgspec.convert(c, CaseResult) for c in sc.get("not_timed", [])]
    except msgspec.ValidationError as exc:
        raise InputError(f"{where}: stackcheck.not_timed: {exc}") from None
    device = sc.get("device") or {"kind": "?", "name": str(doc.machine_info.get("processor", ""))}
    return BenchRun(
        created_at=doc.datetime,
        device={str(k): str(v) for k, v in device.items()},
        environment={str(k): str(v) for k, v in (sc.get("environment") or {}).items()},
        snapshot_digest=str(sc.get("snapshot_digest", "")),
        source="pytest-benchmark",
        cases=cases,
    )


def load_run(path: str | os.PathLike) -> BenchRun:
    """A run from ``bench.json`` (``bench run -o DIR`` wrote it; a directory means its
    ``bench.json``) or from a pytest-benchmark JSON file."""
    from pathlib import Path

    from stackcheck.fileio import decode_json, read_bytes, source_name

    p = Path(path)
    if str(path) != "-" and p.is_dir():
        p = p / "bench.json"
    data = read_bytes(p if str(path) != "-" else path, "bench run (bench.json or pytest-benchmark JSON)")
    where = source_name(p if str(path) != "-" else path)
    probe = decode_json(data, dict, where, "bench run")
    from stackcheck.redaction import redact_value

    if "benchmarks" in probe and "cases" not in probe:
        return redact_value(from_pytest_benchmark(data, where))  # a file from anywhere: printed redacted
    run = decode_json(data, BenchRun, where, "bench run")  # a wrong type is named first
    missing = [k for k in ("kind", "cases") if k not in probe]
    if missing:  # ``{}`` is no run: compared or printed as one, it would pass with no case
        raise InputError(
            f"{where}: no {', '.join(missing)}: expected a bench.json (bench run -o) "
            "or a pytest-benchmark JSON"
        )
    return redact_value(run)
