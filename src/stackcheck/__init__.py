"""stackcheck: keeps ML/LLM experiment environments honest.

The library is the product; the CLI in :mod:`stackcheck.cli` is a thin shell over it.
Nothing heavy is imported here, so ``import stackcheck`` stays cheap.
"""

__version__ = "0.1.0"
