"""A network search split into shards (the default for networks: 2 shards, overlapped
lanes) where one shard has nothing to evaluate: zero simulations asked of its trees. This
used to call the model on an empty batch (ZeroDivisionError inside a reshape); the trees
must instead come out as the single-shard search grows them."""

from __future__ import annotations

import chess
import numpy as np

from zerochess import SearchConfig, Searcher, load_model

BOARDS = [chess.Board(),
          chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3")] * 9
COUNTS = [12] * 9 + [0] * 9  # the second shard's trees take no simulations


def _grow(shards: int, counts) -> list:
    # test_pipeline_threads' shapes (18 trees of 33 nodes, 1 or 2 shards): one compile
    searcher = Searcher(load_model("resnet:1x8"), max_nodes=33, shards=shards)
    batch = searcher.init(BOARDS, [SearchConfig()] * len(BOARDS), seed=3)
    assert len(batch.shards) == shards
    batch = searcher.run(batch, 0)  # nothing asked of any tree
    batch = searcher.run(batch, counts)
    return searcher.results(batch)


def test_a_shard_without_work_runs_like_one_shard():
    two = _grow(2, COUNTS)
    one = _grow(1, COUNTS)
    for a, b, n in zip(two, one, COUNTS, strict=True):
        assert int(np.sum(a.visits)) == n
        np.testing.assert_array_equal(a.visits, b.visits)
        assert a.best_move == b.best_move
