"""Run folders: the resolved config, the versions, and the resume check."""

from __future__ import annotations

import json
import math
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from zerochess.errors import ConfigError

CONFIG_FILE = "config.yaml"
VERSIONS_FILE = "versions.yaml"


def versions() -> dict[str, str]:
    """Versions of python and the packages a result depends on, plus the jax backend."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in ("zerochess", "jax", "jaxlib", "chess", "numpy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    try:
        import jax

        out["jax_backend"] = jax.default_backend()
        out["jax_devices"] = ", ".join(str(d) for d in jax.devices())
    except Exception as e:  # noqa: BLE001 - informational only
        out["jax_backend"] = f"unavailable ({e})"
    return out


def _plain(value: Any) -> Any:
    """YAML-safe plain data (tuples -> lists, inf -> .inf kept as float)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def prepare_run_dir(out_dir: str | Path, resolved: dict[str, Any]) -> Path:
    """Create ``out_dir``, write ``config.yaml`` / ``versions.yaml``.

    A folder that already holds finished games of a different config is refused (so
    resuming never mixes two runs' games); one without finished games (e.g. a run that
    stopped at a bad setting) takes the new config. A damaged ``config.yaml`` is
    replaced: the games themselves are checked against the run when it resumes.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output folder {out} is a file")
    out.mkdir(parents=True, exist_ok=True)
    resolved = _plain(resolved)
    cfg_path = out / CONFIG_FILE
    if cfg_path.is_file():
        try:
            old = yaml.safe_load(cfg_path.read_bytes().decode("utf-8", errors="replace"))
        except yaml.YAMLError:
            old = None
        if not isinstance(old, dict):
            old = None
        if old is not None and old != resolved and _has_games(out):
            diff = sorted(k for k in set(old) | set(resolved) if old.get(k) != resolved.get(k))
            raise ConfigError(
                f"{out} holds a run with a different config (keys differ: {', '.join(diff)}); "
                "choose another output folder or delete it")
    cfg_path.write_text(yaml.safe_dump(resolved, sort_keys=False))
    (out / VERSIONS_FILE).write_text(yaml.safe_dump(versions(), sort_keys=False))
    return out


def _has_games(out: Path) -> bool:
    """Whether ``out`` holds a finished game (a data row in ``games.csv`` or a game in
    ``games.pgn``)."""
    csv_path, pgn_path = out / "games.csv", out / "games.pgn"
    if csv_path.is_file() and len(csv_path.read_bytes().strip().splitlines()) > 1:
        return True
    return pgn_path.is_file() and b"[Event " in pgn_path.read_bytes()


def write_json(path: str | Path, data: Any) -> None:
    Path(path).write_text(json.dumps(_plain(data), indent=2, default=str) + "\n")
