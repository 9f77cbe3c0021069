"""CPU speed per host: `simulate` scales each transaction's CPU by the
host's per-core speed over the recording machine's, prints the ratio, and
flags a host without a figure. Hand-made hosts and profile; expected
figures by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import R5_LARGE, db_scenario
from test_simulate_db import CPU_PROFILE

# Two 2-vCPU hosts whose cores differ by 1.5×, on one basis, and a local
# NVMe device for both (no I/O binds: the profile reads and writes nothing).
OVERLAY = """
[source.test-figures]
url = "hand-made for this test"
date = "none"

[[host]]
id = "local/test-slow"
title = "2 vCPUs, per-core speed 1.0"
src = "test-figures"
kind = "local"
vcpus = 2
memory_gib = 16
cpu_speed = 1.0
cpu_speed_basis = "test-score"

[[host]]
id = "local/test-fast"
title = "2 vCPUs, per-core speed 1.5"
src = "test-figures"
kind = "local"
vcpus = 2
memory_gib = 16
cpu_speed = 1.5
cpu_speed_basis = "test-score"
"""

CONFIGS = """
[configs.slow]
host = "local/test-slow"
[[configs.slow.pools]]
device = "local/nvme"
[configs.fast]
host = "local/test-fast"
[[configs.fast.pools]]
device = "local/nvme"
"""

# The recording machine scored 1.0 on the same basis.
MACHINE = '\n[provenance.machine]\ncpus = 2\ncpu_model = "test"\ncpu_speed = 1.0\ncpu_speed_basis = "test-score"\n'


def simulate(storlab, scenario, tmp_path, profile: str, configs: str) -> dict:
    (tmp_path / "p.toml").write_text(profile)
    (tmp_path / "overlay.toml").write_text(OVERLAY)
    path = scenario(db_scenario(profile="p.toml", vus="[1, 2, 4]", configs=configs))
    r = storlab("simulate", str(path), "--json", "--catalog", str(tmp_path / "overlay.toml"))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_cpu_bound_nopm_follows_the_speed_ratio(storlab, scenario, tmp_path):
    # 1 ms of CPU a transaction on the recording machine: on the slow host
    # 2 vCPUs give 2,000 a second from 2 users (120,000 TPM, NOPM half);
    # on the fast host a transaction takes 1 / 1.5 ms: 3,000 a second,
    # 180,000 TPM. The NOPM ratio at 2 and 4 users is the speed ratio, 1.5;
    # at 1 user (one vCPU busy) too: 1,500 against 1,000 a second.
    rec = simulate(storlab, scenario, tmp_path, CPU_PROFILE + MACHINE, CONFIGS)
    nopm = {(r["config"], r["vus"]): r["nopm"] for r in rec["results"]}
    for vus in (1, 2, 4):
        assert nopm[("fast", vus)] / nopm[("slow", vus)] == pytest.approx(1.5, rel=0.01), vus
    assert nopm[("slow", 4)] == pytest.approx(60_000, rel=0.01)
    assert rec["inputs"]["cpu_speed_ratio"] == {"slow": 1.0, "fast": 1.5}
    said = " ".join(rec["inputs"]["assumptions"])
    assert "host CPU speed 1.50 × the recording machine's" in said
    assert not any("CPU speed not scaled" in w for w in rec["warnings"])


def test_a_host_without_a_figure_is_flagged(storlab, scenario, tmp_path):
    # r5.large carries no figure on the profile's basis: the recorded CPU
    # runs unscaled (120,000 TPM from 2 users) and the record says so.
    rec = simulate(storlab, scenario, tmp_path, CPU_PROFILE + MACHINE, R5_LARGE)
    assert rec["inputs"]["cpu_speed_ratio"] == {"gp3": None}
    assert any("CPU speed not scaled" in w and "aws/ec2/r5.large" in w for w in rec["warnings"]), rec["warnings"]
    assert any("host CPU speed unknown" in a for a in rec["inputs"]["assumptions"])
    # A profile without its machine's figure is flagged on a host with one.
    rec = simulate(storlab, scenario, tmp_path, CPU_PROFILE, CONFIGS)
    assert rec["inputs"]["cpu_speed_ratio"] == {"slow": None, "fast": None}
    assert any("the profile records no CPU speed figure" in w for w in rec["warnings"])


# Two real catalog hosts on their families' published figures
# (catalog/tables/cpu-speed.tsv, stress-ng div16 one instance): r5.large
# (r5, 1,284.445177) and r6i.large (r6i, 1,891.093102), 2 vCPUs each, with
# the same io2 volume (32,000 IOPS, far above what the sweep writes).
CPU_SPEED_TABLE = Path(__file__).resolve().parents[2] / "python" / "storlab" / "catalog" / "tables" / "cpu-speed.tsv"

REAL_HOSTS = """
[configs.r5]
host = "aws/ec2/r5.large"
[[configs.r5.pools]]
device = "aws/ebs/io2"
size_gib = 500
iops = 32000
[configs.r6i]
host = "aws/ec2/r6i.large"
[[configs.r6i.pools]]
device = "aws/ebs/io2"
size_gib = 500
iops = 32000
"""


def table_speeds() -> dict[str, float]:
    lines = [ln for ln in CPU_SPEED_TABLE.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    header = lines[0].split("\t")
    rows = [dict(zip(header, ln.split("\t"))) for ln in lines[1:]]
    return {r["family"]: float(r["cpu_speed"]) for r in rows}


def test_cpu_bound_sweep_on_two_catalog_hosts_follows_their_speed_ratio(storlab, scenario):
    speeds = table_speeds()
    # By hand: 1,284.445177 × 1.4723 = 1,891.0887 and the remainder
    # 0.0044 / 1,284.4 adds 0.0000034, so r6i / r5 = 1.47230.
    expected = speeds["r6i"] / speeds["r5"]
    assert expected == pytest.approx(1.4723, abs=1e-4)
    # The shipped PostgreSQL TPC-C profile, 50 warehouses (all cached in
    # either host's memory), 16 to 64 users on 2 vCPUs: the CPU binds on both
    # hosts from 16 users. What does not scale with the core's speed (the
    # commit's flush on io2, a few % of a transaction's time with 2 vCPUs
    # queued 8 to 32 deep) keeps the ratio a little off the figures' ratio;
    # within 3 % at 32 and 64 users.
    path = scenario(db_scenario(scale="50", vus="[16, 32, 64]", configs=REAL_HOSTS))
    r = storlab("simulate", str(path), "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    res = {(x["config"], x["vus"]): x for x in rec["results"]}
    for vus in (32, 64):
        slow, fast = res[("r5", vus)], res[("r6i", vus)]
        for x in (slow, fast):
            assert x["binding"].startswith("host CPU") and x["cpu_utilization"] > 0.9, (vus, x["binding"])
        assert fast["nopm"] / slow["nopm"] == pytest.approx(expected, rel=0.03), vus
    # Each host's figure over the profile's machine's, as printed.
    ratio = rec["inputs"]["cpu_speed_ratio"]
    assert ratio["r6i"] / ratio["r5"] == pytest.approx(expected, rel=0.01)
