"""Hand mutation check: break one line of the code, run the test that should catch it,
restore the file. Not a test module (pytest does not collect it); run it by hand after
changing a test or the code it guards:

    python tests/mutation_check.py                 # every mutation (tens of minutes)
    python tests/mutation_check.py stats puct      # those whose name contains a word

Prints one line per mutation: CAUGHT (the test failed) or MISSED (it passed, or errored
some other way). The original file text is written back whatever happens; a mutation
whose line is no longer in the file is reported as STALE (update it here).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (name, file, original text, mutated text, test that must fail)
MUTATIONS = [
    ("stats: Wilson centre", "src/zerochess/games/stats.py",
     "centre = (p + z2 / (2 * n)) / (1 + z2 / n)", "centre = p", "tests/test_stats.py"),
    ("stats: trend statistic", "src/zerochess/games/stats.py",
     "t = sum(x * (k - n * pbar) for k, n, x in rows)", "t = sum(x * k for k, n, x in rows)",
     "tests/test_stats.py"),
    ("stats: (w+l)/d interval ends swapped", "src/zerochess/games/stats.py",
     "return 1.0 / hi - 1.0, (math.inf if lo <= 0.0 else 1.0 / lo - 1.0)",
     "return 1.0 / lo - 1.0 if lo > 0 else math.inf, 1.0 / hi - 1.0", "tests/test_stats.py"),
    ("wdl_counts: wins are black wins", "src/zerochess/experiments/common.py",
     'w = sum(1 for r in rows if r["result"] == "1-0")',
     'w = sum(1 for r in rows if r["result"] == "0-1")', "tests/test_stats.py"),
    ("move rule: weights N^T instead of lc0's N^(1/T)", "src/zerochess/search/move_choice.py",
     "1.0 / jnp.maximum(temperature, 1e-30)), 0.0)", "jnp.maximum(temperature, 1e-30)), 0.0)",
     "tests/test_move_choice.py::test_the_move_rule_is_lc0s_rule"),
    ("move rule: the value cutoff ignored", "src/zerochess/search/move_choice.py",
     "ok = valid & (qq >= qq[jnp.argmax(n)] - cutoff)", "ok = valid",
     "tests/test_move_choice.py::test_the_move_rule_is_lc0s_rule"),
    ("rundir: resume under other versions not refused", "src/zerochess/runs.py",
     "    if not force:", "    if False:", "tests/test_provenance.py"),
    ("provenance: never dirty", "src/zerochess/provenance.py",
     '"git_dirty": bool(diff),', '"git_dirty": False,', "tests/test_provenance.py"),
    ("match: colour ignored in the tally", "src/zerochess/games/match.py",
     's = s if r["white"] == player else 1.0 - s', "s = s", "tests/test_match.py"),
    ("encoding: rule50 plane scaled", "src/zerochess/chess/planes.py",
     "xp.asarray(rule50).astype(xp.float32) * ones,",
     "xp.asarray(rule50).astype(xp.float32) / 99.0 * ones,", "tests/test_lc0_recorded.py"),
    ("lc0 loader: dense weights transposed wrongly", "src/zerochess/neural/lc0_weights.py",
     'return {"kernel": np.ascontiguousarray(w_flat.reshape(outputs, -1).T), "bias": b}',
     'return {"kernel": np.ascontiguousarray(w_flat.reshape(-1, outputs)), "bias": b}',
     "tests/test_lc0_recorded.py"),
    ("puct: sqrt(N) instead of lc0's sqrt(N - 1)", "src/zerochess/search/selection.py",
     "puct_mult = cpuct * jnp.sqrt(jnp.maximum(n_parent - 1.0, 1.0))",
     "puct_mult = cpuct * jnp.sqrt(jnp.maximum(n_parent, 1.0))",
     "tests/test_search_reference.py::test_root_visits_equal_reference"),
    ("fpu: reduction added instead of subtracted", "src/zerochess/search/selection.py",
     "parent_q - fpu_value * jnp.sqrt(visited_policy)",
     "parent_q + fpu_value * jnp.sqrt(visited_policy)",
     "tests/test_search_reference.py::test_root_visits_equal_reference"),
    ("read path: an unvisited move's Q shown as its own, not the FPU",
     "src/zerochess/uci/info.py",
     "text += _stats(None, 0.0, 0.0, float(res.q_shown[i]))",
     "text += _stats(None, 0.0, 0.0, float(res.q[i]))",
     "tests/test_read_path.py::test_uci_analysis_and_results_agree_after_a_search"),
    ("read path: U without the visits in flight", "src/zerochess/search/view.py",
     "s=q_shown + terms.u + utility,",
     "s=q_shown + terms.u * (1.0 + stats.started) / (1.0 + stats.visits) + utility,",
     "tests/test_read_path.py::test_readers_agree_mid_search_with_visits_in_flight"),
    ("search-contempt: frozen sampling on the root player's nodes",
     "src/zerochess/search/selection.py",
     "is_frozen = (depth % 2 == 1) & (jnp.sum(edges.frozen) > 0)",
     "is_frozen = (depth % 2 == 0) & (jnp.sum(edges.frozen) > 0)",
     "tests/test_search_reference.py::test_root_visits_equal_reference"),
    ("search: a mate is scored as a draw", "src/zerochess/search/tree.py",
     "value = jnp.where(mate, 1, 0)", "value = jnp.where(mate, 0, 0)",
     "tests/test_search_properties.py::test_mate_in_one_wins_the_visits_on_builtin"),
    ("host boundary: copy baseline forgets the move", "src/zerochess/bench/host_boundary.py",
     "            board = parent.copy(stack=False)\n            board.push(move)\n",
     "            board = parent.copy(stack=False)\n",
     "tests/test_bench.py::test_host_boundary_baselines_do_the_same_work"),
    ("lc0 speed: summed instead of busiest process", "src/zerochess/bench/lc0_peer.py",
     "search_time_s=max(sum(s.time_s for s in r) for r in results),",
     "search_time_s=sum(sum(s.time_s for s in r) for r in results),",
     "tests/test_lc0_peer.py::test_measure_lc0_splits_positions_and_takes_the_busiest_process"),
    ("curve: worst peer layout counts", "src/zerochess/bench/throughput.py",
     'best = max(measured, key=lambda t: t["sims_per_s"]) if measured else None',
     'best = min(measured, key=lambda t: t["sims_per_s"]) if measured else None',
     "tests/test_bench.py::test_harness_figures_curve_and_ratio_lines"),
]


def main(words: list[str]) -> int:
    missed = 0
    for name, path, old, new, test in MUTATIONS:
        if words and not any(w in name for w in words):
            continue
        f = ROOT / path
        text = f.read_text()
        if text.count(old) != 1:
            print(f"STALE: {name}: the line occurs {text.count(old)} times in {path}")
            missed += 1
            continue
        f.write_text(text.replace(old, new))
        try:
            proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", test],
                                  cwd=ROOT, capture_output=True, text=True)
        finally:
            f.write_text(text)
        out = proc.stdout.strip().splitlines()
        tail = out[-1] if out else proc.stderr.strip()[-200:]
        caught = proc.returncode == 1
        missed += not caught
        print(f"{'CAUGHT' if caught else f'MISSED rc={proc.returncode}'}: {name}: {tail}",
              flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
