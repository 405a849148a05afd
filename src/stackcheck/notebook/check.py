"""``kernel check``: will this kernel start, and does it run the environment it claims?

Per kernel: the spec exists (KERN010), argv[0] is an absolute path (KERN001) to an existing
interpreter (KERN002) that answers and is what it claims (KERN011), ipykernel can be located
there (KERN012), the spec's PYTHONPATH entries exist (KERN013); with a profile, the kernel's
environment is judged like ``preflight --python``. Nothing heavy starts: one bounded child
per kernel that prints ``sys.executable`` / ``sys.prefix`` and locates ipykernel.
KERN001/KERN002 are the doctor checks (one title, one verdict each), judged here per kernel.
"""

from __future__ import annotations

import os

from stackcheck.checks import kernels as doctor_kernels
from stackcheck.checks.registry import declare, registered
from stackcheck.checks.report import build_report
from stackcheck.models.finding import CheckResult, Report
from stackcheck.models.profile import Profile
from stackcheck.models.snapshot import Kernelspec
from stackcheck.notebook.interpreter import InterpreterFacts, ask
from stackcheck.shellcmd import code, command

# KERN010–013 exist only here; KERN001/KERN002 are the doctor checks of the same name (one
# title, one verdict: stackcheck.checks.kernels), judged here per kernel.
_DECLARED = [
    declare(
        "KERN010",
        "Kernelspec exists",
        explain="""
The named kernelspec exists in one of Jupyter's data directories (JUPYTER_PATH, the user
data dir, sys.prefix/share/jupyter, the system dirs). Fix: `stackcheck kernel register
--name NAME` from the environment the kernel should run.""",
        command="kernel-check",
    ),
    declare(
        "KERN011",
        "Kernel interpreter is what it claims",
        explain="""
Runs the kernel's interpreter once (bounded) and compares the sys.executable / sys.prefix it
reports with the environment its path belongs to. A venv whose pyvenv.cfg was deleted, or a
wrapper script, runs another Python than the path suggests. Fix: recreate the environment,
then register the kernel again.""",
        command="kernel-check",
    ),
    declare(
        "KERN012",
        "ipykernel is importable in the kernel's interpreter",
        explain="""
Locates (never imports) ipykernel with the kernel's own interpreter. Without it the kernel
dies at start and Jupyter shows "kernel restarting" forever. Fix: install ipykernel with that
interpreter (the printed command names it).""",
        command="kernel-check",
    ),
    declare(
        "KERN013",
        "Kernel PYTHONPATH entries exist",
        explain="""
The PYTHONPATH a kernelspec sets (stackcheck registers the repository root there so notebooks
in any subfolder import the repository's tools) must point at directories that exist. A moved
repository leaves a stale entry and imports silently fall back to installed copies. Fix:
register the kernel again from the repository's new place.""",
        command="kernel-check",
    ),
]
TITLES = {spec.id: spec.title for spec in _DECLARED} | {
    i: registered(i).title for i in (doctor_kernels.BARE_PYTHON, doctor_kernels.MISSING_INTERPRETER)
}


def _result(
    check_id: str,
    verdict: str,
    kernel: str,
    observed: str = "",
    expected: str = "",
    fix: str | None = None,
    reason: str | None = None,
) -> CheckResult:
    return CheckResult(
        id=check_id,
        title=TITLES[check_id],
        verdict=verdict,
        subject=kernel,
        observed=observed,
        expected=expected,
        fix=fix,
        reason=reason,
    )


def _register_fix(name: str, python: str | None = None) -> str:
    python = python or "/path/to/env/bin/python"
    return command("stackcheck", "kernel", "register", "--name", name, "--python", python, "--force")


def _kernel_env(spec_path: str) -> dict[str, str]:
    """The ``env`` block of a kernel.json (strings only)."""
    import json

    try:
        with open(spec_path, encoding="utf-8") as fh:
            env = json.load(fh).get("env") or {}
    except (OSError, ValueError, AttributeError, RecursionError):
        return {}
    return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}


