"""Errors a user can act on. The CLI turns :class:`InputError` into one line and exit 2."""

from __future__ import annotations


class InputError(Exception):
    """Unreadable or invalid input: the message names the file, line or field and what was
    expected. Never carries a traceback to the user."""


class Refused(Exception):
    """The operation is understood but refused (e.g. overwriting a ledger record): exit 1."""
