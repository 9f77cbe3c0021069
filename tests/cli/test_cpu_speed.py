"""CPU speed per host: `simulate` scales each transaction's CPU by the
host's per-core speed over the recording machine's, prints the ratio, and
flags a host without a figure. Hand-made hosts and profile; expected
figures by hand in the comments."""

from __future__ import annotations

import json

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
