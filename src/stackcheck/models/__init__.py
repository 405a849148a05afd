"""The stable contracts: Snapshot, Profile, Finding/Report, Rule and ResultRecord (its format
checks live in :mod:`stackcheck.results.contract`). All are msgspec Structs: typed, fast to
decode, and exported as JSON Schema by :mod:`stackcheck.models.schemas`."""

__all__ = ["finding", "profile", "result", "rule", "schemas", "snapshot"]  # the contracts, one module each
