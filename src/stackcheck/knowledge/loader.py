"""Reading and validating the knowledge data files.

A bad data file must fail loudly and precisely, because every check downstream trusts it:
the error names the file, the rule ID (or row) and the field. Signatures are compiled with
RE2 (linear time, no backreferences or lookarounds), so no rule can hang the tool on a long
log.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from stackcheck.errors import InputError
from stackcheck.fileio import decode_json, json_files, load_json_any, read_bytes
from stackcheck.knowledge.base import Knowledge
from stackcheck.knowledge.paths import DATA_DIR_NAME, RULES_ENV, data_dir, extra_rule_paths
from stackcheck.knowledge.tables import (
    KNOWLEDGE_SCHEMA_VERSION,
    ArchListTable,
    CudaDriverTable,
    PinTable,
    TorchReleaseTable,
)
from stackcheck.models.rule import RULE_SCHEMA_VERSION, Rule

if TYPE_CHECKING:
    from pathlib import Path

    from stackcheck.knowledge.paths import DATA_DIR, RULES_DIR

# where the files are (re-exported: they moved to knowledge.paths, which a warm run reads alone)
__all__ = ["DATA_DIR", "RULES_DIR", "RULES_ENV", "data_dir", "extra_rule_paths", "load_from", "load_rules"]


def __getattr__(name: str):
    # DATA_DIR and RULES_DIR (Paths) on first use: the packaged knowledge is read without pathlib
    if name in ("DATA_DIR", "RULES_DIR"):
        from stackcheck.knowledge import paths

        return getattr(paths, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# table name → (file, model, the list of its sourced rows)
TABLES: dict[str, tuple[str, type[Any], str]] = {
    "drivers": ("cuda_drivers.json", CudaDriverTable, "toolkits"),
    "torch": ("torch_releases.json", TorchReleaseTable, "releases"),
    "archs": ("torch_arch_lists.json", ArchListTable, "builds"),
    "pins": ("package_pins.json", PinTable, "pins"),
}
# every list of these fields holds sourced facts
_SOURCED_LISTS = ("toolkits", "mvc_floors", "releases", "builds", "pins")


def load_from(directory: str | os.PathLike, extra_rules: Sequence[Path] = ()) -> Knowledge:
    """The knowledge base of ``directory``, plus the rules of ``extra_rules`` (rule files or
    folders of them, e.g. mined rules): they enter exactly as the packaged rules do.
    ``directory``: a ``Path``, or a ``str`` as ``Path`` writes it (the packaged one, read
    without pathlib): the files are named ``str(Path(directory) / name)`` either way."""
    tables: dict[str, Any] = {}
    files: dict[str, str] = {}
    for name, (filename, model, _) in TABLES.items():
        path = os.path.join(directory, filename)
        table = decode_json(read_bytes(path, "knowledge table"), model, path, "knowledge table")
        _check_version(path, table.schema_version, KNOWLEDGE_SCHEMA_VERSION)
        _check_sources(path, table)
        tables[name] = table
        files[name] = path
    # The packaged rules are RE2-checked by the test suite and again by triage when it
    # compiles them; a data directory from elsewhere is checked here, at load. (Path.resolve
    # is os.path.realpath.)
    packaged = os.path.realpath(directory) == os.path.realpath(DATA_DIR_NAME)
    rules = load_rules(os.path.join(directory, "rules"), check_signatures=not packaged)
    if extra_rules:
        known = {r.id: os.path.join(directory, "rules") for r in rules}
        rules = sorted([*rules, *load_rule_files(extra_rules, known=known)], key=lambda r: r.id)
    return Knowledge(rules=rules, files=files, **tables)


def _check_version(path: str | os.PathLike, found: str, expected: str) -> None:
    if found.split(".")[0] != expected.split(".")[0]:
        raise InputError(f"{path}: schema_version: expected {expected.split('.')[0]}.x, found {found!r}")


def _check_sources(path: str, table: Any) -> None:
    """Every fact row names at least one source; a tag must be declared in ``sources``."""
    for list_name in _SOURCED_LISTS:
        for i, row in enumerate(getattr(table, list_name, None) or []):
            where = f"{path}: {list_name}[{i}]"
            if not row.sources:
                raise InputError(f"{where}.sources: every fact needs a source, found none")
            for src in row.sources:
                if src not in table.sources and not _is_citation(src):
                    raise InputError(f"{where}.sources: unknown source tag {src!r} (declare it in 'sources')")
            if not row.verified and not row.unverified_reason.strip():
                raise InputError(
                    f"{where}.unverified_reason: a fact marked verified=false must say what it rests on"
                )
            if row.verified and row.unverified_reason:
                raise InputError(f"{where}.unverified_reason: set only on a fact marked verified=false")


def _is_citation(text: str) -> bool:
    """A direct citation (``owner/repo#123``, a URL, a document path) rather than a tag."""
    return any(ch in text for ch in "#/") or text.startswith("http")


def load_rules(directory: str | os.PathLike, *, check_signatures: bool = True) -> list[Rule]:
    """All rules of ``directory/*.json`` sorted by ID; signatures compiled with RE2 unless
    ``check_signatures`` is off."""
    files = json_files(directory)  # sorted(directory.glob("*.json")), as str
    return sorted(_read_rule_files(files, check_signatures, {}), key=lambda r: r.id)


def load_rule_files(paths: Sequence[Path], *, known: dict[str, str] | None = None) -> list[Rule]:
    """The rules of rule files or folders of them (``*.json``), RE2-checked; an ID may be
    defined once across them and ``known`` (ID → where it is already defined)."""
    files: list[str | Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(f"{path}: no such rule file or folder")
    return _read_rule_files(files, True, dict(known or {}))


def _read_rule_files(
    files: Sequence[str | Path], check_signatures: bool, known: dict[str, Any]
) -> list[Rule]:
    rules: list[Rule] = []
    for path in files:
        raw = load_json_any(path, "rule file")
        if not isinstance(raw, dict) or not isinstance(raw.get("rules"), list):
            raise InputError(f"{path}: expected an object with a 'rules' list (a stackcheck rule file)")
        _check_version(path, str(raw.get("schema_version", "")), RULE_SCHEMA_VERSION)
        for i, item in enumerate(raw["rules"]):
            rule = _decode_rule(path, i, item, check_signatures)
            if rule.id in known:
                where = known[rule.id]
                raise InputError(f"{path}: rule {rule.id}: id: duplicate, already defined in {where}")
            known[rule.id] = path
            rules.append(rule)
    return rules


def _decode_rule(path: str | Path, index: int, item: Any, check_signatures: bool = True) -> Rule:
    label = f"rule {item.get('id')}" if isinstance(item, dict) and item.get("id") else f"rules[{index}]"
    try:
        rule = msgspec.convert(item, Rule)
    except msgspec.ValidationError as exc:
        text, _, where = str(exc).partition(" - at `$")
        field = where.rstrip("`").lstrip(".") or "(rule)"
        raise InputError(f"{path}: {label}: {field}: {text[0].lower() + text[1:]}") from None
    if not rule.sources:
        raise InputError(f"{path}: {label}: sources: every rule needs a source, found none")
    if (rule.provenance == "mined") != (rule.mined is not None):
        raise InputError(
            f"{path}: {label}: mined: a rule has mining statistics exactly when its provenance is 'mined'"
        )
    for j, sig in enumerate(rule.signatures if check_signatures else ()):
        problem = signature_problem(sig)
        if problem:
            raise InputError(f"{path}: {label}: signatures[{j}]: not a valid RE2 pattern ({problem})")
    _check_scope(path, label, rule)
    from stackcheck.knowledge.predicates import PREDICATES, predicate_name

    if rule.scope.predicate and predicate_name(rule.scope.predicate) not in PREDICATES:
        raise InputError(
            f"{path}: {label}: scope.predicate: unknown predicate {rule.scope.predicate!r} "
            f"(known: {', '.join(sorted(PREDICATES))})"
        )
    return rule


_SPECIFIER_FIELDS = ("torch_cuda", "driver", "compute_capability", "python", "glibc")


def _check_scope(path: str | Path, label: str, rule: Rule) -> None:
    """Scope specifiers and requirements parse, so evaluation can never fail on data."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    scope = rule.scope
    for field in _SPECIFIER_FIELDS:
        value = getattr(scope, field)
        if value is None or (field == "torch_cuda" and value == "none"):
            continue
        try:
            SpecifierSet(value)
        except InvalidSpecifier:
            raise InputError(
                f"{path}: {label}: scope.{field}: {value!r} is not a version specifier (e.g. '<525')"
            ) from None
    for field in ("packages", "packages_absent"):
        for i, text in enumerate(getattr(scope, field)):
            try:
                Requirement(text)
            except InvalidRequirement:
                raise InputError(
                    f"{path}: {label}: scope.{field}[{i}]: {text!r} is not a PEP 508 requirement"
                ) from None


def signature_problem(pattern: str) -> str | None:
    """Why RE2 rejects ``pattern`` (None when it compiles)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # the InputError says it; RE2 need not also log to stderr
    try:
        re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else ""
        return (detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail)) or "rejected"
    return None
