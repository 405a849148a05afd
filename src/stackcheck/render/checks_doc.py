"""The check reference (docs/checks.md), generated from the check registry so it never drifts."""

from __future__ import annotations

_GROUPS = (
    ("PY", "Python"),
    ("PKG", "Requirements, constraints, forbidden packages"),
    ("MOD", "Modules"),
    ("GPU", "GPUs"),
    ("CUDA", "CUDA build and driver"),
    ("PLAT", "Platform and hosting"),
    ("ISO", "Isolation (doctor)"),
    ("DEP", "Distribution graph (doctor)"),
    ("KERN", "Notebook kernels"),
    ("KB", "Knowledge rules"),
    ("HYG", "Repository hygiene"),
    ("ACC", "Acceptance steps"),
)


def _group(check_id: str) -> str:
    for prefix, title in _GROUPS:
        if check_id.startswith(prefix) and check_id[len(prefix) :].isdigit():
            return title
    return "Other"


def checks_markdown(checks) -> str:
    """Every check ID with its title, where it runs, and the full explanation."""
    out = [
        "# Check reference",
        "",
        "Generated from the check registry by `stackcheck explain --markdown`; do not edit by hand.",
        "`stackcheck explain ID` prints one entry.",
        "",
    ]
    order = [title for _, title in _GROUPS] + ["Other"]
    by_group: dict[str, list] = {}
    for spec in checks.values():
        by_group.setdefault(_group(spec.id), []).append(spec)
    for group in order:
        specs = by_group.get(group)
        if not specs:
            continue
        out += [f"## {group}", ""]
        for spec in specs:
            where = ", ".join(sorted(spec.commands)) or "triage"
            out += [
                f"### {spec.id}: {spec.title}",
                "",
                f"*Runs in:* {where}" + (" (with a profile)" if spec.needs_profile else ""),
                "",
            ]
            out += [spec.explain, ""]
            if spec.sources:
                out += ["Sources: " + "; ".join(spec.sources), ""]
    return "\n".join(out).rstrip() + "\n"
