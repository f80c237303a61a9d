"""Test-support helpers (reference implementations, game generators); not used at runtime."""
