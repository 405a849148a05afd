"""Output renderers: text (readable without colour), json, markdown."""
