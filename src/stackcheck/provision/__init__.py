"""Environments made from a profile: plan (profile + machine facts → what to install, from which
torch index), installer (uv, else venv + pip; the user's pip configuration carried over), lock
(exact versions and hashes; restore, verify, diff) and export (requirements / pyproject / conda
/ pixi). The commands are ``stackcheck env create|lock|restore|diff`` and
``stackcheck profiles export --format``."""
