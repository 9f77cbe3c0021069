"""Runs a benchmark on an emulated volume: `bench disk` and `bench db` take
`--emulate SCENARIO:CONFIG`, mount the config's pools with `storlab
emulate` in a process of its own (so killing the database, or the
emulator, is as honest as on a real machine), run on them, and unmount."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

from storlab.catalog import open_catalog, read_scenario
from storlab.errors import StorlabError


def parse_spec(spec: str) -> tuple[Path, str]:
    """`SCENARIO:CONFIG` → (scenario path, config name)."""
    scenario, sep, config = spec.rpartition(":")
    if not sep or not scenario or not config:
        raise StorlabError(f"--emulate '{spec}': give SCENARIO:CONFIG — e.g. examples/aws-t3-gp2-one-vs-five.toml:one-100gib")
    p = Path(scenario)
    if not p.is_file():
        raise StorlabError(f"--emulate '{spec}': no scenario file {p}")
    return p, config


def config_roles(scenario: Path, config: str, catalog: list[str | os.PathLike] | None = None) -> list[str]:
    """The pool roles of a config as the model reads the scenario (`all`
    where a pool names none)."""
    name, text = read_scenario(scenario)
    configs = open_catalog(catalog)[0].limits(name, text)["configs"]
    for c in configs:
        if c["name"] == config:
            return [p["role"] for p in c["pools"]]
    raise StorlabError(f"{scenario}: no config '{config}' — configs: {', '.join(c['name'] for c in configs)}")


@contextlib.contextmanager
def mounted(spec: str, workdir: Path, roles: list[str | None], extra: list[str] | None = None,
            series: list | None = None, period_s: float = 10.0) -> Iterator[list[Path]]:
    """Mounts the pools `roles` (None: the primary pool) of the `--emulate`
    spec under `workdir` (backing folders and mount points, removed after)
    and yields the mount points; unmounts on the way out, even on Ctrl-C.
    With `series` (a list), the emulator's CloudWatch-style series (one
    period of `period_s`) are appended to it once it has stopped."""
    scenario, config = parse_spec(spec)
    # The folders made for `workdir` go again afterwards (if left empty).
    made = [d for d in [Path(workdir).absolute(), *Path(workdir).absolute().parents] if not d.exists()]
    Path(workdir).mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="storlab-emulate-", dir=workdir))
    # A database server running as its own user must reach the mount.
    os.chmod(base, 0o755)
    mounts = [base / f"mnt-{r or 'primary'}" for r in roles]
    cmd = [sys.executable, "-m", "storlab.cli", "emulate", str(scenario), "--config", config, "--ready-file", str(base / "ready.json")]
    for r, m in zip(roles, mounts):
        m.mkdir()
        if r:
            cmd += ["--pool", r]
        cmd += ["--backing", str(base / f"backing-{r or 'primary'}"), "--mount", str(m)]
    if series is not None:
        cmd += ["--metrics", str(base / "metrics.json"), "--period", f"{period_s:g}"]
    # STORLAB_EMULATE_OPTIONS: further `storlab emulate` options for the run
    # (e.g. "--ram 16 --initial-credits 0"); bench disk/db have no flags for them.
    cmd += (extra or []) + shlex.split(os.environ.get("STORLAB_EMULATE_OPTIONS", ""))
    log = open(base / "emulate.log", "w+")
    p = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True, preexec_fn=_die_with_parent)
    try:
        deadline = time.time() + 120
        while not (base / "ready.json").exists():
            if p.poll() is not None:
                log.seek(0)
                lines = [x for x in log.read().splitlines() if x.strip()]
                raise StorlabError(f"--emulate {spec}: {lines[-1] if lines else 'the emulator exited'}")
            if time.time() > deadline:
                raise StorlabError(f"--emulate {spec}: the emulator did not mount within 120 s")
            time.sleep(0.05)
        yield mounts
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for m in mounts:
            if os.path.ismount(m) or _stale(m):
                subprocess.run([sys.executable, "-m", "storlab.cli", "emulate", "--unmount", str(m)], capture_output=True)
        log.close()
        if series is not None:
            try:
                series += json.loads((base / "metrics.json").read_text())["series"]
            except (OSError, ValueError, KeyError):
                pass
        shutil.rmtree(base, ignore_errors=True)
        for d in made:  # deepest first
            try:
                d.rmdir()
            except OSError:
                break


def _die_with_parent() -> None:
    """In the emulator's process: SIGTERM (unmount, exit) when the process
    that started it dies, so a killed benchmark leaves no mount behind."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _stale(path: Path) -> bool:
    try:
        os.listdir(path)  # asks the server; a stat may be answered from cache
        return False
    except OSError as e:
        return e.errno == errno.ENOTCONN


def describe(spec: str) -> dict:
    scenario, config = parse_spec(spec)
    return {"scenario": str(scenario), "config": config}


def stamp(rec: dict, spec: str) -> dict:
    """Marks a run record as run on the emulated deployment."""
    rec["engine"] = "emulate"
    rec["emulated"] = describe(spec)
    for r in rec.get("results", []):
        r["config"] = describe(spec)["config"]
    return rec


__all__ = ["parse_spec", "config_roles", "mounted", "stamp", "describe"]
