"""Shared helpers: run the real `storlab` command in a subprocess."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# A database scenario (`[workload.database]`) for the tests of the database
# model: TPC-C at a scale and VU counts, 1 s + 10 s windows, on `configs`
# (by default an r5.large with a data and a log gp3).
R5_LARGE = """
[configs.gp3]
host = "aws/ec2/r5.large"
[[configs.gp3.pools]]
role = "data"
device = "aws/ebs/gp3"
size_gib = 100
[[configs.gp3.pools]]
role = "log"
device = "aws/ebs/gp3"
size_gib = 50
"""


def db_scenario(profile: str = "tpcc-postgresql", scale: str = "10", vus: str = "[1, 2]", extra: str = "",
                configs: str = R5_LARGE) -> str:
    return (f'[workload.database]\nprofile = "{profile}"\nscale = {scale}\nvus = {vus}\nrampup_s = 1\n'
            f"duration_s = 10\n{extra}\n{configs}")


# A test run started under nohup, or as a background job of a shell without
# job control, has SIGHUP or SIGINT ignored, and every storlab it starts
# would inherit that (an ignored signal stays ignored across exec): the
# tests that send those signals need them at their defaults.
signal.signal(signal.SIGHUP, signal.SIG_DFL)
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    import os

    e = dict(os.environ)
    e["NO_COLOR"] = "1"
    e["COLUMNS"] = "200"
    e.pop("STORLAB_CATALOG", None)
    if env:
        e.update(env)
    cmd = [sys.executable, "-m", "storlab.cli", *args]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e, cwd=cwd) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # SIGTERM first: storlab stops what it started (a managed
            # cluster, a mount) on it, where a SIGKILL would leave them.
            p.terminate()
            try:
                p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
            raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


@pytest.fixture
def storlab():
    return run


@pytest.fixture
def limits_json():
    def go(path: Path | str, *extra: str) -> dict:
        r = run("limits", str(path), "--json", *extra)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    return go


@pytest.fixture
def scenario(tmp_path):
    """Writes a scenario file from text and returns its path."""

    def write(text: str, name: str = "s.toml") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return write
