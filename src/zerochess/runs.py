"""Run folders (the resolved config, versions, resume checks); run data as plain YAML/JSON."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from pathlib import Path
from typing import Any

import yaml

from zerochess.errors import ConfigError, UserError
from zerochess.provenance import provenance, versions_differ
from zerochess.yaml_config import load_yaml_file

CONFIG_FILE = "config.yaml"
VERSIONS_FILE = "versions.yaml"
FORCED_KEY = "forced_resumes"

__all__ = ["CONFIG_FILE", "FORCED_KEY", "VERSIONS_FILE", "asdict_plain", "prepare_run_dir",
           "versions", "write_json"]


def asdict_plain(obj: Any) -> dict[str, Any]:
    """A dataclass as a plain YAML-friendly dict (nested dataclasses and tuples, e.g.
    ``SearchConfig.hybrid_ratio_schedule``'s pairs, become dicts and lists)."""
    return {f.name: _field(getattr(obj, f.name)) for f in dataclasses.fields(obj)}


def _field(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return asdict_plain(value)
    if isinstance(value, (tuple, list)):
        return [_field(v) for v in value]
    return value


def versions(model: str | None = None) -> dict[str, Any]:
    """The provenance of a run now (see :func:`zerochess.provenance.provenance`)."""
    return provenance(model)


def _plain(value: Any) -> Any:
    """YAML-safe plain data (tuples -> lists, inf -> .inf kept as float)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def prepare_run_dir(out_dir: str | Path, resolved: dict[str, Any], *,
                    force: bool = False) -> Path:
    """Create ``out_dir``, write ``config.yaml`` / ``versions.yaml``.

    A folder that already holds finished games of a different config is refused (so
    resuming never mixes two runs' games); one without finished games (e.g. a run that
    stopped at a bad setting) takes the new config. A damaged ``config.yaml`` is
    replaced: the games themselves are checked against the run when it resumes. A folder
    whose run had other versions (code commit, packages, model file) is refused unless
    ``force``; a forced resume is recorded in ``versions.yaml``. ``resolved["model"]``
    (default ``builtin``) names the model.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output folder {out} is a file")
    out.mkdir(parents=True, exist_ok=True)
    resolved = _plain(resolved)
    cfg_path = out / CONFIG_FILE
    if cfg_path.is_file():
        old = _read_yaml(cfg_path)
        if not isinstance(old, dict):
            old = None
        if old is not None and old != resolved and _has_games(out):
            diff = sorted(k for k in set(old) | set(resolved) if old.get(k) != resolved.get(k))
            raise ConfigError(
                f"{out} holds a run with a different config (keys differ: {', '.join(diff)}); "
                "choose another output folder or delete it")
    now = _plain(versions(str(resolved.get("model", "builtin"))))
    _check_versions(out, now, force)
    cfg_path.write_text(yaml.safe_dump(resolved, sort_keys=False))
    return out


def _read_yaml(path: Path) -> Any:
    """A run folder's own YAML file, or None when it is damaged (unreadable, not YAML,
    beyond the loader's limits): the caller replaces it."""
    try:
        return load_yaml_file(path, "run file")
    except UserError:
        return None


def _check_versions(out: Path, now: dict[str, Any], force: bool) -> None:
    """Write ``versions.yaml`` for a new run; for a resume compare and refuse or record."""
    path = out / VERSIONS_FILE
    if not path.is_file():
        path.write_text(yaml.safe_dump(now, sort_keys=False))
        return
    old = _read_yaml(path)
    if not isinstance(old, dict) or not old:
        # a damaged versions.yaml says nothing about the run: replace it, as a damaged
        # config.yaml is (the games themselves are checked when the run resumes)
        path.write_text(yaml.safe_dump(now, sort_keys=False))
        return
    first = {k: v for k, v in old.items() if k != FORCED_KEY}
    diff = versions_differ(first, now)
    if not diff:
        return
    text = "; ".join(f"{k}: {a} -> {b}" for k, (a, b) in diff.items())
    if not force:
        raise ConfigError(
            f"{out} holds a run made under other versions ({text}); resuming would mix "
            "games of two setups. Use another output folder, or --force to resume anyway "
            f"(recorded in {VERSIONS_FILE})")
    old.setdefault(FORCED_KEY, []).append({
        "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "differences": {k: [a, b] for k, (a, b) in diff.items()},
        "versions": now,
    })
    path.write_text(yaml.safe_dump(_plain(old), sort_keys=False))


def _has_games(out: Path) -> bool:
    """Whether ``out`` holds a finished game: a data row in a ``games.csv`` or a game in a
    ``games.pgn``, at the top or in a subfolder (training keeps one per generation)."""
    for csv_path in out.rglob("games.csv"):
        if csv_path.is_file() and len(csv_path.read_bytes().strip().splitlines()) > 1:
            return True
    return any(p.is_file() and b"[Event " in p.read_bytes() for p in out.rglob("games.pgn"))


def write_json(path: str | Path, data: Any) -> None:
    Path(path).write_text(json.dumps(_plain(data), indent=2, default=str) + "\n")
