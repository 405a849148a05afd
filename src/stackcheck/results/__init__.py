"""Result contract and append-only evidence ledger.

``record(draft, snapshot=…)`` completes a partial result (environment snapshot, preflight of
the declared profile, git state, digests), proves its claimed evidence level and stores it
write-once; :class:`Ledger` lists, promotes and decides. Submodules are imported lazily so
``import stackcheck.results`` stays cheap.
"""

from __future__ import annotations

__all__ = ["record", "Ledger", "ResultRecord", "Draft"]


def __getattr__(name: str):
    if name == "record":
        from stackcheck.results.recording import record

        return record
    if name == "Ledger":
        from stackcheck.results.ledger import Ledger

        return Ledger
    if name in ("ResultRecord", "Draft"):
        from stackcheck.results import contract

        return getattr(contract, name)
    raise AttributeError(name)
