"""The recorder's per-core speed probe (storlab.cpuprobe) and where its
figure lands: `[provenance] machine` of a profile, on the catalog's basis."""

from __future__ import annotations

import shutil
import tomllib

import pytest

from storlab import cpuprobe
from storlab.db import profile as dbprofile

# The metrics of a `stress-ng ... -Y FILE` run (stress-ng 0.17.08's layout).
OUTPUT = """---
system-info:
      stress-ng-version: 0.17.08
metrics:
    - stressor: cpu
      bogo-ops: 25688
      bogo-ops-per-second-usr-sys-time: 1284.5
      bogo-ops-per-second-real-time: 1284.445177
      wall-clock-time: 20.000075
"""


def test_reads_bogo_ops_per_second_and_version():
    assert cpuprobe.bogo_ops_per_second(OUTPUT) == 1284.445177
    assert cpuprobe.version(OUTPUT) == "0.17.08"
    assert cpuprobe.bogo_ops_per_second("no figure here") is None


def test_the_probe_stays_short():
    assert cpuprobe.RUN_S * cpuprobe.RUNS < 10


GENOA = ("AuthenticAMD", 25, 17)


def test_the_processor_is_read_from_cpuinfo():
    text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\n"
    assert cpuprobe.processor(text) == GENOA
    assert cpuprobe.processor("vendor_id: GenuineIntel\n") is None


@pytest.mark.skipif(shutil.which("stress-ng") is None, reason="stress-ng is not installed")
def test_the_probe_writes_speed_and_basis_into_the_profile_machine():
    """A Genoa's figure is the published m7a.4xlarge's, 1776.456342 (the
    file named in its source); the probe's own reading rides beside it."""
    speed = cpuprobe.measure(seconds=1, runs=1, cpu=GENOA)
    assert speed["cpu_speed"] == 1776.456342 and speed["cpu_speed_basis"] == "stress-ng-cpu-div16-1t"
    assert speed["cpu_speed_source"]["url"].startswith("SpareCores/sc-inspector-data data/aws/m7a.4xlarge/")
    probe = speed["cpu_speed_probe"]
    assert probe["reading"] > 0 and probe["trials"] == [probe["reading"]] and probe["tool"].startswith("stress-ng 0.")
    assert "--cpu 1 --cpu-method div16" in probe["command"]
    prov = dbprofile.provenance({}, scale=1.0, vus=[1], command=["storlab"], cpu_speed=speed)
    m = tomllib.loads(dbprofile.to_toml({"provenance": prov}))["provenance"]["machine"]
    assert m["cpu_speed"] == 1776.456342 and m["cpu_speed_basis"] == "stress-ng-cpu-div16-1t"
    assert m["cpu_speed_probe"]["reading"] == probe["reading"]
    assert m["cpus"] >= 1


def test_a_processor_without_a_published_figure_gets_a_note_and_no_figure():
    speed = cpuprobe.measure(seconds=1, runs=1, cpu=("GenuineIntel", 6, 85))
    assert "cpu_speed" not in speed and "GenuineIntel family 6 model 85 has no published figure" in speed["cpu_speed_note"]
    m = dbprofile.provenance({}, scale=1.0, vus=[1], command=["storlab"], cpu_speed=speed)["machine"]
    assert "cpu_speed" not in m and "cpu_speed_basis" not in m and m["cpu_speed_note"]


def test_without_stress_ng_the_published_figure_and_a_note(monkeypatch):
    monkeypatch.setattr(cpuprobe.shutil, "which", lambda name: None)
    speed = cpuprobe.measure(seconds=1, runs=1, cpu=GENOA)
    assert speed["cpu_speed"] == 1776.456342 and "stress-ng is not installed" in speed["cpu_speed_note"]
    assert "cpu_speed_probe" not in speed
