"""Several processes for real: two processes on localhost joined by ``jax.distributed``
(each with its own CPU device) play device self-play sharded over the global mesh
(``examples/multihost_selfplay.py``, the README's several-hosts recipe), and play exactly
the games one process plays alone."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

# three processes, each compiling the search: minutes of compile per process on 2 cores; not
# yet seen to finish inside its timeout on the shared CI-sized machine, so run it apart:
# python -m pytest tests/test_multihost.py -m slow
pytestmark = [pytest.mark.tier2, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "examples" / "multihost_selfplay.py"
SIZE = ["--games", "4", "--plies", "3", "--simulations", "8"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)  # one CPU device per process
    return env


def test_two_processes_play_the_games_of_one(tmp_path):
    port = _free_port()
    two = tmp_path / "two.json"
    procs = [subprocess.Popen(
        [sys.executable, str(SCRIPT), "--coordinator", f"127.0.0.1:{port}",
         "--num-processes", "2", "--process-id", str(i), *SIZE]
        + (["--out", str(two)] if i == 0 else []),
        env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for i in range(2)]
    try:
        logs = [p.communicate(timeout=1500)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), "\n----\n".join(log[-3000:] for log in logs)
    one = tmp_path / "one.json"
    run = subprocess.run([sys.executable, str(SCRIPT), *SIZE, "--out", str(one)], env=_env(),
                         capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    a, b = json.loads(two.read_text()), json.loads(one.read_text())
    assert (a["processes"], a["devices"]) == (2, 2)
    assert (b["processes"], b["devices"]) == (1, 1)
    assert len(a["moves"]) == 4 and all(len(g) == 3 for g in a["moves"])
    assert all(m >= 0 for g in a["moves"] for m in g)  # every ply found a move
    assert len({tuple(g) for g in a["moves"]}) == 4  # distinct games: a swapped shard shows
    assert a["moves"] == b["moves"]
