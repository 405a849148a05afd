"""Who installs: uv when it is available (the ``stackcheck[env]`` extra brings it), else the
standard library's ``venv`` and pip. Both get the same sources (index, extra indexes,
find-links, ``--no-index``, certificate, trusted hosts, constraint files): the user's pip
configuration (its files and ``PIP_*`` variables, which uv does not read) merged under the
options given, so a mirror or a wheelhouse that works for pip works for uv too.

Every step is an argv list (printed by ``--dry-run`` through :mod:`stackcheck.shellcmd`); a
resolution is read back as :class:`~stackcheck.provision.lock.LockedPackage` rows.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from stackcheck.errors import InputError, Refused
from stackcheck.models.snapshot import normalize_name
from stackcheck.provision.lock import LockedPackage
from stackcheck.provision.plan import Plan, Sources

__all__ = [
    "Installer",
    "check_sources",
    "check_torch_index",
    "choose_installer",
    "merge_sources",
    "pip_config",
]

_KEYS = {
    "index-url": "index_url",
    "extra-index-url": "extra_index_urls",
    "find-links": "find_links",
    "no-index": "no_index",
    "cert": "cert",
    "trusted-host": "trusted_hosts",
    "constraint": "constraint_files",
}
_LISTS = {"extra_index_urls", "find_links", "trusted_hosts", "constraint_files"}


def _config_files(environ, home: Path) -> list[Path]:
    """pip's configuration files, lowest priority first (global, user, site), then
    PIP_CONFIG_FILE (``os.devnull`` turns the files off, as in pip)."""
    given = environ.get("PIP_CONFIG_FILE")
    if given == os.devnull:
        return []
    xdg = environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(os.pathsep)
    files = [Path(d) / "pip" / "pip.conf" for d in xdg if d] + [Path("/etc/pip.conf")]
    config_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    files += [home / ".pip" / "pip.conf", config_home / "pip" / "pip.conf"]
    if environ.get("VIRTUAL_ENV"):
        files.append(Path(environ["VIRTUAL_ENV"]) / "pip.conf")
    if given:
        files.append(Path(given))
    return files


def _truthy(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def _set(found: dict, key: str, value: str, where: str) -> None:
    name = _KEYS[key]
    if name in _LISTS:
        found[name] = tuple(value.split())
    elif name == "no_index":
        found[name] = _truthy(value)
    else:
        found[name] = value.strip() or None


def pip_config(environ=None, home: str | None = None) -> Sources:
    """The sources the user's pip would use: its config files' ``[global]`` then ``[install]``
    sections, each file over the ones before, then the ``PIP_*`` variables over all."""
    environ = os.environ if environ is None else environ
    found: dict = {}
    for file in _config_files(environ, Path(home or os.path.expanduser("~"))):
        if not os.path.exists(file):  # most of pip's places hold none: no parser to import
            continue
        import configparser

        parser = configparser.RawConfigParser()
        try:
            with open(file, encoding="utf-8") as fh:
                parser.read_file(fh)
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, configparser.Error) as exc:
            raise InputError(f"{file}: not a readable pip configuration ({exc.__class__.__name__})") from None
        for section in ("global", "install"):
            if parser.has_section(section):
                for key, value in parser.items(section):
                    if key in _KEYS:
                        _set(found, key, value, str(file))
    for key in _KEYS:
        var = "PIP_" + key.upper().replace("-", "_")
        if environ.get(var):
            _set(found, key, environ[var], var)
    return Sources(**found)


def merge_sources(
    config: Sources,
    *,
    index_url: str | None = None,
    extra_index_urls: tuple[str, ...] = (),
    find_links: tuple[str, ...] = (),
    no_index: bool = False,
) -> Sources:
    """The options given over the configuration: an index given replaces the configured one;
    extra indexes and find-links are added to the configured ones, as pip does."""
    links = tuple(os.path.abspath(f) if "://" not in f else f for f in find_links)
    return replace(
        config,
        index_url=index_url or config.index_url,
        extra_index_urls=tuple(dict.fromkeys((*config.extra_index_urls, *extra_index_urls))),
        find_links=tuple(dict.fromkeys((*config.find_links, *links))),
        no_index=no_index or config.no_index,
    )


def _connect(host: str, port: int, timeout: float) -> None:
    import socket  # only for a source on the network

    with socket.create_connection((host, port), timeout=timeout):
        pass


def _unreachable(url: str, connect, timeout: float) -> str | None:
    """Why ``url`` (an index or find-links entry) cannot be reached; None when it can."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            connect(parts.hostname or "", port, timeout)
        except OSError as exc:
            return f"cannot connect to {parts.hostname}:{port} ({exc.strerror or exc.__class__.__name__})"
        return None
    path = unquote(parts.path) if parts.scheme == "file" else url
    return None if os.path.exists(path) else "no such file or directory"


