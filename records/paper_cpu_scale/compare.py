"""The comparisons across the CPU-scale paper records (Fig. 2, Fig. 3, Table 2 on
Maia-1900) that no single experiment's summary makes: draw-rate differences with
Newcombe 95% intervals and two-sided two-proportion z tests.

    python records/paper_cpu_scale/compare.py records/paper_cpu_scale/compare.json

Reads `records/contempt_wdl/maia-small-seed0/contempt_wdl.csv` and
`records/temperature_wdl/maia-small-seed0/temperature_wdl.csv`; prints a markdown table
and writes the rows as JSON to argv[1].
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

from zerochess.experiments.intervals import difference_interval, trend_test, wilson_interval

ROOT = Path(__file__).resolve().parents[2]
FIG2 = ROOT / "records/contempt_wdl/maia-small-seed0/contempt_wdl.csv"
FIG3 = ROOT / "records/temperature_wdl/maia-small-seed0/temperature_wdl.csv"


def rows(path: Path, key: str) -> dict[str, dict[str, str]]:
    with path.open() as f:
        return {r[key]: r for r in csv.DictReader(f)}


def compare(label: str, a_name: str, a: dict[str, str], b_name: str, b: dict[str, str]
            ) -> dict[str, object]:
    """Draw rate of ``a`` minus that of ``b``."""
    ka, na, kb, nb = int(a["draws"]), int(a["games"]), int(b["draws"]), int(b["games"])
    lo, hi = difference_interval(ka, na, kb, nb)
    test = trend_test([ka, kb], [na, nb], [0.0, 1.0])
    return {"comparison": label, "a": a_name, "b": b_name,
            "a_draws": ka, "a_games": na, "a_draw_rate": ka / na,
            "a_draw_rate_ci": wilson_interval(ka, na),
            "b_draws": kb, "b_games": nb, "b_draw_rate": kb / nb,
            "b_draw_rate_ci": wilson_interval(kb, nb),
            "difference": ka / na - kb / nb, "difference_ci": (lo, hi),
            "z": -test.z, "p": test.p_value}


def main(out: str) -> None:
    fig2 = rows(FIG2, "n_scl")
    fig3 = rows(FIG3, "schedule")
    inf = max(fig2, key=int)
    table = [
        compare("Fig. 3: does the high temperature lower PUCT's draw rate?",
                "PUCT tau2", fig3["tau2"], "PUCT tau1", fig3["tau1"]),
        compare("Fig. 2: does N_scl 5 lower the draw rate against PUCT (same temperature)?",
                "SC N_scl 5", fig2["5"], "PUCT (N_scl 10^6)", fig2[inf]),
        compare("Fig. 2: N_scl 1 against PUCT (same temperature)",
                "SC N_scl 1", fig2["1"], "PUCT (N_scl 10^6)", fig2[inf]),
        compare("Fig. 3's claim: does PUCT at tau2 reach SC N_scl 5's draw rate at low "
                "temperature?", "PUCT tau2", fig3["tau2"], "SC N_scl 5", fig2["5"]),
        compare("Consistency: PUCT at tau1 (Fig. 3) against PUCT at the sc schedule "
                "(Fig. 2; tau1 without its move-40 cutoff)",
                "PUCT tau1", fig3["tau1"], "PUCT (N_scl 10^6)", fig2[inf]),
    ]
    finite = [k for k in sorted(fig2, key=int) if k != inf]
    trend = trend_test([int(fig2[k]["draws"]) for k in finite],
                       [int(fig2[k]["games"]) for k in finite],
                       [math.log10(int(k)) for k in finite])
    extra = {"comparison": "Fig. 2 without the N_scl 10^6 point (post hoc): trend of the "
                           "draw rate in log10(N_scl) over N_scl " + ", ".join(finite),
             "z": trend.z, "p": trend.p_value}
    print(f"{extra['comparison']}: Cochran-Armitage z = {trend.z:+.2f}, two-sided "
          f"p = {trend.p_value:.3g}\n")
    print("| comparison | a: draws/games | b: draws/games | a - b draw rate [95%] | z | p |")
    print("|---|---|---|---|---|---|")
    for r in table:
        lo, hi = r["difference_ci"]
        print(f"| {r['comparison']} | {r['a']}: {r['a_draws']}/{r['a_games']} | "
              f"{r['b']}: {r['b_draws']}/{r['b_games']} | {r['difference']:+.3f} "
              f"[{lo:+.3f}, {hi:+.3f}] | {r['z']:+.2f} | {r['p']:.2g} |")
    Path(out).write_text(json.dumps({"comparisons": table, "trend_without_infinity": extra},
                                    indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
