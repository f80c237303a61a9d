"""User-facing errors: the CLI prints them as one line ``error: ...``, with no traceback."""


class UserError(ValueError):
    """Bad input from the user (position, move, config, file, parameter)."""


class ConfigError(UserError):
    """A bad config for self-play, a match or an experiment: an unknown key, a value out of
    range, a missing file, an engine that cannot be found or started."""
