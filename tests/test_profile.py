"""``zerochess bench --device-search --profile`` (``zerochess.bench.profile``): the HLO op
count by named scope (default tier: a small jitted loop), the whole table and its trace
at a tiny size (tier 2), and the GPU slot script's CPU dry run (tier 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from zerochess.bench import profile

REPO = Path(__file__).resolve().parents[1]


def _scoped_program():
    """A loop whose body has ops in the scopes ``select`` (3 ops that cannot fuse: two
    sorts and a dot) and ``finish`` (one sort), and one op outside any scope."""

    def body(c):
        i, x, m = c
        with jax.named_scope("select"):
            x = jnp.sort(x) + 1.0
            x = jnp.sort(-x)
            m = m @ m
        with jax.named_scope("finish"), jax.named_scope("backup"):
            x = jnp.sort(x * 2.0)
        return i + 1, x, m

    def f(x, m):
        return jax.lax.while_loop(lambda c: c[0] < 3, body, (0, x, m))

    return jax.jit(f).lower(jnp.arange(8.0), jnp.eye(4)).compile()


def test_hlo_ops_are_counted_by_named_scope():
    ops = profile.hlo_ops(_scoped_program().as_text())
    by = ops["by_phase"]
    # each scope's ops are found in the loop body (sorts and dots are their own ops)
    assert by.get("select", 0) >= 3, ops
    assert by.get("finish/backup", 0) >= 1, ops
    assert "finish" not in by  # the innermost named scope wins
    assert ops["total"] == sum(by.values())
    assert ops["total"] < 60  # the sorts' comparators are not counted as ops


def test_scope_of_takes_the_innermost_phase():
    assert profile._scope_of("jit(f)/while/body/select/vmap()/while/body/gt") == "select"
    assert profile._scope_of("jit(f)/while/body/rules/mate_check/cond/x") == "mate_check"
    assert profile._scope_of("jit(f)/while/body/finish/backup/while/body/add") == \
        "finish/backup"
    assert profile._scope_of("jit(f)/while/body/add") == "other"


@pytest.mark.tier2
def test_profile_table_at_a_tiny_size(tmp_path):
    """The table's structure, shares that sum to 1, the trace on disk, and HLO ops in
    every phase's scope (the named scopes reach the compiled step)."""
    out = tmp_path / "prof"
    cmd = [sys.executable, "-m", "zerochess.cli", "bench", "--device-search", "--tiny",
           "--profile", str(out), "--json", str(tmp_path / "p.json")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    table = json.loads((out / "profile.json").read_text())
    assert set(table["phases"]) == set(profile.PHASES)
    shares = [p["share"] for p in table["phases"].values()]
    assert all(s >= 0 for s in shares) and abs(sum(shares) - 1.0) < 1e-6
    assert table["step_ms"] > 0 and table["steps"] > 0 and table["sims_per_s"] > 0
    ops = table["hlo_ops_per_step"]
    for phase in ("select", "rules", "prepare", "network", "finish/backup"):
        assert ops["by_phase"].get(phase, 0) > 0, (phase, ops["by_phase"])
    assert table["bytes_per_simulation"] is None or table["bytes_per_simulation"] > 0
    files = [out / f for f in table["trace_files"]]
    assert files and all(f.is_file() for f in files)
    assert any(f.name.endswith(".xplane.pb") for f in files)
    assert "mate_check" in (out / "profile.txt").read_text()
    record = json.loads((tmp_path / "p.json").read_text())
    assert record["profile"]["batch"] == profile.TINY["batch"]


@pytest.mark.tier2
@pytest.mark.slow  # every stage of the slot script at CPU sizes: tens of minutes on 2 cores
def test_gpu_slot_script_cpu_dry_run(tmp_path):
    """The slot script's stages at their CPU sizes: each writes its JSON record, and the
    summary says how each ended."""
    out = tmp_path / "slot"
    cmd = [sys.executable, str(REPO / "scripts" / "gpu_slot.py"), "--cpu", "--out", str(out),
           "--budget", "1500", "--only", "grid_main,b1"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1700)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    summary = json.loads((out / "slot.json").read_text())
    assert [summary["stages"][s]["status"] for s in ("grid_main", "b1")] == ["done", "done"]
    grid = json.loads((out / "grid_main.json").read_text())
    (point,) = grid["points"]
    assert point["sims_per_s"] > 0 and point["ratio_search_to_network"] > 0
    assert grid["record"]["mode"] == "gpu_slot/grid_main"


def _slot_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_slot", REPO / "scripts" / "gpu_slot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_slot_profiles_the_fastest_point_measured(tmp_path):
    slot = _slot_module()
    default = {"model": "resnet:6x64", "batch": 4096, "leaves": 1, "sims": 100}
    assert slot._best_point(tmp_path, default) == default  # nothing measured yet
    points = [{"spec": "resnet:6x64", "batch": 1024, "leaves": 1, "sims_per_s": 5.0},
              {"spec": "resnet:15x768", "batch": 64, "leaves": 4, "sims_per_s": 9.0},
              {"spec": "resnet:6x64", "batch": 16384, "leaves": 4, "error": "OOM"}]
    (tmp_path / "grid_main.json").write_text(json.dumps({"points": points}))
    (tmp_path / "grid_big.json").write_text(json.dumps({"points": [
        {"spec": "resnet:6x64", "batch": 4096, "leaves": 16, "sims_per_s": 7.0}]}))
    assert slot._best_point(tmp_path, default) == {**default, "batch": 4096, "leaves": 16}


def test_gpu_slot_refuses_an_unknown_stage(tmp_path, capsys):
    with pytest.raises(SystemExit):
        _slot_module().main(["--out", str(tmp_path), "--only", "grid_main,nonsense"])
    assert "nonsense" in capsys.readouterr().err
