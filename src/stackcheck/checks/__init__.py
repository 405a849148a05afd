"""Pure checks with stable IDs, one module per concern. See :mod:`.registry`."""