def check_sources(sources: Sources, *, connect=_connect, timeout: float = 3.0) -> tuple[Sources, list[str]]:
    """Sources without the unreachable ones, and a warning for each one skipped; an InputError
    naming it when nothing else is left to install from (as pip: a dead mirror beside a
    working one is skipped)."""
    candidates: list[tuple[str, str]] = []
    if not sources.no_index:
        candidates.append(("--index-url", sources.index_url or "https://pypi.org/simple"))
        candidates += [("--extra-index-url", u) for u in sources.extra_index_urls]
    candidates += [("--find-links", f) for f in sources.find_links]
    dead = {}
    for option, url in candidates:
        why = _unreachable(url, connect, timeout)
        if why is not None:
            dead[(option, url)] = why
    if not dead:
        return sources, []
    if len(dead) == len(candidates):
        (option, url), why = next(iter(dead.items()))
        raise InputError(f"{option} {redact_url(url)}: unreachable ({why}) and no other source is configured")
    warnings = [
        f"{option} {redact_url(url)}: unreachable ({why}); skipped" for (option, url), why in dead.items()
    ]
    alive = {url for (option, url) in candidates if (option, url) not in dead}
    index = sources.index_url
    no_index = sources.no_index
    if ("--index-url", sources.index_url or "https://pypi.org/simple") in dead:
        index, no_index = None, True  # pip's default would be tried again otherwise
    kept = replace(
        sources,
        index_url=index if not no_index else None,
        extra_index_urls=tuple(u for u in sources.extra_index_urls if u in alive),
        find_links=tuple(f for f in sources.find_links if f in alive),
        no_index=no_index,
    )
    if no_index and kept.extra_index_urls:  # a live extra index takes the dead index's place
        kept = replace(kept, index_url=kept.extra_index_urls[0], extra_index_urls=kept.extra_index_urls[1:])
        kept = replace(kept, no_index=False)
    return kept, warnings


def check_torch_index(plan: Plan, *, connect=_connect, timeout: float = 3.0) -> list[str]:
    """A warning (and the torch index dropped from ``plan``) when the chosen torch index cannot
    be reached while other sources can: torch then comes from them, maybe as another build,
    which the preflight of the new environment judges."""
    url = plan.torch.index_url
    if not url or plan.sources.no_index:
        return []
    why = _unreachable(url, connect, timeout)
    if why is None:
        return []
    plan.torch = replace(
        plan.torch, index_url=None, why=plan.torch.why + f" (its index {url} is unreachable)"
    )
    return [f"torch index {url}: unreachable ({why}); skipped, torch comes from the other sources"]


def redact_url(url: str) -> str:
    """``url`` without the user and password of its netloc (a private index's token)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def child_env(sources: Sources, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The installer's environment: the user's (proxies, credentials an index needs) without
    what would point it at another interpreter or site, or paint the output it is read back
    from (FORCE_COLOR made ``uv pip compile`` write escape sequences into its requirements)."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "CONDA_PREFIX", "UV_PYTHON")
    env = {
        k: v for k, v in os.environ.items() if k not in dropped and k not in ("FORCE_COLOR", "CLICOLOR_FORCE")
    }
    if sources.cert:
        env["SSL_CERT_FILE"] = sources.cert
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Installer:
    """``name``: uv | pip; ``exe``: the uv binary (pip runs as ``PYTHON -m pip``)."""

    name: str
    exe: str = ""

    def venv(self, python: str, path: str) -> list[str]:
        if self.name == "uv":
            # --allow-existing: DIR/stackcheck/ (the resolution's files) may be written meanwhile
            return [
                self.exe, "venv", "--quiet", "--allow-existing", "--no-python-downloads", "--python", python,
                path,
            ]  # fmt: skip
        return [python, "-m", "venv", path]

    def _source_args(self, sources: Sources) -> list[str]:
        args = sources.args()
        if self.name == "uv":
            args += [a for h in sources.trusted_hosts for a in ("--allow-insecure-host", h)]
        else:
            args += [a for h in sources.trusted_hosts for a in ("--trusted-host", h)]
            args += ["--cert", sources.cert] if sources.cert else []
        return args

    def resolve_argv(self, target: str, requirements: str, constraints: str, sources: Sources, report: str):
        if self.name == "uv":
            return [
                self.exe, "pip", "compile", requirements, "--constraint", constraints, "--python", target,
                "--generate-hashes", "--emit-index-annotation", "--no-header", "--quiet",
                "--no-python-downloads", *self._source_args(sources),
            ]  # fmt: skip
        return [
            target, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
            "--disable-pip-version-check", "--report", report, "-r", requirements, "-c", constraints,
            *self._source_args(sources),
        ]  # fmt: skip

    def install_argv(self, target: str, locked: str, sources: Sources) -> list[str]:
        """Install exactly the hashed pins of ``locked`` (no resolution, so no constraints:
        uv refuses an unpinned one beside ``--require-hashes``)."""
        sources = replace(sources, constraint_files=())
        if self.name == "uv":
            return [
                self.exe, "pip", "sync", locked, "--python", target, "--require-hashes", "--quiet",
                *self._source_args(sources),
            ]  # fmt: skip
        return [
            target, "-m", "pip", "install", "--no-deps", "--require-hashes", "--quiet",
            "--disable-pip-version-check", "-r", locked, *self._source_args(sources),
        ]  # fmt: skip

    def parse_resolution(self, stdout: str, report: str, sources: Sources) -> list[LockedPackage]:
        if self.name == "uv":
            return parse_uv_compile(stdout)
        try:
            data = json.loads(Path(report).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise Refused(f"pip wrote no readable resolution report ({exc.__class__.__name__})") from None
        return parse_pip_report(data, sources)


def find_uv() -> str | None:
    """The uv binary: the ``uv`` package's (the ``env`` extra), else ``uv`` on PATH or beside
    this interpreter."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        pass
    beside = Path(sys.executable).parent / "uv"
    return shutil.which("uv") or (str(beside) if beside.is_file() else None)