def own_env_python(spec: Kernelspec) -> str | None:
    """For ipykernel's own spec inside an environment (``<prefix>/share/jupyter/kernels/NAME``),
    that environment's interpreter: a Jupyter started from the environment substitutes it for
    the bare ``python`` (and no other Jupyter looks there by default)."""
    kernels_dir = os.path.dirname(os.path.dirname(os.path.abspath(spec.path)))
    share = os.path.dirname(kernels_dir)
    if os.path.basename(kernels_dir) != "kernels" or os.path.basename(share) != "jupyter":
        return None
    prefix = os.path.dirname(os.path.dirname(share))
    for candidate in ("bin/python", "bin/python3", "python.exe"):
        path = os.path.join(prefix, candidate)
        if os.path.isfile(path):
            return path
    return None


def judge_kernel(spec: Kernelspec, env: dict[str, str], facts: InterpreterFacts | None) -> list[CheckResult]:
    """The verdicts about one kernelspec from what was found out about it (pure)."""
    k = spec.name
    out = [_result("KERN010", "ok", k, observed=f"{spec.path} ({spec.display_name or k})")]
    if (spec.language or "python").lower() != "python":
        reason = f"not a Python kernel (language {spec.language!r})"
        return out + [
            _result(i, "skipped", k, reason=reason)
            for i in ("KERN001", "KERN002", "KERN011", "KERN012", "KERN013")
        ]
    head = spec.argv[0] if spec.argv else ""
    own = own_env_python(spec)
    if spec.bare_python and own:
        out.append(
            _result(
                "KERN001",
                "ok",
                k,
                observed=f"bare {head!r} in {own}'s own data dir: jupyter_client runs that environment's "
                "interpreter",
            )
        )
    elif spec.bare_python or not os.path.isabs(head):
        out.append(
            _result(
                "KERN001",
                "warning",
                k,
                observed=f"argv[0] is {head!r}: it runs whichever interpreter starts Jupyter"
                + (
                    f" (on this PATH: {spec.interpreter})"
                    if spec.interpreter and spec.interpreter != head
                    else ""
                ),
                expected="argv[0] an absolute interpreter path",
                fix=_register_fix(k),
            )
        )
        # jupyter_client substitutes its own interpreter for a bare python, front ends search
        # PATH: judging the one on this PATH would describe some other process's kernel
        reason = "argv[0] is not a path: the interpreter depends on what starts the kernel"
        return (
            out
            + [_result(i, "skipped", k, reason=reason) for i in ("KERN002", "KERN011", "KERN012")]
            + _paths(k, env)
        )
    else:
        out.append(_result("KERN001", "ok", k, observed=head))
    if facts is None:  # only asked when the interpreter exists
        out.append(
            _result(
                "KERN002",
                "blocked",
                k,
                observed=f"{spec.interpreter or head} does not exist: the kernel cannot start",
                expected="an existing interpreter",
                fix=f"remove it: {code(command('jupyter', 'kernelspec', 'remove', '-y', k))}, "
                f"or re-register it from an existing interpreter: {code(_register_fix(k))}",
            )
        )
        return (
            out
            + [_result(i, "skipped", k, reason="no interpreter to ask") for i in ("KERN011", "KERN012")]
            + _paths(k, env)
        )
    out.append(_result("KERN002", "ok", k, observed=facts.path))
    out.append(_identity(k, facts))
    if not facts.ran:
        out.append(_result("KERN012", "skipped", k, reason="the interpreter did not answer"))
    elif facts.ipykernel:
        out.append(_result("KERN012", "ok", k, observed=f"ipykernel found by {facts.executable}"))
    else:
        out.append(
            _result(
                "KERN012",
                "blocked",
                k,
                observed=f"ipykernel cannot be imported by {facts.path}: the kernel will not start",
                expected="ipykernel installed in the kernel's environment",
                fix=facts.pip_install_ipykernel,
            )
        )
    return out + _paths(k, env)


def _identity(k: str, facts: InterpreterFacts) -> CheckResult:
    if not facts.ran:
        return _result(
            "KERN011",
            "blocked",
            k,
            observed=f"{facts.path} did not answer: {facts.error}",
            expected="an interpreter that starts",
            fix=_register_fix(k),
        )
    real = os.path.realpath
    same_prefix = real(facts.prefix) == real(facts.expected_prefix)
    same_bin = real(os.path.dirname(facts.executable)) == real(os.path.dirname(os.path.abspath(facts.path)))
    if same_prefix and same_bin:
        return _result(
            "KERN011", "ok", k, observed=f"{facts.executable} (Python {facts.version}, prefix {facts.prefix})"
        )
    return _result(
        "KERN011",
        "warning",
        k,
        observed=f"{facts.path} runs as {facts.executable} with sys.prefix {facts.prefix}",
        expected=f"sys.prefix {facts.expected_prefix} (the environment the path belongs to)",
        fix="recreate the environment (a missing pyvenv.cfg or a wrapper script does this), "
        f"then {code(_register_fix(k))}",
    )


