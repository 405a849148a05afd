"""Credential patterns and masking. A secret is only ever shown masked: its first four
characters and its length, in every output format."""

from __future__ import annotations

import re
from dataclasses import dataclass

# kind → (literal anchors, pattern). A kind's regex only runs over a text that contains one
# of its anchors (a C substring search), which keeps the scan near grep speed. Where a
# pattern has a group, group 1 is the secret and the rest is context.
_KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "private key": (("PRIVATE KEY",), r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    "Anthropic API key": (("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    "OpenAI API key": (("sk-",), r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    "Hugging Face token": (("hf_",), r"\bhf_[A-Za-z0-9]{30,}\b"),
    "GitHub token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b"),
    "AWS access key id": (("AKIA", "ASIA"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "AWS secret access key": (
        ("aws_secret", "AWS_SECRET", "Aws_Secret"),
        r"(?i:aws_secret_access_key|aws_secret_key)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    ),
    "W&B API key": (("wandb", "WANDB", "Wandb", "WandB"), r"(?i:wandb)[^\n]{0,120}?\b([0-9a-f]{40})\b"),
}
_COMPILED = {kind: (anchors, re.compile(pattern)) for kind, (anchors, pattern) in _KINDS.items()}
_NETRC_PASSWORD = re.compile(r"(?m)(?:^|\s)password\s+(\S+)")
_NETRC_NAMES = {".netrc", "_netrc", "netrc"}

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
