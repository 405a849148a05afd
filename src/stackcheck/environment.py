"""Where a command's facts come from: the live interpreter, another interpreter (``--python``),
a recorded snapshot (``--snapshot``) or a pasted collect_env output (``--from-collect-env``).
Every command that judges an environment obtains its Snapshot here."""

from __future__ import annotations

from stackcheck.errors import InputError
from stackcheck.models.snapshot import Snapshot


def load_snapshot(path: str) -> Snapshot:
    """A snapshot JSON file ('-' for stdin), validated, with one-line errors."""
    from stackcheck.fileio import decode_json, read_bytes, source_name

    return decode_json(read_bytes(path, "snapshot"), Snapshot, source_name(path), "stackcheck snapshot")


def load_collect_env(path: str) -> Snapshot:
    from stackcheck.fileio import read_text, source_name
    from stackcheck.importers.collect_env import parse_collect_env

    return parse_collect_env(read_text(path, "collect_env output"), source=source_name(path))


def obtain_snapshot(
    *,
    snapshot_file: str | None = None,
    collect_env_file: str | None = None,
    python_path: str | None = None,
    deep: bool = False,
    sections: tuple[str, ...] | None = None,
    modules: tuple[str, ...] = (),
) -> Snapshot:
    given = [o for o, v in (("--snapshot", snapshot_file), ("--from-collect-env", collect_env_file), ("--python", python_path)) if v]
    if len(given) > 1:
        raise InputError(f"{' and '.join(given)} cannot be combined: give one source of facts")
    if snapshot_file:
        return load_snapshot(snapshot_file)
    if collect_env_file:
        return load_collect_env(collect_env_file)
    from stackcheck.probe import gather

    command = f"--python {python_path}" if python_path else "live"
    return gather(python_path, deep=deep, sections=sections, command=command, modules=modules)


def snapshot_digest(snapshot: Snapshot) -> str:
    """sha256 of the canonical JSON (sorted keys) of a snapshot."""
    import hashlib

    import msgspec

    return "sha256:" + hashlib.sha256(msgspec.json.encode(snapshot, order="sorted")).hexdigest()
