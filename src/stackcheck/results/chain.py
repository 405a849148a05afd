"""The ledger's chain: every record and event names the digest of the file stored just before
it (``prev``), and the index keeps the newest one (the head).

A file's digest covers its ``prev``, so the chain is tamper *evidence* for single files, not a
signature: deleting, replacing or re-hashing one file breaks the link its successor holds (or
the head, for the newest file); an attacker who can rewrite every later file and the index
can rewrite the chain. Pure functions over :class:`Link` s, so every rule is testable alone.

A crash between writing a file and committing its index row leaves a file the index does not
know; the next writer links to the same predecessor, so the chain may fork there. A fork is
no breach: every link still names an existing file; the stray file is reported as not indexed
until ``reindex`` takes it in.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from stackcheck.results.identity import short


@dataclass(frozen=True)
class Link:
    id: str  # hex digest of the file
    prev: str  # hex digest of its predecessor; "" for a chain start or a file from before the chain
    path: str  # where the file is, for messages
    created_at: str


def tip(links: dict[str, Link], start: str) -> str:
    """The newest file reached from ``start`` ("" = from the chain starts) by following
    successors; ``start`` itself when nothing follows it."""
    children: dict[str, list[Link]] = defaultdict(list)
    for link in links.values():
        children[link.prev].append(link)
    current, seen = start, {start}
    while children.get(current):
        nxt = max(children[current], key=lambda k: (k.created_at, k.id)).id
        if nxt in seen:  # a cycle needs a sha256 collision; never loop on one
            break
        seen.add(nxt)
        current = nxt
    return current


def breaks(links: dict[str, Link], present: set[str]) -> list[tuple[str, Link]]:
    """(missing predecessor, the file that names it) for every broken link."""
    return [
        (k.prev, k) for k in sorted(links.values(), key=lambda k: k.path) if k.prev and k.prev not in present
    ]


def problems(
    links: dict[str, Link], present: set[str], indexed: dict[str, str], head: tuple[str, str], guess_path
) -> dict[str, list[str]]:
    """Path → what is wrong with the chain there. ``links``: the intact files; ``present``:
    the hex names of every file there (a corrupt or tampered one is reported by itself, never
    as missing); ``indexed``: hex id → path of every row of the index; ``head``: the index's
    head (hex digest, path; "" when none); ``guess_path(hex)`` names a file none of these can
    place."""
    found: dict[str, list[str]] = defaultdict(list)

    def where(hex_id: str) -> str:
        return indexed.get(hex_id) or guess_path(hex_id)

    for missing, link in breaks(links, present):
        found[where(missing)].append(
            f"missing: {link.path} names it as its predecessor (a deleted, replaced or re-hashed file)"
        )
    for link in sorted(links.values(), key=lambda k: k.path):
        if link.id not in indexed:
            found[link.path].append(
                "not in the index: left by an interrupted write or added by hand; "
                "`stackcheck results reindex` takes it in"
            )
    for hex_id, path in sorted(indexed.items(), key=lambda kv: kv[1]):
        if hex_id not in present:
            found[path].append("missing: the index lists it but the file is gone (deleted or replaced)")
    head_id, head_path = head
    if head_id and head_id not in present:
        found[indexed.get(head_id) or head_path or guess_path(head_id)].append(
            f"missing: the index's chain head {short('sha256:' + head_id)} names it "
            "(the newest files were removed)"
        )
    return {path: list(dict.fromkeys(msgs)) for path, msgs in found.items()}
