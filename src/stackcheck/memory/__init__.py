"""Model memory estimation: exact parameter counts from a config.json
(:mod:`~stackcheck.memory.architecture`), memory terms of a workload
(:mod:`~stackcheck.memory.estimate`), the GPU table (:mod:`~stackcheck.memory.gpus`)."""
