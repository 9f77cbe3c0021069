"""The library API behind the CLI: load a catalog, compute a scenario's
limits. Every record carries schema_version, the tool's version and git sha
and its resolved inputs."""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from storlab import _native
from storlab.catalog import read_catalog_files
from storlab.errors import ScenarioError


@functools.cache
def _git_sha() -> str:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def tool_info() -> dict[str, str]:
    from storlab import __version__

    return {"name": "storlab", "version": __version__, "git_sha": _git_sha()}


def load_catalog(extra: list[str | os.PathLike] | None = None) -> dict[str, Any]:
    """The whole catalog (devices, hosts, prices, sources, regions) as plain data."""
    return json.loads(_native.catalog_json(read_catalog_files(extra)))


def catalog_entry(entry_id: str, extra: list[str | os.PathLike] | None = None) -> dict[str, Any]:
    """One device or host with its prices and sources."""
    return json.loads(_native.catalog_entry_json(read_catalog_files(extra), entry_id))


def read_scenario(path: str | os.PathLike) -> tuple[str, str]:
    p = Path(path)
    try:
        return str(p), p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{p}: is a folder, not a scenario file — give a .toml file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{p}: cannot read scenario file ({e.__class__.__name__}: {e})") from e


def limits(scenario: str | os.PathLike, catalog: list[str | os.PathLike] | None = None) -> dict[str, Any]:
    """The `storlab limits` record of a scenario file (DESIGN.md contract)."""
    name, text = read_scenario(scenario)
    files = read_catalog_files(catalog)
    record = json.loads(_native.limits_json(name, text, files))
    return {
        "schema_version": record.pop("schema_version"),
        "tool": tool_info(),
        **record,
        "inputs": {"scenario": name, "catalog_files": [n for n, _ in files]},
    }


def simulate(
    scenario: str | os.PathLike,
    catalog: list[str | os.PathLike] | None = None,
    period_s: float | None = None,
    progress=None,
) -> dict[str, Any]:
    """The run record of simulating the scenario's workload on every config
    (DESIGN.md "Run records"). `progress(fraction)` is called now and then."""
    name, text = read_scenario(scenario)
    files = read_catalog_files(catalog)
    if period_s is not None and not period_s > 0:
        raise ScenarioError(f"--period {period_s}: the period must be positive — e.g. 60")
    record = json.loads(
        _native.simulate_json(name, text, str(Path(name).resolve().parent), files, period_s, progress)
    )
    return {
        "schema_version": record.pop("schema_version"),
        "tool": tool_info(),
        "engine": record.pop("engine"),
        **record,
        "host_info": {},
        "inputs": {"scenario": name, "catalog_files": [n for n, _ in files]},
    }
