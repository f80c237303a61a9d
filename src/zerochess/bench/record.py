"""What every ``zerochess bench --json FILE`` record carries, whatever the mode."""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zerochess.provenance import model_provenance, provenance

SCHEMA = 2


def _cpu_model() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return cpu


def _meminfo_gb(key: str) -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        return None
    return None


def usable_cores() -> int:
    """Cores this process may run on (``sched_getaffinity``; ``cpu_count`` elsewhere)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        return None


def machine_info() -> dict[str, Any]:
    """CPU model, core counts, memory, python / jax versions, jax backend and devices."""
    import jax

    return {
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable_cores(),
        "memory_gb": _meminfo_gb("MemTotal"),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "jax": jax.__version__,
        "jax_backend": jax.default_backend(),
        "jax_devices": [f"{d.platform}:{d.device_kind}" for d in jax.devices()],
    }


def backend_label() -> str:
    """``"CPU (2 cores)"`` or ``"GPU (NVIDIA H100 ...)"``: the label printed with every figure."""
    import jax

    backend = jax.default_backend()
    if backend == "cpu":
        return f"CPU ({usable_cores()} cores)"
    return f"{backend.upper()} ({jax.devices()[0].device_kind})"


def header(mode: str, models: Sequence[str] = (), note: str | None = None,
           argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The record header at the start of a run (see docs/DESIGN.md)."""
    return {
        "schema": SCHEMA,
        "mode": mode,
        "command": "zerochess " + " ".join(argv if argv is not None else sys.argv[1:]),
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "note": note,
        "machine": machine_info(),
        "load_average_start": load_average(),
        "memory_available_gb_start": _meminfo_gb("MemAvailable"),
        "provenance": provenance(),
        "models": [model_provenance(m) for m in models],
        "_t0": time.perf_counter(),
    }


def finish(head: dict[str, Any]) -> dict[str, Any]:
    """The header completed at the end of the run: load average, wall time."""
    out = dict(head)
    out["wall_s"] = time.perf_counter() - out.pop("_t0", time.perf_counter())
    out["load_average_end"] = load_average()
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _jsonable(value.item())
    return value


def write(path: str | Path, head: dict[str, Any], figures: dict[str, Any]) -> None:
    """Write ``{"record": finish(head), **figures}`` as indented JSON."""
    data = {"record": finish(head), **figures}
    Path(path).write_text(json.dumps(_jsonable(data), indent=2) + "\n")


def print_header(head: dict[str, Any]) -> None:
    """One line: machine, backend, jax, commit, load average."""
    m, p = head["machine"], head["provenance"]
    commit = (p["git_commit"] or "no git checkout")[:12] + (" (dirty)" if p["git_dirty"] else "")
    print(f"machine: {m['cpu']}, {m['usable_cores']} usable cores (cpu_count "
          f"{m['cpu_count']}), {m['memory_gb'] or 0:.0f} GiB; jax {m['jax']} backend "
          f"{backend_label()} devices {', '.join(m['jax_devices'])}; zerochess {commit}; "
          f"load average {head['load_average_start']}", flush=True)
    if head.get("note"):
        print(f"note: {head['note']}", flush=True)


def source_env(src: str | None) -> dict[str, str] | None:
    """The environment of a process that imports zerochess from the sources in ``src`` (a
    directory holding ``zerochess/``, e.g. ``git archive REV src``: the baseline of a
    before/after comparison), or None for the installed package."""
    if src is None:
        return None
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def run_worker(code: str, args: Any, src: str | None = None, timeout_s: float = 1800
               ) -> dict[str, Any]:
    """``python -c code ARGS`` (``args`` as JSON) in a fresh process, of ``src``'s sources
    when given (``source_env``): its last line of output read as JSON, or ``{"error":
    [its last line of errors]}``."""
    out = subprocess.run([sys.executable, "-c", code, json.dumps(args)], env=source_env(src),
                         capture_output=True, text=True, timeout=timeout_s)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


__all__ = ["backend_label", "finish", "header", "load_average", "machine_info",
           "print_header", "run_worker", "source_env", "usable_cores", "write"]
