"""Regenerate the pin table and the CUDA builds per torch release from the package indexes.

The one module of stackcheck that reads the network, for maintainers only (``stackcheck
knowledge refresh``). It reads

* the PyPI JSON API: ``https://pypi.org/pypi/NAME/json`` (the release list) and
  ``https://pypi.org/pypi/NAME/VERSION/json`` (``info.requires_dist``, ``info.requires_python``
  and the wheel file names, whose manylinux tag gives the glibc floor), and
* the PyTorch wheel indexes ``https://download.pytorch.org/whl/cuNNN/torch/`` (PEP 503 pages
  whose file names carry the local version, ``torch-2.13.0+cu129-cp312-…whl``),

and rewrites ``package_pins.json`` and ``torch_releases.json`` so that they say what the indexes
publish. Curated fields the indexes cannot know (extras of the usual install, wheel CUDA of an
engine, companions, Python windows, arch lists) are kept; a row the indexes confirm becomes
``verified``. Responses can be recorded (``cache``) and replayed (``replay``), so the command is
testable offline and a maintainer's run is reproducible.
"""

from __future__ import annotations

import difflib
import html
import json
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from stackcheck.errors import InputError

PYPI_PACKAGES = (
    "torchvision",
    "torchaudio",
    "vllm",
    "sglang",
    "xformers",
    "transformers",
    "tokenizers",
    "accelerate",
    "peft",
    "trl",
    "bitsandbytes",
)
PYPI_RELEASES = "https://pypi.org/pypi/{name}/json"
PYPI_RELEASE = "https://pypi.org/pypi/{name}/{version}/json"
TORCH_INDEX = "https://download.pytorch.org/whl/{tag}/torch/"
# what a package's row records when the table has no row of it yet (otherwise: what its rows record)
DEFAULT_TRACKED = {"torchvision": {"torch"}, "torchaudio": {"torch"}, "tokenizers": {"huggingface-hub"}}
# first release worth a row for a package the table does not cover yet (older ones predate torch 2.0)
FLOORS = {"torchvision": "0.15", "torchaudio": "2.0", "tokenizers": "0.13"}
PIN_SOURCE = "PYPI-JSON"
PIN_SOURCE_TEXT = (
    "PyPI JSON API https://pypi.org/pypi/<name>/<version>/json: info.requires_dist, info.requires_python "
    "and the wheel file names (manylinux tag), read by `stackcheck knowledge refresh`"
)
INDEX_SOURCE = "PT-INDEX"
INDEX_SOURCE_TEXT = (
    "download.pytorch.org/whl/cuNNN/torch/ (PEP 503 simple index): the +cuNNN local versions published "
    "per release, read by `stackcheck knowledge refresh`"
)
MAX_RESPONSE = 64 * 1024 * 1024  # the largest PyPI release list is a few MiB
_WHEEL = re.compile(r"torch-(\d+(?:\.\d+)+(?:\.post\d+)?)\+cu(\d+)-[^\s\"'<>/]*?\.whl")
_GLIBC = re.compile(r"manylinux_(\d+)_(\d+)_x86_64")
_LEGACY_X86 = re.compile(r"manylinux(1|2010|2014)_x86_64")

__all__ = ["Fetcher", "RefreshResult", "cache_name", "refresh", "write"]


def cache_name(url: str) -> str:
    """The file a response is recorded under: the URL without its scheme, every character
    other than letters, digits, ``.`` and ``-`` turned into ``_``."""
    rest = url.split("://", 1)[-1]
    return re.sub(r"[^A-Za-z0-9.-]+", "_", rest).strip("_")


