"""A resolved profile in the formats people install from by hand: a pip requirements file, a
uv project (``pyproject.toml``), a conda ``environment.yml`` and a pixi manifest, each with the
torch index in its own way (pip: ``--extra-index-url``; uv: an explicit ``[[tool.uv.index]]``
that the torch family is pinned to; conda: the ``pip:`` section's option line; pixi: the
package's ``index``). Constraints and forbidden packages go where the format can hold them, or
into comments where it cannot.
"""

from __future__ import annotations

import json
import re

from packaging.requirements import Requirement

from stackcheck.models.profile import Profile
from stackcheck.provision.plan import TorchChoice, is_torch_family, profile_digest

__all__ = ["FORMATS", "export_profile"]

FORMATS = ("requirements", "pyproject", "conda", "pixi")


def _q(text: str) -> str:
    """A TOML / YAML double-quoted string (JSON's escapes are valid in both)."""
    return json.dumps(text, ensure_ascii=False)


def _project_name(profile: Profile) -> str:
    return re.sub(r"[^a-z0-9]+", "-", profile.id.lower()).strip("-") or "env"


def _header(profile: Profile, choice: TorchChoice, comment: str = "#") -> list[str]:
    from stackcheck import __version__

    lines = [
        f"{comment} profile {profile.id} ({profile_digest(profile)}), exported by stackcheck {__version__}"
    ]
    if choice.tag:
        lines.append(f"{comment} torch: {choice.why}")
    if profile.forbidden:
        names = ", ".join(f.requirement for f in profile.forbidden)
        lines.append(f"{comment} never install: {names} (stackcheck env create refuses them)")
    return lines


def _torch_reqs(profile: Profile) -> list[str]:
    return [r for r in profile.requirements if is_torch_family(Requirement(r).name)]


def _key(name: str) -> str:
    """A TOML key: bare when it can be (a dot would make it a dotted key)."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _q(name)


def _requirements(profile: Profile, choice: TorchChoice) -> list[str]:
    """The profile's requirements, torch held to the chosen release where an extra index
    serves it (an installer that merges indexes could otherwise take a newer release from
    the default index: another build)."""
    if not (choice.index_url and choice.release):
        return list(profile.requirements)
    out = []
    for line in profile.requirements:
        req = Requirement(line)
        if req.name.lower() == "torch" and not req.url and not any(s.operator == "==" for s in req.specifier):
            req.specifier &= f"=={choice.release}.*"
            line = str(req)
        out.append(line)
    return out


def _constraint_comments(profile: Profile, note: str = "apply only when installed") -> list[str]:
    """The profile's constraints as comments, for a format that cannot hold them."""
    if not profile.constraints:
        return []
    return [f"# constraints ({note}):", *(f"#   {c}" for c in profile.constraints)]


def requirements_txt(profile: Profile, choice: TorchChoice) -> str:
    lines = _header(profile, choice)
    if profile.python:
        lines.append(f"# Python {profile.python}")
    if choice.index_url:
        lines.append(f"--extra-index-url {choice.index_url}")
    lines += _requirements(profile, choice)
    lines += _constraint_comments(profile, "they apply only when installed; pip: put them in a -c FILE")
    return "\n".join(lines) + "\n"


def pyproject_toml(profile: Profile, choice: TorchChoice) -> str:
    lines = _header(profile, choice)
    lines += ["[project]", f"name = {_q(_project_name(profile))}", 'version = "0"']
    if profile.python:
        lines.append(f"requires-python = {_q(profile.python)}")
    lines.append("dependencies = [")
    lines += [f"  {_q(r)}," for r in _requirements(profile, choice)]
    lines.append("]")
    if profile.constraints:
        lines += ["", "[tool.uv]", "constraint-dependencies = ["]
        lines += [f"  {_q(c)}," for c in profile.constraints]
        lines.append("]")
    torch = _torch_reqs(profile)
    if choice.index_url and torch:
        name = f"pytorch-{choice.tag}"
        lines += [
            "",
            "[[tool.uv.index]]",
            f"name = {_q(name)}",
            f"url = {_q(choice.index_url)}",
            "explicit = true",
        ]
        lines += ["", "[tool.uv.sources]"]
        lines += [f"{_key(Requirement(r).name)} = [{{ index = {_q(name)} }}]" for r in torch]
    return "\n".join(lines) + "\n"


def environment_yml(profile: Profile, choice: TorchChoice) -> str:
    lines = _header(profile, choice)
    lines += [f"name: {_project_name(profile)}", "channels:", "  - conda-forge", "dependencies:"]
    lines.append(f"  - {_q('python' + (profile.python or ''))}")
    lines += ["  - pip", "  - pip:"]
    if choice.index_url:
        lines.append(f"      - {_q('--extra-index-url ' + choice.index_url)}")
    lines += [f"      - {_q(r)}" for r in _requirements(profile, choice)]
    lines += _constraint_comments(profile)
    return "\n".join(lines) + "\n"


_PIXI_PLATFORMS = {"linux": "linux-64", "darwin": "osx-arm64", "windows": "win-64"}


def pixi_toml(profile: Profile, choice: TorchChoice) -> str:
    lines = _header(profile, choice)
    systems = (profile.platform.os if profile.platform else []) or (
        ["linux"] if profile.gpu is not None else ["linux", "darwin", "windows"]
    )
    platforms = [_PIXI_PLATFORMS[s] for s in systems if s in _PIXI_PLATFORMS]
    lines += [
        "[workspace]",
        f"name = {_q(_project_name(profile))}",
        'channels = ["conda-forge"]',
        f"platforms = [{', '.join(_q(p) for p in platforms)}]",
        "",
        "[dependencies]",
        f"python = {_q(profile.python or '*')}",
        "",
        "[pypi-dependencies]",
    ]
    for line in _requirements(profile, choice):
        req = Requirement(line)
        fields = [f"url = {_q(req.url)}"] if req.url else [f"version = {_q(str(req.specifier) or '*')}"]
        if req.extras:
            fields.append(f"extras = [{', '.join(_q(e) for e in sorted(req.extras))}]")
        if choice.index_url and is_torch_family(req.name):
            fields.append(f"index = {_q(choice.index_url)}")
        note = f"  # only where {req.marker}" if req.marker else ""
        lines.append(f"{_key(req.name)} = {{ {', '.join(fields)} }}{note}")
    lines += _constraint_comments(profile)
    return "\n".join(lines) + "\n"


_RENDER = {
    "requirements": requirements_txt,
    "pyproject": pyproject_toml,
    "conda": environment_yml,
    "pixi": pixi_toml,
}


def export_profile(profile: Profile, choice: TorchChoice, fmt: str) -> str:
    """``profile`` in format ``fmt`` (one of :data:`FORMATS`) with the torch build ``choice``."""
    return _RENDER[fmt](profile, choice)
