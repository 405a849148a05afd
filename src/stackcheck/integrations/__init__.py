"""Where the facts go that people already look at: MLflow and W&B runs (the snapshot, the
preflight verdict, key versions; ledger records as runs), the Prometheus textfile collector and
OTLP. Each tracker library is optional and imported inside the function that needs it."""