class Fetcher:
    """GETs a URL (urllib, with a timeout and a size bound), recording each response under
    ``cache`` or answering from ``replay`` instead of the network."""

    def __init__(self, *, cache: Path | None = None, replay: Path | None = None, timeout: float = 20.0):
        if cache is not None and replay is not None:
            raise InputError("--cache and --replay: give one (record responses, or answer from them)")
        if replay is not None and not Path(replay).is_dir():
            raise InputError(f"{replay}: not a directory of recorded responses")
        self.cache, self.replay, self.timeout = cache, replay, timeout
        self.requests: list[str] = []

    def get(self, url: str) -> bytes:
        self.requests.append(url)
        if self.replay is not None:
            path = Path(self.replay) / cache_name(url)
            if not path.is_file():
                raise InputError(
                    f"{url}: no recorded response in {self.replay} "
                    f"(expected {path.name}; record with --cache)"
                )
            return path.read_bytes()
        data = self._download(url)
        if self.cache is not None:
            from stackcheck.fileio import atomic_write

            atomic_write(Path(self.cache) / cache_name(url), data)
        return data

    def _download(self, url: str) -> bytes:
        import urllib.error
        import urllib.request

        request = urllib.request.Request(url, headers={"User-Agent": "stackcheck-knowledge-refresh"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 (https only)
                data = response.read(MAX_RESPONSE + 1)
        except urllib.error.HTTPError as exc:
            raise InputError(f"{url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise InputError(f"{url}: unreachable ({reason})") from None
        if len(data) > MAX_RESPONSE:
            raise InputError(f"{url}: response larger than {MAX_RESPONSE // 2**20} MiB")
        return data

    def json(self, url: str) -> Any:
        try:
            return json.loads(self.get(url))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{url}: not JSON ({exc})") from None


@dataclass
class RefreshResult:
    """The tables before and after, what changed (one line each) and what the indexes cannot
    fill in (for the maintainer to add by hand)."""

    before: dict[str, str]  # file name → text
    after: dict[str, str]
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        out: list[str] = []
        for name in sorted(self.after):
            if self.before[name] != self.after[name]:
                out += difflib.unified_diff(
                    self.before[name].splitlines(keepends=True),
                    self.after[name].splitlines(keepends=True),
                    f"a/{name}",
                    f"b/{name}",
                )
        return "".join(out)

    def as_dict(self) -> dict[str, Any]:
        files = {name: self.before[name] != self.after[name] for name in sorted(self.after)}
        return {
            "changed": self.changed,
            "files": files,
            "changes": self.changes,
            "notes": self.notes,
            "diff": self.diff(),
        }


def refresh(
    data_dir: Path,
    fetcher: Fetcher,
    *,
    packages: tuple[str, ...] | None = None,
    torch_index: bool = True,
    extra_cuda: tuple[str, ...] = (),
    torch_since: str | None = None,
) -> RefreshResult:
    """Read the indexes and compute the refreshed tables (nothing is written)."""
    names = ("package_pins.json", "torch_releases.json")
    before = {n: _read(data_dir / n) for n in names}
    result = RefreshResult(before, dict(before))
    pins = json.loads(before["package_pins.json"])
    for name in packages if packages is not None else PYPI_PACKAGES:
        _refresh_package(pins, canonicalize_name(name), fetcher, result)
    result.after["package_pins.json"] = _dump(pins)
    if torch_index:
        releases = json.loads(before["torch_releases.json"])
        arch_rows = json.loads(_read(data_dir / "torch_arch_lists.json")).get("builds", [])
        since = _version(torch_since) if torch_since else None
        if torch_since and since is None:
            raise InputError(f"--torch-since {torch_since!r}: expected a torch release such as 2.11")
        _refresh_torch(releases, arch_rows, fetcher, extra_cuda, since, result)
        result.after["torch_releases.json"] = _dump(releases)
    return result


def write(result: RefreshResult, data_dir: Path) -> list[Path]:
    """Write the changed tables (atomically); the paths written."""
    from stackcheck.fileio import atomic_write

    return [atomic_write(data_dir / n, t) for n, t in sorted(result.after.items()) if t != result.before[n]]


def _read(path: Path) -> str:
    from stackcheck.fileio import read_text

    return read_text(path, "knowledge table")


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


# ----- pins -----


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except (InvalidVersion, TypeError):
        return None


def _norm(text: str) -> str:
    try:
        return str(Requirement(text))
    except InvalidRequirement:
        return text.strip()


def _requirement_name(text: str) -> str | None:
    try:
        return canonicalize_name(Requirement(text).name)
    except InvalidRequirement:
        return None


def _constrains(text: str) -> bool:
    """A requirement with a version range or URL: one a pin check can judge (a bare ``numpy``
    constrains nothing, and the curated rows leave such entries out)."""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return False
    return bool(req.specifier) or bool(req.url)


def _pinned(requires: list[str]) -> list[str]:
    """The constraining requirements, normalized and sorted: what two rows are compared by."""
    return sorted(_norm(r) for r in requires if _constrains(r))


def _glibc_floor(files: list[dict]) -> str | None:
    """The lowest glibc a Linux x86_64 wheel of the release runs on (``manylinux_2_28`` →
    "2.28"); None for the legacy tags (manylinux1/2010/2014: glibc <= 2.17) or no such wheel."""
    floors = []
    for f in files:
        name = str(f.get("filename", ""))
        if not name.endswith(".whl") or f.get("yanked"):
            continue
        if _LEGACY_X86.search(name):
            floors.append((2, 17))
        floors += [(int(a), int(b)) for a, b in _GLIBC.findall(name)]
    if not floors:
        return None
    low = min(floors)
    return f"{low[0]}.{low[1]}" if low > (2, 17) else None


def _published(releases: dict) -> list[Version]:
    """Final (not pre-release, not fully yanked) versions of a PyPI release list."""
    out = []
    for text, files in releases.items():
        v = _version(text)
        if v is None or v.is_prerelease or v.is_devrelease:
            continue
        if files and all(f.get("yanked") for f in files):
            continue
        out.append(v)
    return sorted(out)


def _refresh_package(doc: dict, name: str, fetcher: Fetcher, result: RefreshResult) -> None:
    rows = [r for r in doc["pins"] if canonicalize_name(r["package"]) == name]
    existing = {Version(r["version"]): r for r in rows}
    tracked = {n for r in rows for n in map(_requirement_name, r.get("requires", [])) if n}
    tracked = tracked or DEFAULT_TRACKED.get(name, set())
    listing = fetcher.json(PYPI_RELEASES.format(name=name))
    listed = listing.get("releases") or {}
    published = _published(listed)
    floor = min(existing) if existing else (_version(FLOORS.get(name, "0")) or Version("0"))
    wanted = sorted({v for v in published if v >= floor} | {v for v in existing if str(v) in listed})
    kept: list[dict] = []
    for v in sorted(existing):
        if str(v) not in listed:
            kept.append(existing[v])
            result.notes.append(f"{name} {v}: not in PyPI's release list; row kept as it is")
    previous: tuple | None = None
    for v in wanted:
        info = fetcher.json(PYPI_RELEASE.format(name=name, version=v))
        meta = info.get("info") or {}
        dist = meta.get("requires_dist") or []
        requires = [r for r in dist if _requirement_name(r) in tracked and _constrains(r)]
        facts = (meta.get("requires_python") or None, _pinned(requires), _glibc_floor(info.get("urls") or []))
        if v not in existing and facts == previous:
            continue  # pins like the row before it: covered by that row
        previous = facts
        kept.append(_merged_row(name, v, existing.get(v), requires, facts, kept, result))
    kept.sort(key=lambda r: Version(r["version"]))
    _fix_coverage(kept, published)
    _replace_rows(doc, name, kept)
    if any(r.get("sources") == [PIN_SOURCE] or PIN_SOURCE in r.get("sources", []) for r in kept):
        doc["sources"].setdefault(PIN_SOURCE, PIN_SOURCE_TEXT)


def _merged_row(
    name: str,
    v: Version,
    old: dict | None,
    requires: list[str],
    facts: tuple,
    kept: list[dict],
    result: RefreshResult,
) -> dict:
    requires_python, normalized, glibc = facts
    if old is None:
        template = next((r for r in reversed(kept) if Version(r["version"]) < v), None)
        row = {"package": name, "version": str(v), "requires_python": requires_python, "requires": requires}
        if template and template.get("extras"):
            row["extras"] = list(template["extras"])
        row["min_glibc"] = glibc
        row["sources"] = [PIN_SOURCE]
        shown = ", ".join(requires) or "no tracked requirement"
        result.changes.append(f"package_pins: new row {name} {v} ({shown})")
        return row
    row = dict(old)
    what = []
    if _pinned(old.get("requires", [])) != normalized:
        row["requires"] = requires
        what.append("requires")
    if (old.get("requires_python") or None) != requires_python:
        row["requires_python"] = requires_python
        what.append("requires_python")
    if (old.get("min_glibc") or None) != glibc:
        row["min_glibc"] = glibc
        what.append("min_glibc")
    if what or not old.get("verified", True):
        row.pop("verified", None)
        row.pop("unverified_reason", None)
        if PIN_SOURCE not in row["sources"]:
            row["sources"] = [*row["sources"], PIN_SOURCE]
    if what:
        result.changes.append(f"package_pins: {name} {v}: {', '.join(what)} as the index publishes")
    elif not old.get("verified", True):
        result.changes.append(f"package_pins: {name} {v}: confirmed by the index, now verified")
    return row


def _fix_coverage(rows: list[dict], published: list[Version]) -> None:
    """A row covers its versions up to the next row; ``before`` only where it ends earlier. The
    last row reaches the newest published release."""
    for row, nxt in zip(rows, rows[1:]):
        before = _version(row.get("before") or "")
        if before is not None and before > Version(nxt["version"]):
            row.pop("before")  # a new row starts inside the old range: it ends there now
    if rows and published:
        last, newest = rows[-1], published[-1]
        start = Version(last["version"])
        if newest >= Version(f"{start.major}.{start.minor + 1}"):
            end = Version(f"{newest.major}.{newest.minor + 1}.0")
            current = _version(last.get("before") or "")
            if current is None or current < end:
                last["before"] = str(end)


def _replace_rows(doc: dict, name: str, rows: list[dict]) -> None:
    order = [
        "package",
        "version",
        "before",
        "requires_python",
        "requires",
        "extras",
        "min_glibc",
        "wheel_cuda",
        "cuda_variants",
        "verified",
        "unverified_reason",
        "sources",
    ]
    rows = [{k: r[k] for k in order if k in r} | {k: r[k] for k in r if k not in order} for r in rows]
    mine = [canonicalize_name(r["package"]) == name for r in doc["pins"]]
    at = mine.index(True) if any(mine) else len(mine)
    others = [r for r, m in zip(doc["pins"], mine) if not m]
    before = at - sum(mine[:at])
    doc["pins"] = others[:before] + rows + others[before:]


# ----- torch builds -----


def _cuda_tag(cuda: str) -> str:
    major, minor = cuda.split(".")[:2]
    return f"cu{major}{minor}"


def _tag_cuda(tag: str) -> str:
    digits = tag[2:]
    return f"{digits[:-1]}.{digits[-1]}"


def _refresh_torch(
    doc: dict,
    arch_rows: list[dict],
    fetcher: Fetcher,
    extra: tuple[str, ...],
    since: Version | None,
    result: RefreshResult,
) -> None:
    releases = doc["releases"]
    compared = [r for r in releases if since is None or Version(r["torch"]) >= since]
    tags = sorted(
        {_cuda_tag(c) for r in compared for c in _all_builds(r)} | set(extra), key=lambda t: int(t[2:])
    )
    found: dict[str, dict[str, list[Version]]] = {}  # minor → CUDA → patch releases
    for tag in tags:
        page = fetcher.get(TORCH_INDEX.format(tag=tag)).decode("utf-8", "replace")
        text = urllib.parse.unquote(html.unescape(page))
        for ver, digits in set(_WHEEL.findall(text)):
            v = _version(ver)
            if v is None or f"cu{digits}" != tag or (since is not None and v < since):
                continue
            found.setdefault(f"{v.major}.{v.minor}", {}).setdefault(_tag_cuda(tag), []).append(v)
    by_minor = {r["torch"]: r for r in releases}
    for minor in sorted(found, key=Version):
        if minor not in by_minor:
            cudas = sorted(found[minor], key=Version)
            row = {
                "torch": minor,
                "cuda_index_only": cudas,
                "verified": False,
                "unverified_reason": "found on download.pytorch.org by `stackcheck knowledge refresh`; "
                "companions, Python window and RELEASE.md builds not yet read",
                "sources": [INDEX_SOURCE],
            }
            releases.append(row)
            by_minor[minor] = row
            result.changes.append(f"torch_releases: new release {minor} (CUDA {', '.join(cudas)})")
            continue
        _merge_builds(by_minor[minor], found[minor], tags, result)
    for minor in by_minor:
        if minor not in found and (since is None or Version(minor) >= since):
            result.notes.append(f"torch {minor}: no wheel on the CUDA indexes read; row kept as it is")
    releases.sort(key=lambda r: Version(r["torch"]))
    doc["releases"] = [_ordered_release(r) for r in releases]
    if any(INDEX_SOURCE in r.get("sources", []) for r in releases):
        doc["sources"].setdefault(INDEX_SOURCE, INDEX_SOURCE_TEXT)
    _note_missing_arch_rows(releases, arch_rows, found, result)


def _all_builds(row: dict) -> list[str]:
    return [
        *(row.get("cuda_builds") or []),
        *row.get("cuda_experimental", []),
        *row.get("cuda_index_only", []),
    ]


def _merge_builds(
    row: dict, published: dict[str, list[Version]], tags: list[str], result: RefreshResult
) -> None:
    minor = row["torch"]
    listed = set(_all_builds(row))
    queried = {_tag_cuda(t) for t in tags}
    for cuda in sorted(set(published) - listed, key=Version):
        row["cuda_index_only"] = sorted([*row.get("cuda_index_only", []), cuda], key=Version)
        result.changes.append(f"torch_releases: {minor}: CUDA {cuda} is published (index only)")
    for cuda in sorted((listed & queried) - set(published), key=Version):
        for key in ("cuda_builds", "cuda_experimental", "cuda_index_only"):
            if row.get(key) and cuda in row[key]:
                row[key] = [c for c in row[key] if c != cuda]
        result.changes.append(f"torch_releases: {minor}: CUDA {cuda} is listed but not published; removed")
    first = min(v for vs in published.values() for v in vs)
    since = {c: str(min(vs)) for c, vs in published.items() if min(vs) > first}
    if since != row.get("cuda_since", {}):
        shown = since or "none later than the first"
        result.changes.append(f"torch_releases: {minor}: first patch per CUDA build {shown}")
        if since:
            row["cuda_since"] = dict(sorted(since.items(), key=lambda kv: Version(kv[0])))
        else:
            row.pop("cuda_since", None)
    if not row.get("cuda_index_only"):
        row.pop("cuda_index_only", None)
    if INDEX_SOURCE not in row["sources"] and set(published) - set(row.get("cuda_builds") or []):
        row["sources"] = [*row["sources"], INDEX_SOURCE]


def _ordered_release(row: dict) -> dict:
    tail = ("verified", "unverified_reason", "sources")
    return {k: v for k, v in row.items() if k not in tail} | {k: row[k] for k in tail if k in row}


def _note_missing_arch_rows(
    releases: list[dict], arch_rows: list[dict], found: dict, result: RefreshResult
) -> None:
    from packaging.specifiers import SpecifierSet

    x86 = [r for r in arch_rows if r.get("machine", "x86_64") == "x86_64"]
    ranges = [(SpecifierSet(r["torch"]), r["cuda"]) for r in x86]
    for row in releases:
        first = f"{row['torch']}.0"
        for cuda in sorted(found.get(row["torch"], {}), key=Version):
            if not any(cuda == c and spec.contains(first, prereleases=True) for spec, c in ranges):
                result.notes.append(
                    f"torch {row['torch']} CUDA {cuda}: no arch-list row in torch_arch_lists.json "
                    "(add one by hand)"
                )
