"""Vendor rules as of a date: `as_of` in a scenario and `--as-of` on
`limits` and `simulate`. Expected figures come from the EC2 user guide the
catalog cites (gp2 of 2018: 3 IOPS per GiB up to 10,000, at most 160 MiB/s;
gp3 from 2020-12-01)."""

from __future__ import annotations

import json

MIB = 1024 * 1024

GP2_3400 = """
{as_of}
[configs.a]
host = "aws/ec2/m5.xlarge"
[[configs.a.pools]]
device = "aws/ebs/gp2"
size_gib = 3400
[workload]
[[workload.jobs]]
{job}
iodepth = 64
numjobs = 4
runtime_s = 20
"""

RAND = 'name = "rand"\nrw = "randread"\nbs = "4k"'
SEQ = 'name = "seq"\nrw = "read"\nbs = "1m"'


def gp2(as_of: str | None, job: str = RAND) -> str:
    """gp2 3,400 GiB on m5.xlarge with one job (jobs of one workload
    run side by side and would share the volume's caps)."""
    return GP2_3400.format(as_of=f'as_of = "{as_of}"' if as_of else "", job=job)


# 3 × 3,400 GiB = 10,200 IOPS, capped at 10,000 before the upgrade of
# 2018-11-26; throughput at most 160 MiB/s from 214 GiB (user guide of
# 2018-11-29). The m5.xlarge of that day bursts to 18,750 IOPS and 437.5
# MB/s (30 minutes from a full bucket), above both, so the volume binds.
def test_limits_in_august_2018(limits_json, scenario):
    rec = limits_json(scenario(gp2("2018-08-29")))
    c = rec["configs"][0]
    assert c["pools"][0]["baseline_iops"] == 10_000
    assert c["pools"][0]["baseline_bytes_s"] == 160 * MIB
    assert c["as_of"] == "2018-08-29"
    rules = {r["id"]: r for r in c["rules_applied"]}
    assert (rules["aws/ebs/gp2"]["from"], rules["aws/ebs/gp2"]["until"]) == ("2018-02-02", "2018-11-26")
    assert any("prices are today's" in a for a in c["assumptions"])


def test_simulate_in_august_2018(storlab, scenario):
    def sim(job):
        r = storlab("simulate", str(scenario(gp2("2018-08-29", job))), "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    # The model paces I/O to the cap: within 1 % of it over 20 s.
    rec = sim(RAND)
    assert abs(rec["results"][0]["iops"] - 10_000) / 10_000 < 0.01
    seq = sim(SEQ)["results"][0]
    assert abs(seq["bw_bytes_s"] - 160 * MIB) / (160 * MIB) < 0.01
    assert rec["inputs"]["as_of"] == "2018-08-29"
    assert any(x["id"] == "aws/ebs/gp2" and x["until"] == "2018-11-26" for x in rec["inputs"]["rules_applied"]["a"])
    table = storlab("simulate", str(scenario(gp2("2018-08-29"))))
    assert "as of 2018-08-29" in table.stdout and "prices are today's" in table.stdout


def test_as_of_flag_wins_over_the_scenario(limits_json, scenario):
    # Today's rules: 10,200 IOPS and 250 MiB/s; --as-of brings back 2018.
    today = limits_json(scenario(gp2(None)))["configs"][0]["pools"][0]
    assert (today["baseline_iops"], today["baseline_bytes_s"]) == (10_200, 250 * MIB)
    dated = limits_json(scenario(gp2("2024-01-01")), "--as-of", "2018-08-29")["configs"][0]
    assert dated["pools"][0]["baseline_iops"] == 10_000 and dated["as_of"] == "2018-08-29"


def test_before_the_catalog_knows_a_device(storlab, scenario):
    path = scenario(gp2("2018-08-29").replace("aws/ebs/gp2", "aws/ebs/gp3").replace("3400", "100"))
    r = storlab("limits", str(path))
    assert r.returncode == 1
    assert "2020-12-01" in r.stderr and "aws/ebs/gp3" in r.stderr and "Traceback" not in r.stderr


def test_a_malformed_date_is_one_line(storlab, scenario):
    r = storlab("limits", str(scenario(gp2(None))), "--as-of", "29/08/2018")
    assert r.returncode == 1
    assert "YYYY-MM-DD" in r.stderr and "--as-of" in r.stderr and len(r.stderr.strip().splitlines()) == 1
