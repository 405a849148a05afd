"""Log templates: Drain (from Drain3) behind an exact-line cache and the masks.

Drain costs hundreds of microseconds a line in Python; the lines of a CI log repeat (the
same progress message, the same warning in every job), so a line seen before — as it came,
or once masked — is answered from a dictionary. Drain itself sees each distinct masked line
once. The caches are bounded: past ``cache_size`` entries they start afresh.
"""

from __future__ import annotations

from collections.abc import Iterable

from stackcheck.errors import InputError
from stackcheck.mining.masks import WILDCARD, Masker

__all__ = ["TemplateMiner", "drain_class"]

CACHE_SIZE = 200_000


def drain_class():
    """Drain3's ``Drain`` (the optional ``mine`` extra)."""
    try:
        from drain3.drain import Drain
    except ImportError:
        raise InputError("mining needs Drain3: pip install 'stackcheck[mine]'") from None
    return Drain


class TemplateMiner:
    """``add(line)`` → a cluster ID; ``template(id)`` → the cluster's template (``<*>`` for
    the variable tokens). ``sim_th`` and ``depth`` are Drain's similarity threshold and
    prefix-tree depth; ``extra_masks`` are further patterns masked as ``<*>``."""

    def __init__(
        self,
        *,
        sim_th: float = 0.4,
        depth: int = 4,
        extra_masks: Iterable[str] = (),
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self._drain = drain_class()(sim_th=sim_th, depth=depth, param_str=WILDCARD)
        self.masker = Masker(extra_masks)
        self._exact: dict[str, int] = {}
        self._masked: dict[str, int] = {}
        self._cache_size = cache_size
        self.lines = 0
        self.drained = 0  # lines Drain itself saw

    def add(self, line: str) -> int:
        self.lines += 1
        cid = self._exact.get(line)
        if cid is not None:
            return cid
        masked = self.masker.mask(line)
        cid = self._masked.get(masked)
        if cid is None:
            self.drained += 1
            cid = self._drain.add_log_message(masked)[0].cluster_id
            self._remember(self._masked, masked, cid)
        self._remember(self._exact, line, cid)
        return cid

    def _remember(self, cache: dict[str, int], key: str, cid: int) -> None:
        if len(cache) >= self._cache_size:
            cache.clear()
        cache[key] = cid

    def template(self, cid: int) -> str:
        return self._drain.id_to_cluster[cid].get_template()

    @property
    def clusters(self) -> int:
        return len(self._drain.id_to_cluster)
