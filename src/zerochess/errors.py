"""User-facing errors: the CLI prints them as one line, with no traceback."""


class UserError(ValueError):
    """Bad input from the user (position, move, config, file, parameter)."""
