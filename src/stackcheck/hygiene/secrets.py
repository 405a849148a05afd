"""Credential patterns and masking. A secret is only ever shown masked: its first four
characters and its length, in every output format."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# kind → pattern; where a pattern has a group, group 1 is the secret and the rest is context.
# Order matters where two kinds share a prefix: "sk-ant-" must win over "sk-".
_PATTERNS: dict[str, str] = {
    "private key": r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    "Anthropic API key": r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
    "OpenAI API key": r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    "Hugging Face token": r"\bhf_[A-Za-z0-9]{30,}\b",
    "GitHub token": r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b",
    "AWS access key id": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "AWS secret access key": r"(?i:aws_secret_access_key|aws_secret_key)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    "W&B API key": r"(?i:wandb|api\.wandb\.ai)[^\n]{0,120}?\b([0-9a-f]{40})\b",
}
_NETRC_PASSWORD = re.compile(r"(?m)(?:^|\s)password\s+(\S+)")
_NETRC_NAMES = {".netrc", "_netrc", "netrc"}

_COMBINED = re.compile("|".join(f"(?P<k{i}>{p})" for i, p in enumerate(_PATTERNS.values())))
_KINDS = list(_PATTERNS)
_SINGLE = [re.compile(p) for p in _PATTERNS.values()]
# Random tokens mix letters and digits; prose such as "sk-learn-style-prefixes" does not.
_NEEDS_MIX = {"Anthropic API key", "OpenAI API key", "Hugging Face token", "GitHub token"}
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
    if kind in _NEEDS_MIX:
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return True


def find_secrets(text: str, *, filename: str = "") -> Iterator[Secret]:
    """Every credential in ``text``, masked, with its line number."""
    for m in _COMBINED.finditer(text):
        index = int(m.lastgroup[1:])
        kind = _KINDS[index]
        whole = m.group(m.lastgroup)
        own = _SINGLE[index].match(text, m.start())  # the kind's own groups, on hits only
        value = own.group(1) if own and own.re.groups else whole
        if kind == "private key":
            shown = whole.strip("-").replace("BEGIN ", "") + " block"
        else:
            if not _plausible(kind, value):
                continue
            shown = mask(value)
        yield Secret(kind, shown, text.count("\n", 0, m.start()) + 1)
    if filename.rsplit("/", 1)[-1] in _NETRC_NAMES:
        kind = "W&B API key (.netrc)" if "api.wandb.ai" in text else ".netrc password"
        for m in _NETRC_PASSWORD.finditer(text):
            yield Secret(kind, mask(m.group(1)), text.count("\n", 0, m.start(1)) + 1)
