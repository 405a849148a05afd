"""Environment acceptance: real work in the checked interpreter (NumPy with a known answer,
a tiny model trained with torch, a GPU matmul against the CPU, a safetensors round trip
across processes), the version report, repository hygiene and the profile's preflight,
ending in one verdict and a report directory. Step IDs are ACC001–ACC007."""

from stackcheck.accept.run import DEFAULT_TIMEOUT_S, Acceptance, accept
from stackcheck.accept.steps import TITLES

__all__ = ["DEFAULT_TIMEOUT_S", "Acceptance", "TITLES", "accept"]
