"""Judge many: run the registered checks of a command over one snapshot into a Report."""

from __future__ import annotations

from collections.abc import Iterable

from stackcheck.checks.context import Context
from stackcheck.checks.registry import run_checks
from stackcheck.environment import snapshot_digest
from stackcheck.models.finding import Report, worst
from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Snapshot


def judge(
    snapshot: Snapshot,
    *,
    command: str,
    profile: Profile | None = None,
    skip: Iterable[str] = (),
    deep: bool = False,
    options: dict | None = None,
) -> Report:
    ctx = Context(snapshot=snapshot, profile=profile, deep=deep, options=options or {})
    checks = run_checks(ctx, command, skip)
    return Report(
        kind=command,
        profile=profile.id if profile else None,
        verdict=worst(c.verdict for c in checks),
        checks=checks,
        snapshot_digest=snapshot_digest(snapshot),
        environment={
            "python": snapshot.python.executable,
            "source": snapshot.tool.command or snapshot.python.source,
            "captured_at": snapshot.tool.captured_at,
        },
    )
