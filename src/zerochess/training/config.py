"""Config schema of ``zerochess train --config FILE`` (YAML; unknown keys are an error)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zerochess.errors import ConfigError, quote
from zerochess.games.config import (
    OpeningSpec,
    PlayerSpec,
    as_bool,
    as_int,
    check_keys,
    load_yaml,
    search_config_from_dict,
    temperature_from_value,
)
from zerochess.neural.lc0_export import ENCODINGS
from zerochess.runs import asdict_plain
from zerochess.training.losses import LossConfig
from zerochess.training.schedule import NsclScheduleConfig
from zerochess.training.trainer import OptimizerConfig
from zerochess.user_files import check_user_file

BUILTIN_OPPONENTS = ("initial", "builtin", "stockfish")


def _as_float(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(f"{where} must be a number, got {quote(value)}")
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"{where} must be a number, got {quote(value)}") from None


def _material_scale(value: Any) -> float | None:
    """``selfplay.material_value_scale``: None, or pawns > 0 (finite)."""
    if value is None:
        return None
    scale = _as_float(value, "selfplay.material_value_scale")
    if not math.isfinite(scale) or scale <= 0:
        raise ConfigError(f"selfplay.material_value_scale must be a number of pawns > 0, "
                          f"got {quote(value)}")
    return scale


def _dataclass_from(cls: type, values: Mapping[str, Any] | None, where: str) -> Any:
    """A frozen config dataclass from YAML: unknown keys and bad values are one-line errors."""
    values = dict(values or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    check_keys(values, fields, where)
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        default = getattr(cls(), key)
        kind = type(default)
        if isinstance(default, bool):
            kwargs[key] = as_bool(value, f"{where}.{key}")
        elif isinstance(default, tuple):
            if not isinstance(value, (list, tuple)):
                raise ConfigError(f"{where}.{key} must be a list, got {quote(value)}")
            conv = int if key.endswith("boundaries") else float
            kwargs[key] = tuple(as_int(v, f"{where}.{key}") if conv is int
                                else _as_float(v, f"{where}.{key}") for v in value)
        elif isinstance(default, int) or (default is None and key == "max_nodes"):
            kwargs[key] = as_int(value, f"{where}.{key}", allow_none=default is None)
        elif isinstance(default, float):
            kwargs[key] = _as_float(value, f"{where}.{key}")
        elif kind is str or value is not None:
            kwargs[key] = str(value)
        else:
            kwargs[key] = None
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
    """The network to train (see docs/DESIGN.md)."""

    blocks: int = 2
    filters: int = 16
    se_ratio: int = 4
    policy: str = "conv"
    value: str = "wdl"
    moves_left: bool = True
    activation: str = "relu"
    init_seed: int = 0
    init: str | None = None

    def __post_init__(self) -> None:
        if self.blocks < 0 or self.filters < 1 or self.se_ratio < 0:
            raise ConfigError("need blocks >= 0, filters >= 1, se_ratio >= 0")
        if self.policy not in ("conv", "classical"):
            raise ConfigError(f"policy must be conv or classical, got {quote(self.policy)}")
        if self.value not in ("wdl", "classical"):
            raise ConfigError(f"value must be wdl or classical, got {quote(self.value)}")
        if self.activation not in ("relu", "mish"):
            raise ConfigError(f"activation must be relu or mish, got {quote(self.activation)}")


@dataclasses.dataclass(frozen=True)
class SelfPlaySection:
    games: int
    batch_size: int
    max_plies: int | None
    openings: OpeningSpec
    white: PlayerSpec
    black: PlayerSpec
    nscl_schedule: NsclScheduleConfig
    adjudicate_material: int | None = None
    material_value_scale: float | None = None


@dataclasses.dataclass(frozen=True)
class EvaluationSection:
    every: int
    games: int
    final_games: int
    batch_size: int
    max_plies: int | None
    player: PlayerSpec  # nodes, search and temperature of the trained net (and `initial`)
    openings: OpeningSpec
    opponents: tuple[str | PlayerSpec, ...]


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """A training run (see docs/DESIGN.md)."""

    name: str
    seed: int
    generations: int
    network: NetworkConfig
    selfplay: SelfPlaySection
    window_games: int
    min_positions: int
    batch_size: int
    steps_per_generation: int
    optimizer: OptimizerConfig
    loss: LossConfig
    evaluation: EvaluationSection
    checkpoint_keep: int
    export_every: int
    export_encoding: str
    raw: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False)

    KEYS = ("name", "seed", "generations", "network", "selfplay", "buffer", "training",
            "evaluation", "checkpoint", "export")

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        p = Path(path)
        return cls.from_dict(load_yaml(p), default_name=p.stem, base_dir=p.parent)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], default_name: str = "train",
                  base_dir: Path | None = None) -> TrainConfig:
        check_keys(values, cls.KEYS, "train config")
        network = _dataclass_from(NetworkConfig, values.get("network"), "network")
        if network.init is not None:
            init = Path(str(network.init)).expanduser()
            if not init.is_absolute() and base_dir is not None and not init.exists():
                init = base_dir / init
            check_user_file(init, "network.init file", error=ConfigError)
            network = dataclasses.replace(network, init=str(init))

        sp = dict(values.get("selfplay") or {})
        check_keys(sp, ("games", "batch_size", "max_plies", "adjudicate_material",
                        "material_value_scale", "openings", "player", "white", "black",
                        "nscl_schedule"), "selfplay")
        if "player" in sp:
            if "white" in sp or "black" in sp:
                raise ConfigError("selfplay: use `player` or `white`/`black`, not both")
            white = black = PlayerSpec.from_dict(sp["player"], "selfplay.player", "zerochess")
        elif "white" in sp and "black" in sp:
            white = PlayerSpec.from_dict(sp["white"], "selfplay.white", "white")
            black = PlayerSpec.from_dict(sp["black"], "selfplay.black", "black")
        else:
            white = black = PlayerSpec.from_dict({}, "selfplay.player", "zerochess")
        for side in (white, black):
            if side.is_engine:
                raise ConfigError("selfplay: players must search with the trained "
                                      "network, not an external engine")
        games = as_int(sp.get("games", 32), "selfplay.games", minimum=1)
        selfplay = SelfPlaySection(
            games=games,
            batch_size=as_int(sp.get("batch_size", min(games, 32)), "selfplay.batch_size", 1),
            max_plies=as_int(sp.get("max_plies", 120), "selfplay.max_plies", 1,
                             allow_none=True),
            openings=OpeningSpec.from_dict(sp.get("openings"), "selfplay.openings", base_dir),
            white=white, black=black,
            nscl_schedule=_dataclass_from(NsclScheduleConfig, sp.get("nscl_schedule"),
                                          "selfplay.nscl_schedule"),
            adjudicate_material=as_int(sp.get("adjudicate_material"),
                                       "selfplay.adjudicate_material", 1, allow_none=True),
            material_value_scale=_material_scale(sp.get("material_value_scale")))
        if selfplay.adjudicate_material is not None \
                and selfplay.material_value_scale is not None:
            raise ConfigError("selfplay: set adjudicate_material or material_value_scale, "
                              "not both")

        buf = dict(values.get("buffer") or {})
        check_keys(buf, ("window_games", "min_positions"), "buffer")
        tr = dict(values.get("training") or {})
        check_keys(tr, ("batch_size", "steps_per_generation", "optimizer", "loss"), "training")

        ev = dict(values.get("evaluation") or {})
        check_keys(ev, ("every", "games", "final_games", "batch_size", "max_plies", "nodes",
                        "search", "temperature", "openings", "opponents"), "evaluation")
        eval_player = PlayerSpec(
            name="trained",
            nodes=as_int(ev.get("nodes", white.nodes), "evaluation.nodes", minimum=1),
            search=search_config_from_dict(ev.get("search"), "evaluation.search"),
            temperature=temperature_from_value(
                ev.get("temperature", {"temperature": 1.0, "decay_moves": 10,
                                       "endgame_temperature": 0.1}), "evaluation.temperature"))
        opponents: list[str | PlayerSpec] = []
        raw_opponents = ev.get("opponents", ["initial", "builtin"])
        if not isinstance(raw_opponents, list):
            raise ConfigError("evaluation.opponents must be a list")
        for i, opp in enumerate(raw_opponents):
            if isinstance(opp, str):
                if opp not in BUILTIN_OPPONENTS:
                    raise ConfigError(f"evaluation.opponents[{i}]: unknown opponent {quote(opp)};"
                                          f" known: {', '.join(BUILTIN_OPPONENTS)} or a player")
                opponents.append(opp)
            else:
                spec = PlayerSpec.from_dict(opp, f"evaluation.opponents[{i}]", f"opponent{i}")
                if spec.name in ("trained", *BUILTIN_OPPONENTS):
                    raise ConfigError(f"evaluation.opponents[{i}]: name {quote(spec.name)} is "
                                          "reserved")
                opponents.append(spec)
        games_eval = as_int(ev.get("games", 20), "evaluation.games", minimum=0)
        evaluation = EvaluationSection(
            every=as_int(ev.get("every", 0), "evaluation.every", minimum=0),
            games=games_eval,
            final_games=as_int(ev.get("final_games", 100), "evaluation.final_games", 0),
            batch_size=as_int(ev.get("batch_size", max(1, min(games_eval or 20, 32))),
                              "evaluation.batch_size", minimum=1),
            max_plies=as_int(ev.get("max_plies", 200), "evaluation.max_plies", 1,
                             allow_none=True),
            player=eval_player,
            openings=OpeningSpec.from_dict(ev.get("openings"), "evaluation.openings", base_dir),
            opponents=tuple(opponents))

        ck = dict(values.get("checkpoint") or {})
        check_keys(ck, ("keep",), "checkpoint")
        ex = dict(values.get("export") or {})
        check_keys(ex, ("every", "encoding"), "export")
        encoding = str(ex.get("encoding", "linear16"))
        if encoding not in ENCODINGS:
            raise ConfigError(f"export.encoding must be one of {', '.join(ENCODINGS)}, "
                                  f"got {quote(encoding)}")
        return cls(
            name=str(values.get("name", default_name)),
            seed=as_int(values.get("seed", 0), "seed", minimum=0),
            generations=as_int(values.get("generations", 4), "generations", minimum=0),
            network=network, selfplay=selfplay,
            window_games=as_int(buf.get("window_games", 256), "buffer.window_games", 1),
            min_positions=as_int(buf.get("min_positions", 1), "buffer.min_positions", 1),
            batch_size=as_int(tr.get("batch_size", 256), "training.batch_size", minimum=1),
            steps_per_generation=as_int(tr.get("steps_per_generation", 32),
                                        "training.steps_per_generation", minimum=0),
            optimizer=_dataclass_from(OptimizerConfig, tr.get("optimizer"),
                                      "training.optimizer"),
            loss=_dataclass_from(LossConfig, tr.get("loss"), "training.loss"),
            evaluation=evaluation,
            checkpoint_keep=as_int(ck.get("keep", 2), "checkpoint.keep", minimum=1),
            export_every=as_int(ex.get("every", 1), "export.every", minimum=0),
            export_encoding=encoding,
            raw=dict(values))

    def to_dict(self) -> dict[str, Any]:
        """The resolved config (YAML-friendly), written next to the run's results."""
        def player(p: PlayerSpec) -> dict[str, Any]:
            return p.to_dict()

        return {
            "name": self.name, "seed": self.seed, "generations": self.generations,
            "network": asdict_plain(self.network),
            "selfplay": {
                "games": self.selfplay.games, "batch_size": self.selfplay.batch_size,
                "max_plies": self.selfplay.max_plies,
                "adjudicate_material": self.selfplay.adjudicate_material,
                "material_value_scale": self.selfplay.material_value_scale,
                "openings": asdict_plain(self.selfplay.openings),
                "white": player(self.selfplay.white), "black": player(self.selfplay.black),
                "nscl_schedule": asdict_plain(self.selfplay.nscl_schedule)},
            "buffer": {"window_games": self.window_games, "min_positions": self.min_positions},
            "training": {"batch_size": self.batch_size,
                         "steps_per_generation": self.steps_per_generation,
                         "optimizer": asdict_plain(self.optimizer),
                         "loss": asdict_plain(self.loss)},
            "evaluation": {
                "every": self.evaluation.every, "games": self.evaluation.games,
                "final_games": self.evaluation.final_games,
                "batch_size": self.evaluation.batch_size,
                "max_plies": self.evaluation.max_plies,
                "nodes": self.evaluation.player.nodes,
                "search": asdict_plain(self.evaluation.player.search),
                "temperature": asdict_plain(self.evaluation.player.temperature),
                "openings": asdict_plain(self.evaluation.openings),
                "opponents": [o if isinstance(o, str) else player(o)
                              for o in self.evaluation.opponents]},
            "checkpoint": {"keep": self.checkpoint_keep},
            "export": {"every": self.export_every, "encoding": self.export_encoding},
        }


__all__ = ["EvaluationSection", "NetworkConfig", "SelfPlaySection", "TrainConfig"]
