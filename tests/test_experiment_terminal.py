"""The main job's terminal output (issue 38): a narrow table for an 80-column terminal (the
wide one stays in summary.md), one compile figure, a "next:" line. Built from fabricated
games: no search runs here."""

from __future__ import annotations

import json
import math
from pathlib import Path

from zerochess.cli.experiment import terminal_summary
from zerochess.experiments import contempt_wdl, get_experiment
from zerochess.experiments.common import throughput_note, wdl_counts, write_csv
from zerochess.experiments.terminal import WIDTH, next_line, terminal_text, wrap_lines
from zerochess.games.loop import RunStats

GAMES = {  # N_scl -> results of its self-play games
    1: ["1-0", "1-0", "0-1", "1/2-1/2"],
    5: ["1-0", "1/2-1/2", "1/2-1/2", "0-1"],
    1000000: ["1/2-1/2", "1/2-1/2", "1/2-1/2", "1-0"],
}
CFG = {"nodes": 16, "games_per_point": 4, "max_plies": 60, "n_scl": list(GAMES)}


def _table() -> list[dict]:
    table = []
    for n_scl, results in GAMES.items():
        rows = [{"result": r, "termination": "checkmate" if r != "1/2-1/2" else "move_cap",
                 "plies": 40 + i} for i, r in enumerate(results)]
        table.append({"n_scl": n_scl, **wdl_counts(rows)})
    return table


def _run_folder(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    table = _table()
    write_csv(out / "contempt_wdl.csv", table)
    body = contempt_wdl.summarize(table, CFG)
    (out / "summary.md").write_text(f"# {contempt_wdl.EXPERIMENT.title}\n\n{body}")
    return out


def test_the_wide_table_stays_in_summary_md_and_the_terminal_gets_a_narrow_one(tmp_path):
    out = _run_folder(tmp_path)
    summary = (out / "summary.md").read_text()
    assert max(len(line) for line in summary.splitlines() if line.startswith("|")) > WIDTH
    text = terminal_text(summary, Path("results/contempt_wdl/tiny-seed0"),
                         contempt_wdl.narrow(out))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= WIDTH, [ln for ln in lines if len(ln) > WIDTH]
    assert not any(line.startswith("|") for line in lines)
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["N_scl", "games"])
    rows = {line.split()[0]: line.split() for line in lines[header + 1:header + 4]}
    # N_scl 1: two white wins, one draw, one black win -> (w+l)/d = 3 / 1
    assert rows["1"][1:4] == ["4", "2-1-1", "3.00"]
    assert rows["5"][1:4] == ["4", "1-2-1", "1.00"]
    assert rows["PUCT"][1:4] == ["4", "1-3-0", f"{1 / 3:.2f}"]
    assert "plot: results/contempt_wdl/tiny-seed0/contempt_wdl.png" in lines
    assert "(all columns: results/contempt_wdl/tiny-seed0/summary.md)" in lines


def test_a_wide_table_without_a_narrow_one_becomes_wrapped_rows():
    wide = "| " + " | ".join(f"column_{i}" for i in range(12)) + " |"
    md = "\n".join([wide, "|" + "---|" * 12, "| " + " | ".join(["12345"] * 12) + " |"])
    text = terminal_text(md, Path("out"))
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    assert text.startswith("column_0 12345: column_1 12345, column_2 12345")


def test_one_compile_figure():
    stats = RunStats(games=8, positions=400, nodes=6400, seconds=80.0, compile_seconds=0.0)
    note = throughput_note([stats], warmup_compile_s=47.0)
    assert "compiling 47 s, in the warm-up before the games" in note
    assert "0 s of it compiling" not in note and "compiling 0 s" not in note
    both = throughput_note([RunStats(games=8, positions=400, nodes=6400, seconds=80.0,
                                     compile_seconds=12.0)], warmup_compile_s=47.0)
    assert "compiling 59 s in all (47 s in the warm-up" in both


def test_next_line_names_the_next_scale_its_size_pace_and_estimate(tmp_path):
    out = _run_folder(tmp_path)
    (out / "throughput.json").write_text(json.dumps(
        {"games": 12, "positions": 2048, "nodes": 2048 * 16, "seconds": 100.0}))
    text = terminal_summary(get_experiment("contempt_wdl"), out, "tiny", None, None)
    # (a line naming the run folder may be longer: here a temporary path)
    assert max(len(line) for line in text.splitlines() if str(out) not in line) <= WIDTH
    nxt = text[text.index("next: "):]
    assert nxt.startswith("next: zerochess experiment contempt_wdl --scale small\n")
    words = " ".join(nxt.split())
    # the small scale (configs/experiment_contempt_wdl.yaml): 8 N_scl x 16 games of 128
    # nodes a move, 160 plies assumed per game: 20,480 positions; at this run's 20.48
    # positions/s, 1000 s; its trees hold 8x the nodes of this run's 16
    assert math.isclose(8 * 16 * 160 / (2048 / 100.0), 1000.0)
    assert "128 games, 20,480 positions of 128 nodes" in words
    assert "at this run's 20.5 positions/s 17 min, longer with trees 8x this run's" in words
    assert "--estimate measures its time on this machine first" in words
    # an experiment without a plan has no --estimate: the line does not offer it
    assert next_line("odds", "tiny", 3, None, 10.0) == "next: zerochess experiment odds " \
        "--scale small --seed 3"
    last = next_line("contempt_wdl", "full", 0, None, None)
    assert "largest" in last and max(len(x) for x in last.splitlines()) <= WIDTH


