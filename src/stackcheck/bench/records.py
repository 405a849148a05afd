"""Each case of a run as a ResultRecord in the evidence ledger.

A case is a result like any other: its environment snapshot, the preflight verdict of a
profile, the backend identity (``torch`` / ``flash-attn`` / ``xformers``, with the path, op and
dtype as arguments, so each path is its own candidate) and the shape as a ``kernel`` workload
(the manifest is the sha256 of the case's definition: shape, dtype, seed). Its metrics carry
every repetition, and the run's ``bench.json`` is the raw log, so an ok case proves
``measured`` on the ladder; a wrong or broken case is recorded as a failed run (smoke).
Topics are ``bench/<op>/<shape>``, so the ledger's candidate logic compares backends per shape.
Skipped cases measured nothing and are not recorded (the matrix keeps their reasons).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from stackcheck.bench.run import CaseResult
from stackcheck.errors import Refused
from stackcheck.results.identity import canonical, sha256

__all__ = ["Filed", "draft", "store"]


@dataclass
class Filed:
    case: CaseResult
    id: str = ""  # record id ("" when not recorded)
    evidence: str = ""
    note: str = ""  # why not recorded, or why not at measured


def draft(case: CaseResult, *, run_label: str, profile: str, raw_log: str) -> dict:
    """The result draft of one case (``results record`` completes it)."""
    manifest = sha256(canonical({"spec": case.spec, "dtype": case.dtype, "seed": case.seed}))
    out: dict = {
        "topic": f"bench/{case.op}/{case.shape}",
        "run_label": run_label,
        "profile": profile,
        "model": {"id": f"stackcheck-bench/{case.op}", "dtype": case.dtype},
        "backend": {
            "name": case.identity,
            "args": {"path": case.backend, "group": case.group, "op": case.op, "dtype": case.dtype},
        },
        "workload": {
            "kind": "kernel",
            "manifest_sha256": manifest.partition(":")[2],
            "samples": max(len(case.times_s), 1),
            "seed": case.seed,
        },
        "artifacts": [{"path": raw_log, "kind": "raw-log"}],
    }
    error = (
        f"max error {case.max_error:.3g} (bound {case.error_bound:.3g})" if case.max_error is not None else ""
    )
    if case.status == "ok":
        ms = [t * 1e3 for t in case.times_s]
        metrics = {"time_ms": {"value": case.stats["median"] * 1e3, "unit": "ms", "repetitions": ms}}
        if case.flops:
            per_rep = [case.flops / t / 1e12 for t in case.times_s if t > 0]
            metrics["tflops"] = {"value": case.tflops or 0.0, "unit": "TFLOP/s", "repetitions": per_rep}
        out.update(status="ok", evidence="measured", metrics=metrics, notes=f"{case.geometry}; {error}")
    else:
        out.update(status="failed", failure_reason=f"{case.status}: {case.reason}", evidence="smoke")
        out["notes"] = case.geometry
    return out


def store(
    cases: list[CaseResult],
    *,
    snapshot,
    ledger,
    profile: str,
    run_label: str,
    raw_log: str | os.PathLike,
    catalog=None,
    registry: str | None = None,
    cwd: str | os.PathLike | None = None,
) -> list[Filed]:
    """Record every case that ran; an ok case at ``measured`` when the ladder proves it, else
    at smoke with what it lacks (a failing profile, say)."""
    from stackcheck.results import record

    filed: list[Filed] = []
    for case in cases:
        if case.status == "skipped":
            filed.append(Filed(case, note=f"skipped: {case.reason}"))
            continue
        d = draft(case, run_label=run_label, profile=profile, raw_log=str(raw_log))
        note = ""
        try:
            done = record(d, snapshot=snapshot, ledger=ledger, catalog=catalog, registry=registry, cwd=cwd)
        except Refused as exc:
            if d["evidence"] == "smoke":
                raise
            note = " ".join(line.strip().removeprefix("- ") for line in str(exc).splitlines() if line.strip())
            d["evidence"] = "smoke"
            done = record(d, snapshot=snapshot, ledger=ledger, catalog=catalog, registry=registry, cwd=cwd)
        filed.append(Filed(case, id=done.stored.id, evidence=done.stored.evidence, note=note))
    return filed
