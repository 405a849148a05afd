"""Judge many: run the registered checks of a command over one snapshot into a Report
(built by :func:`stackcheck.checks.report.build_report`, like every other report)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from stackcheck.checks.context import Context
from stackcheck.checks.registry import run_checks
from stackcheck.checks.report import CAUSES, build_report, combine_fixes, mark_consequences
from stackcheck.models.finding import Report
from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Snapshot

if TYPE_CHECKING:
    from stackcheck.knowledge.base import Knowledge

__all__ = ["CAUSES", "build_report", "combine_fixes", "judge", "mark_consequences"]


def judge(
    snapshot: Snapshot,
    *,
    command: str,
    profile: Profile | None = None,
    skip: Iterable[str] = (),
    deep: bool = False,
    knowledge: Knowledge | None = None,
) -> Report:
    """Run the checks of ``command`` over ``snapshot`` (``knowledge``: the tables and rules to
    judge with; the loaded ones when None)."""
    ctx = Context(snapshot=snapshot, profile=profile, knowledge_base=knowledge, deep=deep)
    return build_report(command, run_checks(ctx, command, skip), profile=profile, snapshot=snapshot)
