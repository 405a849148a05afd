"""Where a command's facts come from: the live interpreter, another interpreter (``--python``),
a Jupyter kernel's (``--kernel``), a recorded snapshot (``--snapshot``) or a file an importer
reads (``--from-collect-env`` …), named by one :class:`stackcheck.sources.FactSource` and
resolved by :func:`obtain`. Every command that judges an environment obtains its Snapshot here, \
and every source is
redacted here (``redaction.redact_snapshot``): a snapshot someone else recorded is cleaned
again before it is judged, printed or stored."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackcheck.errors import InputError
from stackcheck.identifiers import and_join, printable
from stackcheck.models.snapshot import SNAPSHOT_SCHEMA_VERSION, Snapshot
from stackcheck.redaction import redact_snapshot

if TYPE_CHECKING:
    from collections.abc import Callable

    from stackcheck.sources import FactSource

__all__ = [
    "kernel_interpreter",
    "load_imported",
    "load_snapshot",
    "obtain",
    "obtain_snapshot",
    "snapshot_digest",
]


def load_snapshot(path: str) -> Snapshot:
    """A snapshot JSON file ('-' for stdin), validated, with one-line errors. Only a
    stackcheck snapshot passes: any other JSON object (a report, a model config, ``{}``) is
    named for what it is, so no command judges an empty environment by mistake."""
    from stackcheck.fileio import decode_json, read_bytes, source_name

    data = read_bytes(path, "snapshot")
    source = source_name(path)
    top = _top_level(data)
    other = _looks_like(top) if top is not None else None
    if other:
        raise InputError(f"{source}: this is {other}, not a snapshot {_MAKE_ONE}")
    snapshot = decode_json(data, Snapshot, source, "stackcheck snapshot")
    missing = [key for key in _SNAPSHOT_KEYS if key not in (top or {})]
    if missing:
        listed = ""
        if len(missing) == len(_SNAPSHOT_KEYS):
            keys = sorted(top or {})
            listed = (
                f" (its keys: {', '.join(printable(k) for k in keys[:6])}{', …' if len(keys) > 6 else ''})"
            )
        raise InputError(
            f"{source}: this is a JSON object without a snapshot's {and_join(missing)}{listed}, "
            f"not a snapshot {_MAKE_ONE}"
        )
    major, ours = snapshot.schema_version.partition(".")[0], SNAPSHOT_SCHEMA_VERSION.partition(".")[0]
    if major != ours:
        newer = major.isdigit() and int(major) > int(ours)
        raise InputError(
            f"{source}: schema_version: snapshot schema {printable(snapshot.schema_version)} is "
            + (
                f"newer than this stackcheck reads ({ours}.x); upgrade stackcheck"
                if newer
                else f"not one this stackcheck reads ({ours}.x)"
            )
        )
    return redact_snapshot(snapshot)


# What every snapshot stackcheck writes has (all sections are always encoded).
_SNAPSHOT_KEYS = ("schema_version", "tool", "python", "packages")
_MAKE_ONE = "(make one with `stackcheck snapshot -o snapshot.json`)"


def _top_level(data: bytes) -> dict | None:
    """The top-level keys of a JSON object (values left undecoded), None when it is not one."""
    import msgspec

    try:
        return msgspec.json.decode(data, type=dict[str, msgspec.Raw])
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None  # decode_json names the problem


def _looks_like(top: dict) -> str | None:
    """What a JSON object that is not a snapshot is, by the keys other files are known by."""
    import msgspec

    def text(key: str) -> str:
        try:
            value = msgspec.json.decode(top[key])
        except (KeyError, msgspec.DecodeError):
            return ""
        return value if isinstance(value, str) else ""

    if not top:
        return "an empty JSON object"
    if "checks" in top and "kind" in top:
        return f"a stackcheck {printable(text('kind')) or 'check'} report"
    if "matches" in top and "failure_region" in top:
        return "a stackcheck triage report"
    if "profiles" in top:
        return "a stackcheck profile registry"
    if "snapshot" in top and ("topic" in top or "run_label" in top):
        return 'a stackcheck result record (its environment is under "snapshot")'
    if "model_type" in top or "architectures" in top:
        return "a model config (config.json)"
    if "argv" in top and ("display_name" in top or "language" in top):
        return "a Jupyter kernelspec (kernel.json)"
    if "nbformat" in top and "cells" in top:
        return "a Jupyter notebook"
    if "installed" in top and "pip_version" in top:
        return "`pip inspect` output"
    return None


def load_collect_env(path: str) -> Snapshot:
    return load_imported("collect-env", path)


def load_imported(kind: str, path: str) -> Snapshot:
    """A file an importer reads (``sources.IMPORTERS``), parsed and redacted."""
    import importlib

    from stackcheck.fileio import read_text, source_name
    from stackcheck.sources import importer

    found = importer(kind)
    if found is None:
        raise InputError(f"source: no importer reads {kind!r}")
    module, _, function = found.parser.partition(":")
    parse = getattr(importlib.import_module(module), function)
    return redact_snapshot(parse(read_text(path, found.what), source=source_name(path)))


def obtain(
    source: FactSource | None = None,
    *,
    deep: bool = False,
    sections: tuple[str, ...] | None = None,
    modules: tuple[str, ...] = (),
    interpreter_facts: dict | Callable[[], dict] | None = None,
) -> Snapshot:
    """The Snapshot of one source of facts (the live interpreter when ``source`` is None):
    a snapshot file validated, an importer's file parsed, an interpreter (or a kernel's)
    probed; redacted either way. ``deep``, ``sections``, ``modules`` and ``interpreter_facts``
    (its python and packages sections, probed already) shape a probe only."""
    python_path = None  # source None: live (not FactSource(): its dataclasses are ≈ 2 ms of a warm run)
    if source is None or source.kind == "live":
        pass
    elif source.kind == "snapshot":
        return load_snapshot(source.value)
    elif source.is_file:
        return load_imported(source.kind, source.value)
    elif source.kind == "kernel":
        python_path = kernel_interpreter(source.value)
    elif source.kind == "python":
        python_path = source.value
    from stackcheck.probe import gather

    command = f"--python {python_path}" if python_path else "live"
    snap = gather(
        python_path,
        deep=deep,
        sections=sections,
        command=command,
        modules=modules,
        interpreter_facts=interpreter_facts,
    )
    # packages were redacted as they were read (probe/interpreter.py, cached or not): skipping
    # them here saves most of the walk on the path every command takes
    return redact_snapshot(snap, skip=("packages",))


def obtain_snapshot(
    *,
    snapshot_file: str | None = None,
    collect_env_file: str | None = None,
    python_path: str | None = None,
    deep: bool = False,
    sections: tuple[str, ...] | None = None,
    modules: tuple[str, ...] = (),
) -> Snapshot:
    """:func:`obtain` with the source as loose keywords (kept for existing callers)."""
    from stackcheck.sources import FactSource

    source = FactSource.of(snapshot=snapshot_file, collect_env=collect_env_file, python=python_path)
    return obtain(source, deep=deep, sections=sections, modules=modules)


def kernel_interpreter(name: str) -> str:
    """The interpreter a Jupyter kernel runs (for ``--kernel NAME``), or a one-line error."""
    from stackcheck.probe.kernels import jupyter_data_dirs, scan_kernelspecs

    specs, unreadable = scan_kernelspecs(jupyter_data_dirs())
    for spec in specs:
        if spec.name == name:
            if not spec.interpreter or not spec.interpreter_exists:
                raise InputError(
                    f"kernel {name!r}: its interpreter {spec.argv[:1]} does not exist ({spec.path})"
                )
            return spec.interpreter
    for broken in unreadable:
        if broken.name == name.lower():
            raise InputError(
                f"kernel {name!r}: {broken.path} is unreadable ({broken.reason}); "
                "see `stackcheck kernel check` for how to fix it"
            )
    raise InputError(f"no Jupyter kernel named {name!r} (see `jupyter kernelspec list`)")


# The digest lives beside the Snapshot model; commands that import it from here keep working.
from stackcheck.models.snapshot import snapshot_digest as snapshot_digest  # noqa: E402