def test_progress_is_plain_lines_when_stderr_is_not_a_terminal(capsys):
    from zerochess.games.loop import _Progress

    bar = _Progress(25, 5, "contempt_wdl", True)  # a resumed run: 5 of 25 already played
    for _ in range(20):
        bar.update(1, 1234.5, 12.3)
    bar.close()
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err and "\u2026" not in err
    lines = err.splitlines()
    done = [int(line.split()[1].split("/")[0]) for line in lines]
    assert 2 <= len(lines) <= 11 and done == sorted(done) and done[-1] == 25
    assert all(line.startswith("contempt_wdl: ") and len(line) <= WIDTH for line in lines)
    assert "1,234 nodes/s" in lines[-1] and "left" not in lines[-1]


def test_wrap_lines_keeps_each_line_and_its_indent():
    text = "Expected run time " + "word " * 30 + "\n  measured: " + "x " * 60 + "\n\nend"
    out = wrap_lines(text)
    assert max(len(line) for line in out.splitlines()) <= WIDTH
    assert out.split() == text.split()
    second = out.splitlines()
    start = next(i for i, line in enumerate(second) if line.startswith("  measured"))
    assert second[start + 1].startswith("    x")


def _bar_line(width: int, description: str, done: int, total: int) -> str:
    """The progress bar's line as a terminal ``width`` columns wide shows it."""
    import io

    from rich.console import Console
    from rich.progress import Progress

    from zerochess.games.loop import _progress_columns

    out = io.StringIO()
    progress = Progress(*_progress_columns(width), transient=False, auto_refresh=False,
                        console=Console(file=out, width=width, force_terminal=False))
    progress.add_task(description, total=total, completed=done, nps="12,345", pps="123.4")
    progress.start()
    progress.refresh()
    progress.stop()
    return out.getvalue().strip().splitlines()[-1]


def test_the_progress_bar_keeps_its_eta_whole_in_an_80_column_terminal():
    # rich squeezes columns that do not fit and cuts the time to "0:00:…" (the fresh-clone
    # walk-through saw "ETA -:--:…" for the whole main job at 80 columns)
    import re

    for width in (80, 120):
        for name in ("contempt_wdl", "contempt_vs_temperature"):  # the longest experiment
            line = _bar_line(width, name, 100, 128)
            assert "…" not in line and len(line) <= width, line
            assert re.search(r"ETA (-:--:--|\d+:\d\d:\d\d) \d+:\d\d:\d\d$", line), line
            assert name in line and "100/128 games" in line and "123.4 pos/s" in line
    assert "nodes/s" in _bar_line(120, "contempt_wdl", 1, 8)  # wide: every rate


def test_plain_progress_leaves_the_compile_out_of_the_time_left(capsys, monkeypatch):
    """A run that compiles for 280 s and then plays a game every 2 s: the first line gives
    no time left (the walk-through's --rules device run printed "~0:32:42 left" after its
    compile and finished 2 s later), the next ones 2 s per game left."""
    from zerochess.games import loop

    clock = iter([0.0] + [280.0 + 2 * i for i in range(100)])
    now = {"t": 0.0}

    def perf_counter():
        return now["t"]

    monkeypatch.setattr(loop.time, "perf_counter", perf_counter)
    bar = loop._PlainProgress(10, 0, "selfplay_tiny", interval=1e9)
    next(clock)
    for _ in range(10):
        now["t"] = next(clock)
        bar.update(1, 1900.0, 120.0)
    bar.stop()
    lines = capsys.readouterr().err.splitlines()
    # a line at once, so that a silent compile does not look like a hang
    assert lines[0] == "selfplay_tiny: 0/10 games; compiling or loading the search first"
    assert lines[1].startswith("selfplay_tiny: 1/10 games") and "left" not in lines[1]
    assert lines[2].startswith("selfplay_tiny: 2/10 games")
    assert lines[2].endswith("0:04:42 elapsed, ~0:00:16 left")  # 8 games at 2 s each
    assert "left" not in lines[-1] and lines[-1].startswith("selfplay_tiny: 10/10 games")


def test_the_selfplay_summary_line_names_its_compile_time():
    """The walk-through's --rules device run ended with "1.6 positions/s, 25 nodes/s" while
    its progress said 1,871 nodes/s: 279 of its 282 s were the first compile."""
    from zerochess.cli.selfplay import summary_line

    s = {"seconds": 282.1, "compile_seconds": 278.85, "positions_per_s": 1.581,
         "nodes_per_s": 25.296, "games_per_hour": 102.09}
    assert summary_line(8, Path("runs/x/games.pgn"), 8, s) == (
        "8 games in runs/x/games.pgn (8 played now in 282 s, 279 s of it compiling)\n"
        "  1.6 positions/s, 25 nodes/s, 102 games/hour")
    warm = dict(s, seconds=27.6, compile_seconds=0.2)
    assert "compiling" not in summary_line(8, Path("g.pgn"), 8, warm)
    assert summary_line(8, Path("g.pgn"), 0, warm) == "8 games in g.pgn (0 played now)"
