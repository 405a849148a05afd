"""How good are rules on a labelled set? (``stackcheck mine verify RULES --labelled DIR``)

``DIR/labels.jsonl`` holds one object a line: ``{"log": PATH, "test": ID, "group": G}`` for a
failed test whose cause is ``G``, ``{"log": PATH, "group": G}`` for a whole failed log, and
``{"log": PATH, "outcome": "passed"}`` for a passing job (paths relative to ``DIR``). Each
log is scanned as ``mine ingest`` scans it; each labelled failure is matched against the
rules' signatures (RE2, the triage index; the most specific wins); passing logs go through
``triage`` itself, as the next job's log would.

- coverage: labelled failures some rule matches;
- precision: matched failures whose rule stands for their group (each rule stands for the
  group most of its matches belong to);
- false positives: passing logs in which triage finds a rule;
- GA, FGA and ARI of the grouping the rules induce (an unmatched failure is a group of its own).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import msgspec

from stackcheck.errors import InputError
from stackcheck.mining.inputs import JobSource, LogFile
from stackcheck.mining.metrics import adjusted_rand_index, f1_group_accuracy, grouping_accuracy
from stackcheck.mining.signature import normalize_test
from stackcheck.models.rule import Rule

__all__ = ["Verification", "verify"]

LABELS = "labels.jsonl"


class Verification(msgspec.Struct, kw_only=True):
    rules: int
    failures: int  # labelled failures
    matched: int
    coverage: float
    precision: float
    passing_logs: int
    false_positive_logs: int
    false_positive_rate: float
    groups: int  # true groups
    grouping_accuracy: float
    fga: float
    ari: float
    per_rule: dict[str, dict[str, int]] = {}  # rule ID → true group → failures it matched
    missed: list[str] = []  # "log: test (group)" of unmatched failures, the first few


def _labels(directory: Path) -> list[tuple[int, dict]]:
    path = directory / LABELS
    if not path.is_file():
        raise InputError(f"{directory}: no {LABELS} (one JSON object a line: log, test, group | outcome)")
    out = []
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                raise InputError(f"{path}: line {n}: not JSON ({type(exc).__name__}: {exc})") from None
            if not isinstance(obj, dict) or not isinstance(obj.get("log"), str):
                raise InputError(f"{path}: line {n}: expected an object with a 'log' path")
            if not isinstance(obj.get("group"), str) and obj.get("outcome") != "passed":
                raise InputError(f'{path}: line {n}: expected a \'group\' (the cause) or "outcome": "passed"')
            if not (directory / obj["log"]).is_file():
                raise InputError(f"{path}: line {n}: log: no such file {directory / obj['log']}")
            out.append((n, obj))
    return out


def verify(rules: list[Rule], directory: str | Path) -> Verification:
    from stackcheck.mining.ingest import scan_job
    from stackcheck.triage import triage_stream
    from stackcheck.triage.signatures import SignatureIndex

    directory = Path(directory)
    labels = _labels(directory)
    index = SignatureIndex(rules)
    scans: dict[str, dict[str, list]] = {}

    def failures_of(log: str):
        if log not in scans:
            path = directory / log
            opener = lambda: open(path, "rb")  # noqa: E731, SIM115 - the scanner closes it
            src = JobSource(run="verify", job=log, logs=[LogFile(str(path), opener)])
            record = scan_job(src)
            by_test: dict[str, list] = {}
            for f in record.failures:
                by_test.setdefault(normalize_test(f.test), []).append(f)
            scans[log] = by_test
        return scans[log]

    def best_rule(failures) -> str | None:
        hits = [h for f in failures for h in index.search(f.example)]
        return (
            max(hits, key=lambda h: (h.signature.specificity, h.signature.rule.id)).signature.rule.id
            if hits
            else None
        )

    truth: list[str] = []
    predicted: list[str] = []
    missed: list[str] = []
    per_rule: dict[str, Counter] = {}
    passing = fp_logs = 0
    for n, obj in labels:
        if obj.get("outcome") == "passed" and "group" not in obj:
            passing += 1
            with open(directory / obj["log"], "rb") as fh:
                found = triage_stream(fh, source=obj["log"], rules=rules)
            fp_logs += bool(found.matches)
            continue
        by_test = failures_of(obj["log"])
        wanted = (
            by_test.get(normalize_test(obj["test"]), [])
            if obj.get("test")
            else [f for fs in by_test.values() for f in fs]
        )
        rule = best_rule(wanted)
        truth.append(obj["group"])
        predicted.append(rule if rule is not None else f"unmatched:{n}")
        if rule is None:
            if len(missed) < 20:
                missed.append(f"{obj['log']}: {obj.get('test', '(whole log)')} ({obj['group']})")
        else:
            per_rule.setdefault(rule, Counter())[obj["group"]] += 1
    matched = sum(1 for p in predicted if not p.startswith("unmatched:"))
    stands_for = {rule: c.most_common(1)[0][0] for rule, c in per_rule.items()}
    right = sum(1 for p, t in zip(predicted, truth) if stands_for.get(p) == t)
    total = len(truth)
    return Verification(
        rules=len(rules),
        failures=total,
        matched=matched,
        coverage=round(matched / total, 4) if total else 0.0,
        precision=round(right / matched, 4) if matched else 0.0,
        passing_logs=passing,
        false_positive_logs=fp_logs,
        false_positive_rate=round(fp_logs / passing, 4) if passing else 0.0,
        groups=len(set(truth)),
        grouping_accuracy=round(grouping_accuracy(predicted, truth), 4),
        fga=round(f1_group_accuracy(predicted, truth), 4),
        ari=round(adjusted_rand_index(predicted, truth), 4),
        per_rule={rule: dict(sorted(c.items())) for rule, c in sorted(per_rule.items())},
        missed=missed,
    )
