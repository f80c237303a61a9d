"""TensorBoard logging of training metrics, read back with a plain TFRecord reader."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

from zerochess.training.tensorboard import TensorBoardLog


def read_scalars(log_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """tag -> [(step, value)] from every event file under ``log_dir`` (TFRecord framing:
    u64 length, u32 crc, payload, u32 crc; payload = an ``Event`` protobuf)."""
    from tensorboardX.proto import event_pb2

    out: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(log_dir.rglob("events.out.tfevents.*")):
        data = path.read_bytes()
        pos = 0
        while pos < len(data):
            (length,) = struct.unpack("<Q", data[pos:pos + 8])
            event = event_pb2.Event.FromString(data[pos + 12:pos + 12 + length])
            pos += 12 + length + 4
            for value in event.summary.value:
                out.setdefault(value.tag, []).append((event.step, value.simple_value))
    return out


def test_rows_become_scalars_at_games_total(tmp_path):
    log = TensorBoardLog(tmp_path / "tb")
    log.row("train", {"generation": 1, "games_total": 32, "loss": 3.5, "steps": 40})
    log.row("train", {"generation": 2, "games_total": 64, "loss": 2.25, "steps": 40})
    log.row("eval", {"generation": 2, "games_total": 64, "opponent": "initial", "elo": 120.0,
                     "los": float("nan")})
    log.row("selfplay", {"generation": 1, "games_total": 32, "n_scl": "", "draws": 7})
    log.close()
    scalars = read_scalars(tmp_path / "tb")
    assert scalars["train/loss"] == [(32, 3.5), (64, 2.25)]
    assert scalars["eval/initial/elo"] == [(64, 120.0)]
    assert scalars["selfplay/draws"] == [(32, 7.0)]
    # not logged: the step/key columns, text, non-finite values
    assert not {"train/generation", "train/games_total", "selfplay/n_scl",
                "eval/initial/los", "eval/initial/opponent"} & set(scalars)
    assert all(math.isfinite(v) for vals in scalars.values() for _, v in vals)


def test_missing_tensorboardx_is_a_clear_error(monkeypatch, tmp_path):
    import builtins

    from zerochess.errors import UserError

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name.startswith("tensorboardX"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(UserError, match="tensorboardX"):
        TensorBoardLog(tmp_path / "tb")
