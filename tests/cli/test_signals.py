"""Ctrl-C, SIGTERM and SIGHUP end any run within a second or two, with the
signal's exit code (130, 143, 129: 128 + the signal's number) and no
traceback. These need a real process to signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

# A long I/O scenario: 4 hours of simulated gp3 time at queue depth 32,
# minutes of work, so a run is always in its loop when the signal lands.
LONG = """[workload]
duration_s = 14400
[[workload.jobs]]
rw = "randread"
bs = "4k"
iodepth = 32
numjobs = 4
size = "1g"
runtime_s = 14400
[configs.a]
host = "aws/ec2/r5.large"
[[configs.a.pools]]
device = "aws/ebs/gp3"
size_gib = 1000
iops = 16000
"""


def start(tmp_path, text: str) -> subprocess.Popen:
    sc = tmp_path / "long.toml"
    sc.write_text(text)
    env = dict(os.environ, NO_COLOR="1")
    env.pop("STORLAB_CATALOG", None)
    return subprocess.Popen([sys.executable, "-m", "storlab.cli", "simulate", str(sc), "--json"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_ends_a_long_simulation_at_once(tmp_path, sig, code):
    p = start(tmp_path, LONG)
    try:
        time.sleep(2.5)  # past the import and into the engine's loop
        assert p.poll() is None, p.communicate()
        t0 = time.monotonic()
        p.send_signal(sig)
        out, err = p.communicate(timeout=10)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == code, (p.returncode, err[-2000:])
    assert took < 2.0, took
    assert "Traceback" not in err and "panicked" not in err, err[-2000:]
    # What was simulated is kept: the record says it was interrupted.
    assert '"interrupted": true' in out.replace('"interrupted":true', '"interrupted": true'), out[-500:]


def test_ctrl_c_while_bench_db_loads_exits_130(tmp_path):
    # 20 warehouses into SQLite take tens of seconds to load: the signal lands
    # while the loaders run, and the run ends as any Ctrl-C does.
    env = dict(os.environ, NO_COLOR="1")
    p = subprocess.Popen([sys.executable, "-m", "storlab.cli", "bench", "db", "--dir", str(tmp_path), "--warehouses", "20",
                          "--duration", "5"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(3)
        assert p.poll() is None, p.communicate()
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 130, (p.returncode, err[-2000:])
    assert "interrupted while loading" in err and "Traceback" not in err, err[-2000:]
    assert took < 5, took
