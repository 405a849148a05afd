"""PLAT002: the profile's operating system, architecture and glibc floor."""

from __future__ import annotations

from stackcheck.checks.registry import blocked, check, ok, skipped
from stackcheck.versions import clip, parse_version

_OS = {"linux": "linux", "darwin": "darwin", "macos": "darwin", "windows": "windows"}
_ARCH = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}


@check(
    "PLAT002",
    "Operating system, architecture and glibc",
    needs_profile=True,
    explain="""
Compares the platform section (OS, machine, libc) with the profile's `platform`
constraints. CUDA wheels of torch, vLLM and flash-attn exist for Linux x86_64 (some for
aarch64) only, and manylinux_2_28 wheels need glibc >= 2.28 (vLLM 0.20+: 2.35), so an
older distribution finds "no matching distribution". Fix: a supported OS image or
container (e.g. Ubuntu 22.04+ for glibc 2.35).""",
)
def platform_constraints(ctx):
    want = ctx.profile.platform
    if want is None:
        return
    plat = ctx.snapshot.platform
    if plat.status != "ok" and not plat.system:
        yield skipped("the snapshot has no platform facts")
        return
    system = _OS.get(plat.system.lower(), plat.system.lower())
    machine = _ARCH.get(plat.machine.lower(), plat.machine.lower())
    if want.os and system not in {_OS.get(o.lower(), o.lower()) for o in want.os}:
        yield blocked(
            observed=f"{plat.system}",
            expected=f"os in {want.os}",
            fix=f"run on {' or '.join(want.os)} (a container or VM works)",
            subject="os",
        )
    elif want.os:
        yield ok(observed=plat.system, expected=f"os in {want.os}", subject="os")
    if want.arch and machine not in {_ARCH.get(a.lower(), a.lower()) for a in want.arch}:
        yield blocked(
            observed=plat.machine,
            expected=f"arch in {want.arch}",
            fix=f"use a {' or '.join(want.arch)} machine",
            subject="arch",
        )
    elif want.arch:
        yield ok(observed=plat.machine, expected=f"arch in {want.arch}", subject="arch")
    if want.min_glibc and system == "linux":
        if plat.libc_family != "glibc" or not plat.libc_version:
            yield blocked(
                observed=f"libc {plat.libc_family or 'unknown'} {plat.libc_version}".strip(),
                expected=f"glibc >= {want.min_glibc}",
                fix="use a glibc-based image (manylinux wheels do not install on musl/Alpine)",
                subject="glibc",
            )
            return
        have, need = parse_version(plat.libc_version), parse_version(want.min_glibc)
        if need is None:
            yield skipped(
                f"the profile's min_glibc {clip(want.min_glibc)!r} is not a version "
                "(run `stackcheck profiles validate`)",
                subject="glibc",
            )
            return
        if have is None:
            yield skipped(f"unparseable glibc version {clip(plat.libc_version)!r}", subject="glibc")
            return
        too_old = have < need
        if too_old:
            yield blocked(
                observed=f"glibc {plat.libc_version} ({plat.distro_name or plat.distro_id})",
                expected=f"glibc >= {want.min_glibc}",
                fix=f"use an OS image with glibc >= {want.min_glibc} (e.g. Ubuntu 22.04 has 2.35, "
                "Debian 12 has 2.36)",
                subject="glibc",
            )
        else:
            yield ok(observed=f"glibc {plat.libc_version}", expected=f">= {want.min_glibc}", subject="glibc")
