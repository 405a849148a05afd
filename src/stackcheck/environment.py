"""Where a command's facts come from: the live interpreter, another interpreter (``--python``),
a recorded snapshot (``--snapshot``) or a pasted collect_env output (``--from-collect-env``).
Every command that judges an environment obtains its Snapshot here."""

from __future__ import annotations

import sys

from stackcheck.errors import InputError
from stackcheck.models.snapshot import Snapshot


def load_snapshot(path: str) -> Snapshot:
    """A snapshot JSON file ('-' for stdin), validated, with one-line errors."""
    from stackcheck.fileio import decode_json, read_bytes

    data = sys.stdin.buffer.read() if path == "-" else read_bytes(path, "snapshot")
    return decode_json(data, Snapshot, "<stdin>" if path == "-" else path, "stackcheck snapshot")


def load_collect_env(path: str) -> Snapshot:
    from stackcheck.fileio import read_text
    from stackcheck.importers.collect_env import parse_collect_env

    if path == "-":
        text, source = sys.stdin.read(), "<stdin>"
    else:
        text, source = read_text(path, "collect_env output"), path
    return parse_collect_env(text, source=source)


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


# The digest lives beside the Snapshot model; commands that import it from here keep working.
from stackcheck.models.snapshot import snapshot_digest as snapshot_digest  # noqa: E402
