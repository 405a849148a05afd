"""The library calls (``stackcheck.preflight``, ``stackcheck.snapshot``, ``stackcheck.triage``):
each builds the typed model its command prints as JSON. They sit on the top layer, beside the
CLI, and reach :mod:`stackcheck` through its lazy ``__getattr__``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackcheck.models.finding import Report
    from stackcheck.models.snapshot import Snapshot
    from stackcheck.sources import FactSource
    from stackcheck.triage.model import Diagnosis

__all__ = ["preflight", "snapshot", "triage"]


def preflight(
    profile: str = "TRAIN-CPU",
    *,
    source: FactSource | None = None,
    registry: str | None = None,
    skip: Iterable[str] = (),
    deep: bool = False,
) -> Report:
    """The preflight Report of ``profile`` (an ID of the registry ``registry``, default the one
    found upwards or the built-in catalog) over ``source`` (default: the live environment), as
    ``stackcheck preflight -p PROFILE --json`` prints it. ``skip``: check IDs or prefixes."""
    from stackcheck.catalog import load_catalog
    from stackcheck.checks.skip import split_ids
    from stackcheck.environment import obtain
    from stackcheck.judge import judge
    from stackcheck.probe import JUDGED

    catalog = load_catalog(registry)
    chosen = catalog.get(profile)
    ids = split_ids(skip)  # before the probe: a typo costs no time
    facts = obtain(source, deep=deep, sections=JUDGED, modules=tuple(chosen.required_modules))
    report = judge(facts, command="preflight", profile=chosen, skip=ids, deep=deep)
    if source is not None and source.kind == "kernel":
        report.environment["kernel"] = source.value
    report.environment["registry"] = catalog.source
    return report


def snapshot(source: FactSource | None = None, *, deep: bool = False) -> Snapshot:
    """The redacted Snapshot of ``source`` (default: the live environment), as
    ``stackcheck snapshot --json`` prints it; ``deep`` also imports torch in a child process."""
    from stackcheck.environment import obtain

    return obtain(source, deep=deep)


def triage(text: str, *, source: FactSource | None = None, **kwargs) -> Diagnosis:
    """The Diagnosis of an error text (as ``stackcheck triage --json`` prints it), judged
    against ``source`` (default: the live environment, probed only when something matched);
    other keywords as :func:`stackcheck.triage.triage_text`."""
    from stackcheck.environment import obtain
    from stackcheck.triage import triage_text

    if source is not None and source.kind != "live":
        kwargs.setdefault("snapshot", obtain(source))
        kwargs.setdefault("environment_source", f"{source.kind} {source.value}")
    else:
        kwargs.setdefault("live_environment", lambda: obtain(sections=_LIVE_SECTIONS))
    return triage_text(text, **kwargs)


_LIVE_SECTIONS = ("platform", "accelerators", "torch", "env")  # what the causes are judged on
