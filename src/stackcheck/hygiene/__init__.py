"""Repository hygiene: committed secrets, weights, caches, unsafe pickles, unpinned remote
code. ``scan(path)`` returns a Report of kind ``hygiene``; rule IDs are HYG001–HYG007."""

from stackcheck.hygiene.rules import RULES
from stackcheck.hygiene.scan import DEFAULT_MAX_WEIGHT_SIZE, IGNORE_FILE, parse_size, scan

__all__ = ["RULES", "DEFAULT_MAX_WEIGHT_SIZE", "IGNORE_FILE", "parse_size", "scan"]
