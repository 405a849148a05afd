"""The distribution graph of an environment: requirement evaluation, conflicts, tree, why."""
