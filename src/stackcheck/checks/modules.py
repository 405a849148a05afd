"""MOD001: the profile's required import names are locatable (never imported)."""

from __future__ import annotations

import sys

from stackcheck.checks.context import pip_command
from stackcheck.checks.registry import PREFLIGHT, blocked, check, ok, skipped
from stackcheck.shellcmd import code, command


def _providers(ctx, name: str) -> list[str]:
    """Distributions whose top-level import names include the module's top package."""
    top = name.split(".")[0]
    return [
        f"{d.name} {d.version}"
        for d in ctx.snapshot.packages.distributions
        if top in d.top_level and not d.shadowed
    ]


@check(
    "MOD001",
    "Required module locatable",
    needs_profile=True,
    commands=(PREFLIGHT,),
    explain="""
Each import name in the profile's `required_modules` must be found on the checked
interpreter's sys.path. The live probe locates it on disk the way the import system would,
without importing it (no torch import, no CUDA context). For a recorded snapshot the
distributions' top-level names (top_level.txt / RECORD) and the standard library stand in.
A module can be missing although its distribution is "installed": a broken install, a
namespace clash, or a different interpreter. Fix: install the providing package with the
checked interpreter, or run `stackcheck doctor` for isolation faults.""",
)
def required_modules(ctx):
    located = ctx.snapshot.python.modules
    for name in ctx.profile.required_modules:
        if name in located:
            where = located[name]
            if where:
                yield ok(observed=where, expected=f"import {name}", subject=name)
                continue
            providers = _providers(ctx, name)
            observed = f"`import {name}` would fail: not found on sys.path of {ctx.interpreter}"
            if providers:
                observed += f" although {', '.join(providers)} claims it (broken install or shadowing)"
                reinstall = ctx.install(providers[0].split()[0], options=("--force-reinstall",))
                doctor = code(command("stackcheck", "doctor"))
                again = pip_command(reinstall)
                fix = (
                    f"reinstall it: {code(again)}, then look for isolation faults: {doctor}"
                    if not ctx.externally_managed
                    else f"look for isolation faults ({doctor}); {again}"
                )
                yield blocked(observed, f"import {name}", fix, subject=name, install=reinstall)
            else:
                yield blocked(observed, f"import {name}", subject=name, **_install(ctx, name))
            continue
        # recorded snapshot: infer from distributions and the standard library
        top = name.split(".")[0]
        providers = _providers(ctx, name)
        if providers:
            yield ok(
                observed=f"provided by {', '.join(providers)} (from metadata)",
                expected=f"import {name}",
                subject=name,
            )
        elif top in getattr(sys, "stdlib_module_names", ()):
            yield ok(observed="standard library", expected=f"import {name}", subject=name)
        elif not any(d.top_level for d in ctx.snapshot.packages.distributions):
            yield skipped("the snapshot records no import names; cannot tell", subject=name)
        else:
            yield blocked(
                observed=f"no installed distribution provides {top!r}",
                expected=f"import {name}",
                subject=name,
                **_install(ctx, name),
            )


# Import names whose distribution is called something else (the usual suspects in ML envs).
_DIST_FOR_MODULE = {
    "cv2": "opencv-python-headless",
    "sklearn": "scikit-learn",
    "yaml": "pyyaml",
    "PIL": "pillow",
    "pynvml": "nvidia-ml-py",
    "google.protobuf": "protobuf",
    "flash_attn": "flash-attn",
    "llama_cpp": "llama-cpp-python",
    "tensorrt_llm": "tensorrt-llm",
}


def _install(ctx, module: str) -> dict:
    """The fix for a module no distribution provides: install the distribution, or, when it is
    a profile requirement PKG001 already reports, say so instead of repeating that fix."""
    from stackcheck.deps.index import parse_requirement

    spec, requirement = _guess_distribution(ctx, module)
    state = ctx.dist_index.evaluate(requirement).state if requirement is not None else None
    parsed = parse_requirement(requirement) if requirement is not None else None
    if state in ("missing", "mismatch") and parsed is not None:
        name = parsed.name
        return {"fix": f"installing {name} (PKG001 above) provides it", "consequence_of": "PKG001"}
    return {"fix": ctx.install(spec)}


def _guess_distribution(ctx, module: str) -> tuple[str, str | None]:
    """(what to install, the profile requirement it comes from): a profile requirement of the
    same name first; else the known alias; else the name."""
    from stackcheck.deps.index import parse_requirement
    from stackcheck.models.snapshot import normalize_name

    top = module.split(".")[0]
    if module in _DIST_FOR_MODULE or top in _DIST_FOR_MODULE:
        wanted = normalize_name(_DIST_FOR_MODULE.get(module) or _DIST_FOR_MODULE[top])
    else:
        wanted = normalize_name(top)
    for text in ctx.profile.requirements:
        req = parse_requirement(text)
        if req is not None and normalize_name(req.name) == wanted:
            return f"{req.name}{req.specifier}", text
    return wanted, None
