"""``results diff``: why did my number change, and may these two numbers be compared at all?

Two results are comparable only when their experiment identity (model, tokenizer, template,
thinking mode, dtype, backend with its arguments and build options, workload) and their
hardware match, except the fields the user names as the variable under test. A backend name
never stands in for that identity. Environment differences (a torch upgrade, another driver)
are shown beside the verdict so a silent upgrade is never invisible.
"""

from __future__ import annotations

from typing import Any

from stackcheck.models.result_diff import Change, Diff, MetricChange, covered
from stackcheck.models.snapshot import Snapshot
from stackcheck.results.contract import ResultRecord
from stackcheck.results.identity import identity_fields, short
from stackcheck.results.ladder import relative_change

# Fields that must match for comparability (prefixes of the flattened identity) besides hardware.
MUST_MATCH = ("model.", "backend.", "workload.", "hardware")


def hardware(snapshot: Snapshot) -> str:
    """One line that names the hardware a number was measured on."""
    gpus = snapshot.visible_gpus()
    if gpus:
        names = sorted({g.name or "unknown GPU" for g in gpus})
        return f"{len(gpus)}x " + " + ".join(names)
    return f"CPU {snapshot.platform.cpu_model or snapshot.platform.machine or 'unknown'}"


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, dict) and obj:
        out: dict[str, Any] = {}
        for key, value in obj.items():
            out.update(flatten(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): obj}


def _identity(r: ResultRecord) -> dict[str, Any]:
    flat = flatten(identity_fields(r, r.profile.id))
    flat["hardware"] = hardware(r.snapshot)
    flat["run_label"] = r.run_label
    flat["evidence"] = r.evidence
    return flat


def environment(s: Snapshot) -> dict[str, Any]:
    """The environment facts that most often explain a changed number."""
    facts = {
        "python": s.python.version,
        "platform": " ".join(x for x in (s.platform.system, s.platform.machine, s.platform.distro_name) if x),
        "libc": " ".join(x for x in (s.platform.libc_family, s.platform.libc_version) if x),
        "torch": s.torch.version,
        "torch.cuda": s.torch.cuda or "",
        "driver": s.accelerators.driver_version,
        "driver.cuda": s.accelerators.cuda_driver_version,
        "cpu": s.platform.cpu_model,
    }
    for dist in s.packages.distributions:
        if not dist.shadowed:
            facts[f"package.{dist.name.lower()}"] = dist.version
    return facts


def _changes(a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
    return [
        Change(field=k, a=a.get(k), b=b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)
    ]


def diff(a: ResultRecord, b: ResultRecord, varying: list[str] = ()) -> Diff:
    varying = list(varying)
    identity = _changes(_identity(a), _identity(b))
    blocking = [c.field for c in identity if c.field.startswith(MUST_MATCH) and not covered(c.field, varying)]
    unused = [v for v in varying if not any(covered(c.field, [v]) for c in identity)]
    metrics = []
    for name in sorted(a.metrics.keys() | b.metrics.keys()):
        ma, mb = a.metrics.get(name), b.metrics.get(name)
        metrics.append(
            MetricChange(
                name=name,
                unit=(ma or mb).unit,
                a=ma.value if ma else None,
                b=mb.value if mb else None,
                relative=relative_change(ma.value, mb.value) if ma and mb else None,
                a_cv=ma.dispersion.cv if ma and ma.dispersion else None,
                b_cv=mb.dispersion.cv if mb and mb.dispersion else None,
            )
        )
    return Diff(
        a=short(a.digest),
        b=short(b.digest),
        comparable=not blocking,
        varying=varying,
        blocking=blocking,
        unused_varying=unused,
        identity=identity,
        environment=_changes(environment(a.snapshot), environment(b.snapshot)),
        metrics=metrics,
    )
