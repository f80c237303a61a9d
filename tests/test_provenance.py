"""Provenance of runs and benchmark records: git commit and dirty flag, model file hash,
and the resume check of run folders (refused under other versions unless forced)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from zerochess import provenance
from zerochess.errors import ConfigError
from zerochess.runs import FORCED_KEY, VERSIONS_FILE, prepare_run_dir

REPO = Path(__file__).resolve().parents[1]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@needs_git
def test_git_info_commit_dirty_and_diff_hash(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    head = _git(repo, "rev-parse", "HEAD")
    clean = provenance.git_info.__wrapped__(str(repo))
    assert clean == {"git_commit": head, "git_dirty": False, "git_diff_sha256": None}
    (repo / "a.txt").write_text("two\n")
    dirty = provenance.git_info.__wrapped__(str(repo))
    assert dirty["git_commit"] == head and dirty["git_dirty"] is True
    (repo / "a.txt").write_text("three\n")
    other = provenance.git_info.__wrapped__(str(repo))
    assert other["git_dirty"] and other["git_diff_sha256"] != dirty["git_diff_sha256"]
    (repo / "untracked.txt").write_text("x")  # untracked files do not count
    assert provenance.git_info.__wrapped__(str(repo)) == other
    outside = provenance.git_info.__wrapped__(str(tmp_path))
    assert outside == {"git_commit": None, "git_dirty": None, "git_diff_sha256": None}


@needs_git
def test_this_checkout_is_recorded():
    if not (REPO / ".git").exists():
        pytest.skip("not running from a git checkout")
    info = provenance.git_info()
    assert info["git_commit"] == _git(REPO, "rev-parse", "HEAD")
    dirty = bool(_git(REPO, "status", "--porcelain", "--untracked-files=no"))
    assert info["git_dirty"] == dirty


def test_model_provenance(tmp_path):
    net = tmp_path / "net.pb.gz"
    net.write_bytes(b"not really a network" * 1000)
    rec = provenance.model_provenance(str(net))
    assert rec["model_file"] == str(net.resolve())
    assert rec["model_sha256"] == hashlib.sha256(net.read_bytes()).hexdigest()
    assert provenance.model_provenance("resnet:2x8")["model_sha256"] is None
    builtin = provenance.model_provenance("builtin")
    assert builtin["model_file"] is None and len(builtin["model_sha256"]) == 64
    missing = provenance.model_provenance(str(tmp_path / "missing.pb.gz"))
    assert missing["model_sha256"] is None


def test_resume_under_other_versions_is_refused_unless_forced(tmp_path):
    out = tmp_path / "run"
    cfg = {"name": "x", "model": "builtin", "seed": 1}
    prepare_run_dir(out, cfg)
    first = yaml.safe_load((out / VERSIONS_FILE).read_text())
    assert first["model_sha256"] == provenance.model_provenance("builtin")["model_sha256"]
    assert first["git_commit"] == provenance.git_info()["git_commit"]
    prepare_run_dir(out, cfg)  # same versions: a plain resume
    assert yaml.safe_load((out / VERSIONS_FILE).read_text()) == first
    # pretend the folder was made by another commit and another jax
    older = dict(first, git_commit="0" * 40, jax="0.0.1")
    (out / VERSIONS_FILE).write_text(yaml.safe_dump(older))
    with pytest.raises(ConfigError, match="other versions") as err:
        prepare_run_dir(out, cfg)
    assert "git_commit" in str(err.value) and "jax: 0.0.1" in str(err.value)
    assert "--force" in str(err.value)
    assert yaml.safe_load((out / VERSIONS_FILE).read_text()) == older  # not rewritten
    prepare_run_dir(out, cfg, force=True)
    after = yaml.safe_load((out / VERSIONS_FILE).read_text())
    assert {k: v for k, v in after.items() if k != FORCED_KEY} == older  # first run kept
    (entry,) = after[FORCED_KEY]
    assert entry["differences"]["jax"] == ["0.0.1", first["jax"]]
    assert entry["differences"]["git_commit"] == ["0" * 40, first["git_commit"]]
    assert entry["versions"]["jax"] == first["jax"] and entry["time"]
    # the config check still comes first (once the folder holds a finished game)
    (out / "games.csv").write_text("index,result\n0,1-0\n")
    with pytest.raises(ConfigError, match="different config"):
        prepare_run_dir(out, dict(cfg, seed=2), force=True)