def choose_installer(name: str = "auto") -> Installer:
    """uv when ``name`` is auto and uv is found (or uv asked for), else venv + pip."""
    if name not in ("auto", "uv", "pip"):
        raise InputError(f"--installer: {name!r} is not auto, uv or pip")
    if name == "pip":
        return Installer("pip")
    uv = find_uv()
    if uv is None:
        if name == "uv":
            raise InputError("--installer uv: uv is not installed (pip install 'stackcheck[env]')")
        return Installer("pip")
    return Installer("uv", uv)


def _via_name(text: str) -> str:
    text = text.strip()
    return "-r" if text.startswith(("-r ", "-c ")) else normalize_name(text)


def parse_uv_compile(text: str) -> list[LockedPackage]:
    """``uv pip compile --generate-hashes --emit-index-annotation`` output as lock rows."""
    rows: list[LockedPackage] = []
    in_via = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if not raw[:1].isspace() and not line.startswith(("#", "-")):
            spec = line.rstrip("\\").strip()
            name, sep, version = spec.partition("==")
            if not sep:
                raise Refused(f"uv pip compile: unexpected line {line[:80]!r} (expected NAME==VERSION)")
            rows.append(LockedPackage(name=normalize_name(name), version=version.strip(), hashes=[]))
            in_via = False
            continue
        if not rows:
            continue
        row = rows[-1]
        if line.startswith("--hash=sha256:"):
            row.hashes.append(line.removeprefix("--hash=sha256:").rstrip("\\").strip())
        elif line.startswith("# via"):
            rest = line.removeprefix("# via").strip()
            in_via = not rest
            if rest:
                row.via.append(_via_name(rest))
        elif line.startswith("# from "):
            row.index = redact_url(line.removeprefix("# from ").strip())
            in_via = False
        elif in_via and line.startswith("#   "):
            row.via.append(_via_name(line[1:]))
    return rows


def _index_of(url: str, sources: Sources) -> str:
    """The configured source a resolved file came from (its find-links directory or index)."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        folder = os.path.dirname(unquote(parts.path))
        for link in sources.find_links:
            if os.path.abspath(unquote(urlsplit(link).path) if "://" in link else link) == folder:
                return Path(folder).as_uri()
        return Path(folder).as_uri()
    for index in (sources.index_url, *sources.extra_index_urls):
        if index and urlsplit(index).hostname == parts.hostname:
            return redact_url(index)
    return f"{parts.scheme}://{parts.hostname}"


def parse_pip_report(data: dict, sources: Sources) -> list[LockedPackage]:
    """pip's ``--report`` (installation report v1) as lock rows; ``via`` from each item's
    Requires-Dist evaluated for the report's environment."""
    from packaging.requirements import InvalidRequirement, Requirement

    environment = {**data.get("environment", {}), "extra": ""}
    items = data.get("install", [])
    rows: dict[str, LockedPackage] = {}
    for item in items:
        meta = item.get("metadata", {})
        info = item.get("download_info", {})
        hashes = info.get("archive_info", {}).get("hashes", {})
        url = redact_url(info.get("url", ""))
        name = normalize_name(meta.get("name", ""))
        rows[name] = LockedPackage(
            name=name,
            version=meta.get("version", ""),
            hashes=[hashes["sha256"]] if "sha256" in hashes else [],
            url=url,
            index=_index_of(url, sources),
            via=["-r"] if item.get("requested") else [],
        )
    for item in items:
        parent = normalize_name(item.get("metadata", {}).get("name", ""))
        for line in item.get("metadata", {}).get("requires_dist", []) or []:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.marker is not None and not req.marker.evaluate(environment):
                continue
            child = rows.get(normalize_name(req.name))
            if child is not None and parent not in child.via:
                child.via.append(parent)
    return sorted(rows.values(), key=lambda r: r.name)
