"""The experiments' scales, smallest first: each config names its sizes per scale."""

from __future__ import annotations

__all__ = ["SCALES"]

SCALES = ("tiny", "small", "full")
