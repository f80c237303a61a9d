"""One-call analysis for notebooks and scripts: ``zerochess.analyse(...)``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from zerochess.errors import ConfigError, ModelError, PositionError, quote
from zerochess.neural import Model, load_model
from zerochess.positions import PositionLike, as_board
from zerochess.search.api import MAX_LEAVES, Searcher, check_tree_memory, check_workers
from zerochess.search.config import INFINITE_NSCL, SearchConfig
from zerochess.search.results import SearchResult
from zerochess.search.sizes import batch_size_bucket, tree_size_bucket
from zerochess.validation import MAX_INT32, as_choice, as_count, as_seed

SEARCHES = ("puct", "contempt", "muzero", "gumbel")
DEFAULT_CONTEMPT_LIMIT = 5


def search_config(search: str = "puct", contempt_limit: int | None = None,
                  **overrides: object) -> SearchConfig:
    """The SearchConfig of a named search variant (lc0 defaults, plus ``overrides``)."""
    as_choice(search, "search", SEARCHES)
    if contempt_limit is not None:
        contempt_limit = as_count(contempt_limit, "contempt limit", 1, INFINITE_NSCL)
        if search != "contempt":
            raise ConfigError("a contempt limit needs search='contempt'")
    values: dict[str, object] = {}
    if search == "contempt":
        values["n_scl"] = contempt_limit or DEFAULT_CONTEMPT_LIMIT
    elif search in ("muzero", "gumbel"):
        values.update(selection="alphazero", policy_temperature=1.0)
    values.update(overrides)
    try:
        return SearchConfig.from_dict(values)
    except TypeError as err:
        raise ConfigError(str(err)) from None


@functools.lru_cache(maxsize=4)
def _cached_model(spec: str) -> Model:
    return load_model(spec)  # ModelError / ModelFileError on a bad spec or file


@functools.lru_cache(maxsize=8)
def _cached_searcher(model: Model, max_nodes: int, workers: int | None, leaves: int,
                     cache_size: int, rules: str | None = None) -> Searcher:
    return Searcher(model, max_nodes=max_nodes, num_workers=workers, leaves_per_step=leaves,
                    cache_size=cache_size, rules=rules)


def auto_leaves(positions: int) -> int:
    """The default leaves per step for a batch of ``positions``: 16 below 16 positions, else
    1 (enough trees to fill a batch one leaf each)."""
    return 16 if positions < 16 else 1


def analyse(positions: PositionLike | Sequence[PositionLike], visits: int = 800,
            search: str | None = None, contempt_limit: int | None = None,
            model: str | Model = "builtin", seed: int = 0,
            config: SearchConfig | None = None,
            progress: Callable[[int, int], None] | None = None,
            workers: int | None = None, leaves_per_step: int | None = None,
            cache_size: int = 0, rules: str | None = None) -> list[SearchResult]:
    """Search one or many positions as one batch.

    Args:
      positions: a board, a FEN (or "startpos"), a (FEN, [uci moves]) pair, or a list of them.
      visits: simulations per position (the root ends with visits + 1).
      search: "puct" (lc0, the default), "contempt" (search-contempt), "muzero" or
        "gumbel" (mctx).
      contempt_limit: N_scl for search="contempt" (default 5).
      model: "builtin", "resnet:BxF", a path to an lc0 .pb.gz, or a Model.
      config: a full SearchConfig instead of ``search``/``contempt_limit`` (giving both
        is an error: one would be ignored).
      progress: called as ``progress(done, total)`` while the search runs.
      workers: host move-generation processes (None: one per core; 0: inline).
      leaves_per_step: leaves gathered per position and step (lc0's minibatch). Default:
        ``auto_leaves(len(positions))``, 16 below 16 positions (one position then fills a
        network batch), else 1 (the exact one-leaf search).
      cache_size: entries of the evaluation cache (0 = none).
      rules: where the chess rules run: "host" (python-chess) or "device" (jax: the whole
        search is one compiled program); None: device on an accelerator, host on a CPU.
        Both give the same results. mctx's policies ("muzero", "gumbel") use the host's.

    Returns:
      One SearchResult per position (``.to_dataframe()`` for a table).

    Nearby requests share compiled programs: the tree size (``visits + 1`` nodes) and the
    number of positions are rounded up to ``zerochess.search.sizes`` buckets (steps of
    at most 25%; extra positions are copies whose results are dropped). Results do not
    depend on the rounding.
    """
    if isinstance(positions, (list, tuple)) and not (
            isinstance(positions, tuple) and len(positions) == 2
            and isinstance(positions[0], str) and not isinstance(positions[1], str)):
        items = list(positions)
    else:
        items = [positions]
    if not items:
        raise PositionError("no positions to analyse")
    boards = []
    for i, p in enumerate(items):
        try:
            boards.append(as_board(p))
        except PositionError as err:
            raise PositionError(f"position {i}: {err}" if len(items) > 1 else str(err)) from None
    visits = as_count(visits, "visits", 1, MAX_INT32 - 1)
    seed = as_seed(seed)
    if config is not None and (search is not None or contempt_limit is not None):
        given = " and ".join(name for name, value in (("search", search),
                                                      ("contempt_limit", contempt_limit))
                             if value is not None)
        raise ConfigError(f"give either config or {given}, not both: config is a whole "
                          f"SearchConfig and {given} would be ignored")
    search = "puct" if search is None else search
    as_choice(search, "search", SEARCHES)
    if progress is not None and not callable(progress):
        raise ConfigError(f"progress must be a function or None, got {quote(progress)}")
    if workers is not None:
        workers = check_workers(workers)
    if config is not None and not isinstance(config, SearchConfig):
        raise ConfigError(f"config must be a SearchConfig, got {quote(config)}")
    cfg = config if config is not None else search_config(search, contempt_limit)
    mctx = search in ("muzero", "gumbel") and config is None
    if leaves_per_step is None:
        leaves_per_step = auto_leaves(len(boards))
    leaves_per_step = as_count(leaves_per_step, "leaves per step", 1, MAX_LEAVES)
    cache_size = as_count(cache_size, "cache size", 0, MAX_INT32)
    if rules is not None:
        as_choice(rules, "rules", ("host", "device"))
    # shapes in buckets: a nearby visit budget or batch reuses the compiled programs
    nodes = tree_size_bucket(visits + 1)
    count = len(boards)
    padded = boards + [boards[-1]] * (batch_size_bucket(count) - count)
    # before loading anything: the trees must fit (mctx's nodes hold about twice as much)
    check_tree_memory(len(padded), nodes, "visits",
                      node_bytes=(2 if mctx else 1) * Searcher.node_bytes())
    if isinstance(model, Model):
        net = model
    elif isinstance(model, str):
        net = _cached_model(model)
    else:
        raise ModelError(f"model must be a spec string or a Model, got {quote(model)}")
    searcher = _cached_searcher(net, nodes, workers, leaves_per_step, cache_size,
                                "host" if mctx else rules)
    if mctx:
        from zerochess.search.mctx_policies import MctxSearcher

        return MctxSearcher(searcher, search).search(padded, cfg, num_simulations=visits,
                                                     seed=seed)[:count]
    batch = searcher.init(padded, cfg, seed)
    report = None if progress is None else (
        lambda done, _: progress(done // len(padded), visits))
    batch = searcher.run(batch, visits, progress=report)
    if progress is not None:
        progress(visits, visits)
    return searcher.results(batch)[:count]
