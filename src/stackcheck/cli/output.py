"""Machine output of the commands, without importing click (the start-up path,
:mod:`stackcheck.cli.startup`, prints with it before click is loaded)."""

from __future__ import annotations

import sys


def emit_json(obj) -> None:
    """Write a msgspec Struct / plain object as JSON to stdout, newline-terminated, redacted
    (stackcheck.redaction) like everything else that leaves the process."""
    import msgspec

    from stackcheck.redaction import redact_value

    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(redact_value(obj)), indent=2) + b"\n")
    sys.stdout.flush()
