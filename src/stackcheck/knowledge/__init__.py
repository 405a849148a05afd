"""The compatibility knowledge base: sourced data files under ``data/`` and their loaders."""
