"""Other tools' outputs → Snapshot (collect_env text, pip freeze …)."""
