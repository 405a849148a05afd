"""Which distinct signatures look alike? TF-IDF cosine over their words — only to *suggest*
merges to a maintainer; grouping itself is exact (see :mod:`stackcheck.mining.signature`)."""

from __future__ import annotations

import math
import re
from collections import Counter

__all__ = ["similar_pairs"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")


def _vectors(texts: list[str]) -> list[dict[str, float]]:
    docs = [Counter(w.lower() for w in _WORD.findall(t)) for t in texts]
    df = Counter(w for d in docs for w in d)
    n = len(docs)
    out = []
    for d in docs:
        v = {w: c * (math.log((1 + n) / (1 + df[w])) + 1) for w, c in d.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        out.append({w: x / norm for w, x in v.items()})
    return out


def similar_pairs(
    texts: list[str], threshold: float = 0.75, limit: int = 2000
) -> list[tuple[int, int, float]]:
    """Pairs (i, j, cosine) of texts at least ``threshold`` alike, most alike first; at most
    ``limit`` texts are compared (pairwise cost)."""
    vecs = _vectors(texts[:limit])
    pairs = []
    for i in range(len(vecs)):
        a = vecs[i]
        for j in range(i + 1, len(vecs)):
            b = vecs[j]
            small, big = (a, b) if len(a) < len(b) else (b, a)
            cos = sum(x * big.get(w, 0.0) for w, x in small.items())
            if cos >= threshold:
                pairs.append((i, j, round(cos, 3)))
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return pairs
