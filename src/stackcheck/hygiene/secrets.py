"""Credential patterns and masking. A secret is only ever shown masked: its first four
characters and its length, in every output format."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackcheck.redaction import NEEDS_MIX, compiled_shapes, mixed

# kind → (anchors, compiled pattern): the token shapes of the redaction layer, one table for
# both (see stackcheck.redaction.TOKEN_SHAPES).
_COMPILED = compiled_shapes()
_NETRC_PASSWORD = re.compile(r"(?m)(?:^|\s)password\s+(\S+)")
_NETRC_NAMES = {".netrc", "_netrc", "netrc"}

_PLACEHOLDER = re.compile(r"EXAMPLE|XXXX|xxxx|your[_-]?(?:api[_-]?)?(?:key|token)", re.IGNORECASE)


@dataclass(frozen=True)
class Secret:
    kind: str
    masked: str
    line: int  # 1-based line in the scanned text


def mask(value: str) -> str:
    """First four characters and the length: enough to recognise a key, useless to use it."""
    return f"{value[:4]}...({len(value)} chars)"


def _plausible(kind: str, value: str) -> bool:
    if _PLACEHOLDER.search(value):
        return False
    return kind not in NEEDS_MIX or mixed(value)


def find_secrets(text: str, *, filename: str = "") -> list[Secret]:
    """Every credential in ``text``, masked, with its line number, in text order."""
    hits: list[tuple[int, Secret]] = []
    for kind, (anchors, regex) in _COMPILED.items():
        if not any(a in text for a in anchors):
            continue
        for m in regex.finditer(text):
            value = m.group(1) if regex.groups else m.group(0)
            if kind == "private key":
                shown = m.group(0).strip("-").replace("BEGIN ", "") + " block"
            elif _plausible(kind, value):
                shown = mask(value)
            else:
                continue
            start = m.start(1) if regex.groups else m.start()
            hits.append((start, Secret(kind, shown, text.count("\n", 0, start) + 1)))
    if filename.rsplit("/", 1)[-1] in _NETRC_NAMES:
        kind = "W&B API key (.netrc)" if "api.wandb.ai" in text else ".netrc password"
        for m in _NETRC_PASSWORD.finditer(text):
            hits.append((m.start(1), Secret(kind, mask(m.group(1)), text.count("\n", 0, m.start(1)) + 1)))
    return [secret for _, secret in sorted(hits, key=lambda h: h[0])]


def redact(text: str) -> str:
    """``text`` with every credential replaced by its masked form (for evidence that quotes
    a source line)."""
    for kind, (anchors, regex) in _COMPILED.items():
        if kind == "private key" or not any(a in text for a in anchors):
            continue
        group = 1 if regex.groups else 0
        text = regex.sub(lambda m: m.group(0).replace(m.group(group), mask(m.group(group))), text)
    return text
