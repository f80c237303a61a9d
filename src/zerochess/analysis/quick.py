"""One-call analysis for notebooks and scripts: ``zerochess.analyse(...)``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from zerochess.errors import UserError
from zerochess.neural import Model, load_model
from zerochess.positions import PositionLike, as_board
from zerochess.search.api import Searcher
from zerochess.search.config import SearchConfig
from zerochess.search.results import SearchResult

SEARCHES = ("puct", "contempt", "muzero", "gumbel")
DEFAULT_CONTEMPT_LIMIT = 5


def search_config(search: str = "puct", contempt_limit: int | None = None,
                  **overrides: object) -> SearchConfig:
    """The SearchConfig of a named search variant (lc0 defaults, plus ``overrides``)."""
    if search not in SEARCHES:
        raise UserError(f"unknown search {search!r}; choose from {', '.join(SEARCHES)}")
    if contempt_limit is not None and contempt_limit < 1:
        raise UserError(f"contempt limit must be >= 1, got {contempt_limit}")
    values: dict[str, object] = {}
    if search == "contempt":
        values["n_scl"] = contempt_limit or DEFAULT_CONTEMPT_LIMIT
    elif search in ("muzero", "gumbel"):
        values.update(selection="alphazero", policy_temperature=1.0)
    values.update(overrides)
    try:
        return SearchConfig.from_dict(values)
    except (TypeError, ValueError) as err:
        raise UserError(str(err)) from None


@functools.lru_cache(maxsize=4)
def _cached_model(spec: str) -> Model:
    try:
        return load_model(spec)
    except FileNotFoundError as err:
        raise UserError(f"model file not found: {err.filename or spec}") from None
    except ValueError as err:
        raise UserError(str(err)) from None


@functools.lru_cache(maxsize=8)
def _cached_searcher(model: Model, max_nodes: int, workers: int | None, leaves: int,
                     cache_size: int) -> Searcher:
    return Searcher(model, max_nodes=max_nodes, num_workers=workers, leaves_per_step=leaves,
                    cache_size=cache_size)


def auto_leaves(positions: int) -> int:
    """The default leaves per step for a batch of ``positions``: 16 below 16 positions, else
    1 (enough trees to fill a batch one leaf each)."""
    return 16 if positions < 16 else 1


def analyse(positions: PositionLike | Sequence[PositionLike], visits: int = 800,
            search: str = "puct", contempt_limit: int | None = None,
            model: str | Model = "builtin", seed: int = 0,
            config: SearchConfig | None = None,
            progress: Callable[[int, int], None] | None = None,
            workers: int | None = None, leaves_per_step: int | None = None,
            cache_size: int = 0) -> list[SearchResult]:
    """Search one or many positions as one batch.

    Args:
      positions: a board, a FEN (or "startpos"), a (FEN, [uci moves]) pair, or a list of them.
      visits: simulations per position (the root ends with visits + 1).
      search: "puct" (lc0), "contempt" (search-contempt), "muzero" or "gumbel" (mctx).
      contempt_limit: N_scl for search="contempt" (default 5).
      model: "builtin", "resnet:BxF", a path to an lc0 .pb.gz, or a Model.
      config: a full SearchConfig instead of ``search``/``contempt_limit``.
      progress: called as ``progress(done, total)`` while the search runs.
      workers: host move-generation processes (None: one per core; 0: inline).
      leaves_per_step: leaves gathered per position and step (lc0's minibatch). Default:
        ``auto_leaves(len(positions))``, 16 below 16 positions (one position then fills a
        network batch), else 1 (the exact one-leaf search).
      cache_size: entries of the evaluation cache (0 = none).

    Returns:
      One SearchResult per position (``.to_dataframe()`` for a table).
    """
    if isinstance(positions, (list, tuple)) and not (
            isinstance(positions, tuple) and len(positions) == 2
            and isinstance(positions[0], str) and not isinstance(positions[1], str)):
        items = list(positions)
    else:
        items = [positions]
    boards = [as_board(p) for p in items]
    if not boards:
        raise UserError("no positions to analyse")
    if visits < 1:
        raise UserError(f"visits must be >= 1, got {visits}")
    net = model if isinstance(model, Model) else _cached_model(model)
    cfg = config if config is not None else search_config(search, contempt_limit)
    if workers is not None and workers < 0:
        raise UserError(f"workers must be >= 0, got {workers}")
    if leaves_per_step is None:
        leaves_per_step = auto_leaves(len(boards))
    if leaves_per_step < 1:
        raise UserError(f"leaves per step must be >= 1, got {leaves_per_step}")
    if cache_size < 0:
        raise UserError(f"cache size must be >= 0, got {cache_size}")
    searcher = _cached_searcher(net, visits + 1, workers, leaves_per_step, cache_size)
    if search in ("muzero", "gumbel") and config is None:
        from zerochess.search.mctx_policies import MctxSearcher

        return MctxSearcher(searcher, search).search(boards, cfg, num_simulations=visits,
                                                     seed=seed)
    try:
        batch = searcher.init(boards, cfg, seed)
    except ValueError as err:
        raise UserError(str(err)) from None
    count = len(boards)
    report = None if progress is None else (lambda done, _: progress(done // count, visits))
    batch = searcher.run(batch, visits, progress=report)
    if progress is not None:
        progress(visits, visits)
    return searcher.results(batch)
