"""ACC008, the optional acceptance step: a tiny model exported with torch.onnx.export, checked
with onnx.checker and run in onnxruntime against torch. It runs only where torch, onnx and
onnxruntime are installed, so the standard stack keeps its seven steps."""

from __future__ import annotations

import json
import sys

import msgspec

from stackcheck.accept.steps import ChildRun, Needs, judge_onnx, optional_steps, run_child
from stackcheck.models.snapshot import Distribution
from tests.factories import recorded


def needs() -> Needs:
    return Needs(None, lambda *a: "python -m pip install " + " ".join(a))


def test_the_step_runs_only_where_its_packages_are():
    snap = recorded("h100-single")  # torch, no onnx
    assert optional_steps(snap) == []
    extra = [Distribution(name=n, version="1.0", location="/x") for n in ("onnx", "onnxruntime-gpu")]
    with_onnx = msgspec.structs.replace(
        snap,
        packages=msgspec.structs.replace(snap.packages, distributions=snap.packages.distributions + extra),
    )
    assert optional_steps(with_onnx) == ["ACC008"]


def test_export_check_and_run_in_this_interpreter(tmp_path):
    run_ = run_child(sys.executable, "_child_onnx.py", [str(tmp_path)], timeout=300, workdir=str(tmp_path))
    result = judge_onnx(run_, needs())
    assert result.verdict == "ok", run_.log
    assert result.observed.startswith("exported at opset 17, checked, run in onnxruntime: max |diff| ")
    assert float(result.evidence["max_abs_diff"]) <= 1e-4
    assert "CPUExecutionProvider" in result.evidence["providers"].split()


def facts(**kw) -> dict:
    base = {
        "max_abs_diff": 0.0,
        "opset": 17,
        "bytes": 900,
        "torch": "2.13.0",
        "onnx": "1.23.2",
        "onnxruntime": "1.32.0",
        "providers": ["CPUExecutionProvider"],
    }
    return {**base, **kw}


def test_verdicts_from_facts():
    bad = judge_onnx(ChildRun(facts(max_abs_diff=0.5), None, "", 1.0), needs())
    assert bad.verdict == "blocked"
    assert bad.observed == (
        "onnxruntime's output differs from torch's by 0.5 (torch 2.13.0, onnx 1.23.2, onnxruntime 1.32.0)"
    )
    assert bad.fix == "python -m pip install --force-reinstall onnx onnxruntime"
    missing = judge_onnx(ChildRun({"missing": "onnxruntime"}, None, "", 1.0), needs())
    assert (missing.verdict, missing.observed) == ("blocked", "onnxruntime is not installed")
    broke = judge_onnx(ChildRun(None, "exit 1: RuntimeError: boom", "", 1.0), needs())
    assert (broke.verdict, broke.observed) == ("blocked", "the step failed: exit 1: RuntimeError: boom")
    assert json.dumps(bad.evidence)  # plain strings
