"""The verdict cache: the report of a judging command (``preflight``, ``doctor``) kept between
runs under everything it was judged from. A warm run probes the environment as always; when the
snapshot and every other input are those judged before, it prints the report made then, without
importing the checks, the judge, the catalog, the knowledge base or ``packaging``.

Checks are pure functions of (Snapshot, Profile, Knowledge) (DESIGN.md), so the key is:

- before the probe (:meth:`VerdictCache.open`): stackcheck's version, the judging interpreter
  and its ``sys.path``, the command and what changes its judging (profile ID, ``--skip``,
  ``--deep``, the source of facts); the profile registry (the path given or found, and the
  stat of it and of every built-in registry file); the knowledge base (its directory, the extra
  rule paths, the stat of every table and rule file); the modules of ``stackcheck.checks``
  (their names) and the stat of every module that was loaded when the report was made. Every
  stat is path, mtime, size and inode, and a file changed within
  :data:`stackcheck.factcache.RACY_NS` is not trusted (nothing is read or kept). The modules
  the profile asks the probe to look up come from the entry, so a hit loads no profile;
- after the probe (:meth:`VerdictCache.report`): a digest of the snapshot without the two
  fields that differ on every run (``tool.captured_at``, ``launch.wall_clock_ns``: no check
  reads them; the fleet's clock checks judge several ranks and never come here), and the answer
  of every ``os.path.realpath`` the checks asked for, asked again (ISO004 and the kernel checks
  resolve symlinks: the only file-system reads of checks).

Only a process started from the command line (``stackcheck ...``, through
:func:`stackcheck.cli.main` with no arguments given) uses the cache: inside Python
(``main(argv)``, click's test runner) checks and knowledge may be patched or registered in
memory, which no file's stat shows.

On a hit the report is the stored one with this run's snapshot digest and capture time; how it
is printed (JSON, Markdown, ``-v``, ``--strict``, colour, width) is decided when it is printed,
on a hit as on a miss, so none of that is part of the key. A report whose verdict is ``error``
(a check raised) is not kept. Entries live in ``<cache dir>/facts/verdicts-<digest>.json``, one
per command, profile, options, registry, interpreter (and its ``sys.path``) and source (see
:mod:`stackcheck.factcache`).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import msgspec

from stackcheck import factcache
from stackcheck.models.finding import Report

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from stackcheck.models.snapshot import Snapshot
    from stackcheck.sources import FactSource


def judged(
    command: str,
    *,
    profile_id: str | None = None,
    registry: str | None = None,
    source: FactSource | None = None,
    skip: Sequence[str] = (),
    deep: bool = False,
) -> tuple[Snapshot, Report]:
    """(snapshot, Report) of a judging command: the facts of ``source`` (live when None)
    judged by the checks of ``command`` against the profile ``profile_id`` of ``registry``
    (:func:`stackcheck.catalog.load_catalog`'s argument), or the report the cache kept for
    them. ``skip``: check IDs and prefixes, already split."""
    from stackcheck.environment import obtain
    from stackcheck.probe import JUDGED

    cache = VerdictCache.open(command, profile_id, registry, source, skip, deep)
    catalog = profile = None
    modules = cache.modules if cache is not None else None
    if modules is None and profile_id is not None:
        catalog, profile = _profile(registry, profile_id)
        modules = list(profile.required_modules)
    snapshot = obtain(source, deep=deep, sections=JUDGED, modules=tuple(modules or ()))
    report = cache.report(snapshot) if cache is not None else None
    if report is not None:
        return snapshot, report
    if profile_id is not None and catalog is None:
        catalog, profile = _profile(registry, profile_id)
        if list(profile.required_modules) != modules:  # an entry at odds with its own key
            modules = list(profile.required_modules)
            snapshot = obtain(source, deep=deep, sections=JUDGED, modules=tuple(modules))
            if cache is not None:
                cache.entry = None  # judged and kept anew
                cache.report(snapshot)  # the digest it is kept under
    from stackcheck.judge import judge

    with recorded_realpaths() as asked:
        report = judge(snapshot, command=command, profile=profile, skip=skip, deep=deep)
    if source is not None and source.kind == "kernel":
        report.environment["kernel"] = source.value
    if catalog is not None:
        report.environment["registry"] = catalog.source
    if cache is not None:
        cache.store(report, modules or (), asked.answers if asked.complete else None)
    return snapshot, report


def _profile(registry: str | None, profile_id: str):
    from stackcheck.catalog import load_catalog

    catalog = load_catalog(registry)
    return catalog, catalog.get(profile_id)


_CHECKS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "checks")


class _Entry(msgspec.Struct):
    modules: list[str]  # what the profile asks the probe to look up
    snapshot: str  # digest of the snapshot judged, without its volatile fields
    realpaths: list[tuple[str, str]]  # os.path.realpath(path) → what it answered
    code: list[tuple[str, int, int, int]]  # every module loaded: path, mtime_ns, size, inode
    report: Report


class VerdictCache:
    """The entry of one judging (command, profile, registry, interpreter, source)."""

    def __init__(self, root: str, name: str, key: str, entry: _Entry | None):
        self.root, self.name, self.key, self.entry = root, name, key, entry
        self.digest = ""

    @classmethod
    def open(
        cls,
        command: str,
        profile_id: str | None,
        registry: str | None,
        source: FactSource | None,
        skip: Sequence[str],
        deep: bool,
    ) -> VerdictCache | None:
        """The entry for this judging when its inputs are as they were; None when nothing
        may be cached (no cache directory, a file too recent or missing, a registry on stdin)."""
        import stackcheck
        from stackcheck.cachedir import cache_root

        # set by the start-up path; read, not imported (startup → output → verdicts is the way in)
        startup = sys.modules.get("stackcheck.cli.startup")
        if not getattr(startup, "COMMAND_LINE", False):
            return None  # inside Python (main(argv), a test runner): checks may be patched in memory
        root = cache_root()
        inputs = _inputs(profile_id, registry) if root is not None else None
        if root is None or inputs is None:
            return None
        where = (command, profile_id, list(skip), deep, inputs[1][:2] if inputs[1] else None, sys.executable)
        origin = (source.kind, source.value) if source is not None else ("live", "")
        # sys.path too: `stackcheck ...` and `python -m stackcheck ...` keep an entry each
        name = f"facts/verdicts-{factcache.digest(where, origin, sys.path)[:20]}.json"
        try:  # the modules all_checks imports
            checks = sorted(n for n in os.listdir(_CHECKS_DIR) if n != "__pycache__")
        except OSError:
            return None  # not a directory of files (a zip import): judged every time
        key = factcache.digest(
            stackcheck.__version__,
            [sys.version, sys.executable, sys.path],
            [command, profile_id, list(skip), deep, origin],
            inputs,
            checks,
        )
        entry = factcache.load(root, name, key, _Entry)
        if entry is not None and factcache.file_stamps([c[0] for c in entry.code]) != [
            list(c) for c in entry.code
        ]:
            entry = None  # the code that judged is not the code that would judge now
        return cls(root, name, key, entry)

    @property
    def modules(self) -> list[str] | None:
        """The modules the profile asks the probe to look up (None: not known, load it)."""
        return self.entry.modules if self.entry is not None else None

    def report(self, snapshot: Snapshot) -> Report | None:
        """The stored report when ``snapshot`` is the one it judged, with this run's
        snapshot digest and capture time; else None."""
        from stackcheck.models.snapshot import snapshot_digest

        self.digest = _content_digest(snapshot)
        entry = self.entry
        if entry is None or entry.snapshot != self.digest:
            return None
        if any(os.path.realpath(path) != found for path, found in entry.realpaths):
            return None
        report = entry.report
        report.snapshot_digest = snapshot_digest(snapshot)
        if "captured_at" in report.environment:
            report.environment["captured_at"] = snapshot.tool.captured_at
        return report

    def store(self, report: Report, modules: Sequence[str], realpaths: dict[str, str] | None) -> None:
        """Keep ``report`` for the snapshot last given to :meth:`report`, under the stat of
        every module loaded now; a cache that cannot be written is only slower."""
        if report.verdict == "error" or realpaths is None or not self.digest:
            return
        files = sorted(
            {f for m in list(sys.modules.values()) if isinstance(f := getattr(m, "__file__", None), str)}
        )
        code = factcache.file_stamps(files)
        if code is None:
            return
        from stackcheck.redaction import redact_value

        entry = msgspec.to_builtins(
            _Entry(list(modules), self.digest, sorted(realpaths.items()), code, report)
        )
        entry["report"] = redact_value(entry["report"])  # kept as it is printed: no secret on disk
        factcache.store(self.root, self.name, self.key, entry)


def _inputs(profile_id: str | None, registry: str | None) -> list | None:
    """The knowledge base and (for a profile) the registry as they are on disk: directory,
    paths and the stat of every file they are read from; None when one is too recent or
    missing (the loaders then say what is wrong) or the registry is read from stdin. In
    ``str``s, without pathlib (≈ 2.5 ms of a warm run with urllib.parse and ipaddress)."""
    from stackcheck.fileio import STDIN, json_files
    from stackcheck.knowledge.paths import data_dir_name, extra_rule_names

    directory, extra = data_dir_name(), extra_rule_names()
    files = [*json_files(directory), *json_files(os.path.join(directory, "rules"))]
    for path in extra:
        files += json_files(path) if os.path.isdir(path) else [path]
    stamps = factcache.file_stamps(files)
    if stamps is None:
        return None
    knowledge = [os.path.realpath(directory), list(extra), stamps]
    if profile_id is None:
        return [knowledge, None]
    from stackcheck.catalog.paths import builtin_names, find_registry_name

    found = os.fspath(registry) if registry else find_registry_name()
    if found is not None and os.path.normpath(found) == STDIN:  # the loader's Path("./-") is "-" too
        return None
    stamps = factcache.file_stamps([*builtin_names(), *([found] if found is not None else [])])
    if stamps is None:
        return None
    given = [found, os.path.realpath(found)] if found is not None else [None, None]
    return [knowledge, [*given, stamps]]


def _content_digest(snapshot: Snapshot) -> str:
    """A digest of ``snapshot`` without the fields that differ on every run."""
    replace = msgspec.structs.replace
    steady = replace(
        snapshot,
        tool=replace(snapshot.tool, captured_at=""),
        launch=replace(snapshot.launch, wall_clock_ns=None),
    )
    return factcache.digest(msgspec.json.encode(steady, order="sorted"))


class _Asked:
    """The ``os.path.realpath`` calls of a judgement (``Path.resolve`` among them): path →
    answer; ``complete`` is False when one cannot be asked again the same way (bytes, strict)."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}
        self.complete = True


@contextmanager
def recorded_realpaths() -> Iterator[_Asked]:
    """Every ``os.path.realpath`` asked inside the block, with its answer: what the checks
    read from the file system (they are pure functions of the snapshot otherwise)."""
    real = os.path.realpath
    asked = _Asked()

    def realpath(path, *args, **kwargs):
        found = real(path, *args, **kwargs)
        text = os.fspath(path) if isinstance(path, os.PathLike) else path
        if args or kwargs not in ({}, {"strict": False}) or not isinstance(text, str):
            asked.complete = False
        else:
            asked.answers[text] = found  # pathlib's resolve() asks with strict=False
        return found

    os.path.realpath = realpath  # type: ignore[assignment]
    try:
        yield asked
    finally:
        os.path.realpath = real
