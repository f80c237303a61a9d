"""Searcher shapes shared by several test files.

A search program is compiled for its shapes: the network's architecture, the nodes per
tree, the edge pool, the leaves per step, the trees per shard and the evaluation cache.
Each distinct shape costs 8-15 compiled programs, most of the test suite's time, while the
compiled programs themselves are shared by every searcher of the same shapes, in this
process and (through the program store on disk) in every other. So test files that search
alike use the searchers below, of one shape each, instead of sizes of their own; a test that
needs other shapes (a full tree, a small edge pool) keeps its own.

- ``builtin_searcher()``: the built-in evaluator, 1,200 nodes, one leaf per step, one
  shard (``test_certainty``, ``test_mate_check``: batches of the 8 mate puzzles, or one
  position);
- ``toy_searcher(leaves)``: the seeded linear network, 400 nodes, one shard of one group
  (``test_certainty``, ``test_mate_check``: the 9 ``TOY_BOARDS``);
- ``NODES``: the tree size of the linear network's one-shard searches of up to 150
  simulations (``test_reuse``, ``test_move_filter``, ``test_smart_pruning``,
  ``test_kld_stop``).

Besides these, ``test_mctx`` searches ``test_search_reference``'s shapes (50 trees of 41
nodes), ``test_builtin`` ``test_search_properties``' (6 trees of 65 nodes),
``test_search_idle_shard`` ``test_pipeline_threads``' (18 trees of 33 nodes) and
``test_multileaf`` 8 trees of 33 nodes at every width it can.
"""

from __future__ import annotations

import functools

from zerochess.chess.expander import Expander
from zerochess.neural import load_model
from zerochess.neural.toy import linear_model
from zerochess.search.api import Searcher

TOY_MODEL = linear_model(seed=3)


@functools.cache
def builtin_searcher() -> Searcher:
    return Searcher(load_model("builtin"), max_nodes=1200, leaves_per_step=1,
                    expander=Expander(0), groups=1, shards=1)


@functools.cache
def toy_searcher(leaves: int) -> Searcher:
    return Searcher(TOY_MODEL, max_nodes=400, leaves_per_step=leaves, expander=Expander(0),
                    groups=1, shards=1)

# nodes per tree of the linear network's searches of up to 150 simulations, one leaf per
# step, one shard (test_reuse, test_move_filter, test_smart_pruning, test_kld_stop: their
# searches of two trees share one set of programs)
NODES = 160
