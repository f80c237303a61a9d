"""The settings the scanning experiments (misevaluation, puzzles) share: the self-play
variants (``{name, n_scl}``; ``n_scl: null`` is PUCT), the deep search, the scan and
Stockfish, checked with errors that quote the bad value."""

from __future__ import annotations

from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.experiments.common import check_named_list, make_player
from zerochess.games.config import MAX_NODES, PlayerSpec, check_keys
from zerochess.validation import as_count

STOCKFISH_KEYS = ("command", "nodes", "depth", "margin")
MIN_DEEP_FACTOR = 10


def check_scan_config(cfg: dict[str, Any]) -> None:
    """Check (and normalise) the shared keys of ``cfg`` in place."""
    check_named_list(cfg["variants"], "variants", ("name", "n_scl"))
    names = [v["name"] for v in cfg["variants"]]
    if len(set(names)) != len(names):
        raise ConfigError(f"variants: names must be distinct, got {quote(names)}")
    cfg["nodes"] = as_count(cfg["nodes"], "nodes", 1, MAX_NODES)
    cfg["deep_nodes"] = as_count(cfg["deep_nodes"], "deep_nodes", 2, MAX_NODES)
    if cfg["deep_nodes"] < MIN_DEEP_FACTOR * cfg["nodes"]:
        raise ConfigError(f"deep_nodes must be at least {MIN_DEEP_FACTOR}x nodes "
                          f"({MIN_DEEP_FACTOR * cfg['nodes']}), got {quote(cfg['deep_nodes'])}")
    cfg["min_ply"] = as_count(cfg["min_ply"], "min_ply", 0, 10_000)
    cfg["ply_stride"] = as_count(cfg["ply_stride"], "ply_stride", 1, 10_000)
    cfg["analysis_batch"] = as_count(cfg["analysis_batch"], "analysis_batch", 1, 4096)
    cfg["bootstrap"] = as_count(cfg["bootstrap"], "bootstrap", 100, 1_000_000)
    sf = cfg["stockfish"]
    if not isinstance(sf, dict):
        raise ConfigError(f"stockfish must be a mapping of {', '.join(STOCKFISH_KEYS)}, "
                          f"got {quote(sf)}")
    check_keys(sf, STOCKFISH_KEYS, "stockfish")
    if sf.get("nodes") is not None:
        sf["nodes"] = as_count(sf["nodes"], "stockfish.nodes", 1, 10**9)
    if sf.get("depth") is not None:
        sf["depth"] = as_count(sf["depth"], "stockfish.depth", 1, 100)
    if not sf.get("nodes") and not sf.get("depth"):
        raise ConfigError("stockfish needs `nodes` or `depth`")
    if not isinstance(cfg.get("deep_search") or {}, dict):
        raise ConfigError(f"deep_search must be a mapping, got {quote(cfg['deep_search'])}")


def variant_points(cfg: dict[str, Any]) -> list[tuple[PlayerSpec, dict[str, Any]]]:
    """One self-play player per variant (the same nodes), tagged ``variant`` in games.csv."""
    return [(make_player(v["name"], cfg["nodes"], {**(cfg["search"] or {}),
                                                    "n_scl": v.get("n_scl")},
                         cfg["temperature"], f"variants.{v['name']}"), {"variant": v["name"]})
            for v in cfg["variants"]]


__all__ = ["MIN_DEEP_FACTOR", "STOCKFISH_KEYS", "check_scan_config", "variant_points"]
