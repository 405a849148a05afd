"""``stackcheck doctor``: isolation and integrity faults, no profile needed."""

from __future__ import annotations

import click

from stackcheck.cli.common import finish, judge_environment, judging_options, one_output
from stackcheck.cli.output import show_report


@click.command()
@judging_options
def doctor(source, skip, as_json, as_markdown, verbose, strict):
    """Find isolation and integrity faults of an environment (no profile needed).

    \b
    Looks for: broken requirements (the same set `pip check` reports, plus extras),
    Requires-Python and wheel tags that do not fit, duplicate copies of a project on
    sys.path, two projects owning one import name, PYTHONPATH / .pth / user-site pollution,
    an active VIRTUAL_ENV / pip that belongs to another interpreter, Jupyter kernels that run
    another Python, half-finished installs, torchvision / CUDA wheels of another torch build.
    `stackcheck explain ID` tells what a check looks at.

    \b
    Examples:
      stackcheck doctor
      stackcheck doctor --python .venv/bin/python
      stackcheck doctor --kernel my-env --json
      stackcheck doctor --snapshot colleague.json --strict
    """
    one_output(json=as_json, markdown=as_markdown)
    report = judge_environment("doctor", source=source, skip=skip)
    finish(show_report(report, as_json=as_json, as_markdown=as_markdown, verbose=verbose, strict=strict))
