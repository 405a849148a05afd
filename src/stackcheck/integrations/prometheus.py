"""``stackcheck preflight --metrics-file PATH``: the verdicts and key facts in the Prometheus
text exposition format, for node-exporter's textfile collector (``--collector.textfile.directory``;
it reads ``*.prom`` files, so the file is written atomically: a scrape never sees half of it).

Metrics (one set per profile):

- ``stackcheck_preflight_verdict{profile, verdict}``: 1 for the report's verdict, 0 for the others
- ``stackcheck_preflight_checks{profile, verdict}``: how many checks had each verdict
- ``stackcheck_check_severity{profile, check}``: per check ID its worst verdict, 0 ok / skipped,
  1 warning, 2 blocked, 3 error
- ``stackcheck_environment_info{python, torch, torch_cuda, driver, driver_cuda, hardware}``: 1
- ``stackcheck_gpus``: visible GPUs; ``stackcheck_preflight_timestamp_seconds``: when it ran
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from stackcheck.errors import InputError
from stackcheck.models.finding import VERDICTS, Report, severity
from stackcheck.models.snapshot import Snapshot
from stackcheck.redaction import redact_text

__all__ = ["metrics_text", "write_metrics_file"]

_INFO_LABELS = {
    "python": "python",
    "torch": "torch",
    "torch_cuda": "torch.cuda",
    "driver": "driver",
    "driver_cuda": "driver.cuda",
    "hardware": "hardware",
}


def _label(value: str) -> str:
    """A label value as the text format writes it: backslash, double quote and newline escaped."""
    return redact_text(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    """A sample value exactly (``%g`` would print a Unix time as 1.79613e+09)."""
    return str(int(value)) if value.is_integer() else repr(value)


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{_label(v)}"' for k, v in labels.items()) + "}"


def metrics_text(report: Report, snapshot: Snapshot | None = None, *, now: float | None = None) -> str:
    """The exposition text of one preflight report (and the key facts of its snapshot)."""
    profile = report.profile or ""
    lines: list[str] = []

    def family(name: str, kind: str, help_text: str, samples: list[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(f"{name}{labels} {_number(value)}" for labels, value in samples)

    states = [v for v in VERDICTS if v != "skipped"]
    family(
        "stackcheck_preflight_verdict",
        "gauge",
        "1 for the preflight verdict of the profile, 0 for the other verdicts.",
        [(_labels(profile=profile, verdict=v), float(report.verdict == v)) for v in states],
    )
    counts = {v: 0 for v in VERDICTS}
    worst: dict[str, int] = {}
    for c in report.checks:
        counts[c.verdict] += 1
        worst[c.id] = max(worst.get(c.id, 0), severity(c.verdict))
    family(
        "stackcheck_preflight_checks",
        "gauge",
        "Checks of the preflight by verdict.",
        [(_labels(profile=profile, verdict=v), float(n)) for v, n in counts.items()],
    )
    family(
        "stackcheck_check_severity",
        "gauge",
        "Worst verdict of each check: 0 ok or skipped, 1 warning, 2 blocked, 3 error.",
        [(_labels(profile=profile, check=cid), float(s)) for cid, s in sorted(worst.items())],
    )
    if snapshot is not None:
        from stackcheck.integrations.facts import key_versions

        facts = key_versions(snapshot)
        info = {label: facts.get(key, "") for label, key in _INFO_LABELS.items()}
        family(
            "stackcheck_environment_info",
            "gauge",
            "Key versions of the environment.",
            [(_labels(**info), 1.0)],
        )
        gpus = float(len(snapshot.visible_gpus()))
        family("stackcheck_gpus", "gauge", "GPUs visible to the checked environment.", [("", gpus)])
    stamp = time.time() if now is None else now
    family(
        "stackcheck_preflight_timestamp_seconds",
        "gauge",
        "When the preflight ran (Unix time).",
        [(_labels(profile=profile), float(int(stamp)))],
    )
    return "\n".join(lines) + "\n"


def write_metrics_file(
    path: str | os.PathLike, report: Report, snapshot: Snapshot | None = None, *, now: float | None = None
) -> Path:
    """Write :func:`metrics_text` to ``path`` (a ``*.prom`` file) atomically."""
    from stackcheck.fileio import atomic_write, cannot_write, require_creatable_dir

    target = Path(path)
    if target.suffix != ".prom":
        raise InputError(
            f"{target}: --metrics-file: expected a file name ending in .prom "
            "(node-exporter's textfile collector reads only *.prom)"
        )
    require_creatable_dir(target.parent, "the directory of --metrics-file")
    try:
        atomic_write(target, metrics_text(report, snapshot, now=now), shared=True)  # node-exporter reads it
    except OSError as exc:
        raise cannot_write(target, "the metrics file", exc) from None
    return target