def _paths(k: str, env: dict[str, str]) -> list[CheckResult]:
    entries = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if not entries:
        return [_result("KERN013", "skipped", k, reason="the kernelspec sets no PYTHONPATH")]
    missing = [p for p in entries if not os.path.isdir(p)]
    if missing:
        return [
            _result(
                "KERN013",
                "warning",
                k,
                observed=f"PYTHONPATH entries do not exist: {', '.join(missing)}",
                expected="directories that exist (the repository moved?)",
                fix=command(
                    "stackcheck", "kernel", "register", "--name", k, "--repo", "/path/to/repo", "--force"
                ),
            )
        ]
    return [_result("KERN013", "ok", k, observed=os.pathsep.join(entries))]


def _profile_results(k: str, facts: InterpreterFacts, profile: Profile) -> tuple[list[CheckResult], str]:
    """The profile's preflight over the kernel's interpreter, each result marked with the kernel."""
    from stackcheck.environment import obtain_snapshot
    from stackcheck.judge import judge
    from stackcheck.probe import JUDGED

    # every kernelspec on the machine is not this kernel's environment: KERN checks above
    sections = tuple(s for s in JUDGED if s != "kernels")
    snapshot = obtain_snapshot(
        python_path=facts.path, sections=sections, modules=tuple(profile.required_modules)
    )
    report = judge(snapshot, command="preflight", profile=profile)
    checks = [c for c in report.checks if not c.id.startswith("KERN")]
    for c in checks:
        c.subject = f"kernel {k}" + (f": {c.subject}" if c.subject else "")
    return checks, report.snapshot_digest


def check_kernels(
    names: list[str] | None = None, profile: Profile | None = None, data_dirs: list[str] | None = None
) -> Report:
    """Check the named kernels (all when ``names`` is empty) into one Report."""
    from stackcheck.checks.kernels import unreadable_effect, unreadable_fix
    from stackcheck.probe.kernels import jupyter_data_dirs, scan_kernelspecs

    dirs = data_dirs if data_dirs is not None else jupyter_data_dirs()
    found, broken = scan_kernelspecs(dirs)
    specs = {s.name: s for s in found}
    unreadable = {u.name: u for u in broken}
    wanted = [n.lower() for n in names] if names else sorted({*specs, *unreadable})
    checks: list[CheckResult] = []
    digests: list[str] = []
    if not wanted:
        checks.append(
            _result("KERN010", "skipped", None, reason=f"no kernelspecs in {os.pathsep.join(dirs)}")
        )
    for name in wanted:
        spec = specs.get(name)
        if spec is None and name in unreadable:
            u = unreadable[name]
            checks.append(
                _result(
                    "KERN010",
                    "blocked",
                    name,
                    observed=f"{u.path} is unreadable ({u.reason}): {unreadable_effect(u)}",
                    expected="a kernel.json with a non-empty argv",
                    fix=unreadable_fix(u, "/path/to/env/bin/python"),
                )
            )
            continue
        if spec is None:
            checks.append(
                _result(
                    "KERN010",
                    "blocked",
                    name,
                    observed=f"no kernel named {name!r} in {os.pathsep.join(dirs)}",
                    expected="a registered kernelspec",
                    fix=command("stackcheck", "kernel", "register", "--name", name),
                )
            )
            continue
        env = _kernel_env(spec.path)
        facts = None
        python = own_env_python(spec) if spec.bare_python else spec.interpreter
        if (
            python
            and (spec.bare_python or spec.interpreter_exists)
            and (spec.language or "python").lower() == "python"
        ):
            facts = ask(python, env=env)
        results = judge_kernel(spec, env, facts)
        if profile is not None and facts is not None and facts.ran:
            more, digest = _profile_results(name, facts, profile)
            results += more
            digests.append(digest)
        checks += results
    return build_report(
        "kernel",
        checks,
        profile=profile,
        digest=digests[0] if len(digests) == 1 else "",
        environment={"kernels": ",".join(wanted), "data_dirs": os.pathsep.join(dirs)},
    )
