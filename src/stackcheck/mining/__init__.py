"""CI logs → knowledge rules with provenance ``mined`` (``stackcheck mine``).

The pipeline, one module a step: :mod:`~stackcheck.mining.inputs` (where a run's logs are),
:mod:`~stackcheck.mining.extract` (regions, pytest, tracebacks → failures; with
:mod:`~stackcheck.mining.pytest_output`, :mod:`~stackcheck.mining.junit`,
:mod:`~stackcheck.mining.envfacts`), :mod:`~stackcheck.mining.signature` and
:mod:`~stackcheck.mining.masks` (what a failure is), :mod:`~stackcheck.mining.ingest` and
:mod:`~stackcheck.mining.store` (the ledger database), :mod:`~stackcheck.mining.rules`
(templates by :mod:`~stackcheck.mining.templates`, scope by :mod:`~stackcheck.mining.scope`,
reproducibility by :mod:`~stackcheck.mining.stats`), :mod:`~stackcheck.mining.verify` and
:mod:`~stackcheck.mining.report`. See docs/mining.md.
"""
