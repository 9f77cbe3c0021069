"""The recorder's per-core speed probe (storlab.cpuprobe) and where its
figure lands: `[provenance] machine` of a profile, on the catalog's basis."""

from __future__ import annotations

import shutil
import tomllib

import pytest

from storlab import cpuprobe
from storlab.db import profile as dbprofile

# The tail of a `sysbench cpu --threads=1 run` (sysbench 1.0.20's layout).
OUTPUT = """sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 1
Initializing random number generator from current time


Prime numbers limit: 10000

Initializing worker threads...

Threads started!

CPU speed:
    events per second:  1178.88

General statistics:
    total time:                          10.0009s
    total number of events:              11792
"""


def test_reads_events_per_second_and_version():
    assert cpuprobe.events_per_second(OUTPUT) == 1178.88
    assert cpuprobe.version(OUTPUT) == "1.0.20"
    assert cpuprobe.events_per_second("no figure here") is None


def test_the_probe_stays_short():
    assert cpuprobe.RUN_S * cpuprobe.RUNS < 10


@pytest.mark.skipif(shutil.which("sysbench") is None, reason="sysbench is not installed")
def test_the_probe_writes_speed_and_basis_into_the_profile_machine():
    speed = cpuprobe.measure(seconds=1, runs=1)
    assert speed["cpu_speed"] > 0 and speed["cpu_speed_basis"] == "sysbench-cpu-1t"
    assert speed["cpu_speed_probe"]["tool"].startswith("sysbench 1.")
    assert "--threads=1" in speed["cpu_speed_probe"]["command"]
    assert "--cpu-max-prime=10000" in speed["cpu_speed_probe"]["command"]
    prov = dbprofile.provenance({}, scale=1.0, vus=[1], command=["storlab"], cpu_speed=speed)
    m = tomllib.loads(dbprofile.to_toml({"provenance": prov}))["provenance"]["machine"]
    assert m["cpu_speed"] == speed["cpu_speed"] and m["cpu_speed_basis"] == "sysbench-cpu-1t"
    assert m["cpu_speed_probe"]["trials"] == [speed["cpu_speed"]]
    assert m["cpus"] >= 1


def test_without_sysbench_a_note_and_no_figure(monkeypatch):
    monkeypatch.setattr(cpuprobe.shutil, "which", lambda name: None)
    speed = cpuprobe.measure(seconds=1, runs=1)
    assert "sysbench" in speed["cpu_speed_note"] and "cpu_speed" not in speed
    m = dbprofile.provenance({}, scale=1.0, vus=[1], command=["storlab"], cpu_speed=speed)["machine"]
    assert "cpu_speed" not in m and "cpu_speed_basis" not in m and m["cpu_speed_note"]
