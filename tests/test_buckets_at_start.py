"""`buckets_at_start`: the credit buckets' balance when a run starts."""

from __future__ import annotations

import pytest

from storlab import api
from storlab.errors import StorlabError

# gp2 100 GiB: baseline 3 IOPS/GiB = 300 IOPS, burst 3,000 (EC2 user guide).
# 4 KiB random reads at QD32 for 60 s: from a full bucket the burst holds
# (5.4 M credits last far longer than 60 s), from an empty one the baseline
# binds, and half full still holds the burst for the minute.
TEXT = """
region = "aws/us-east-1"
{start}
[workload]
seed = 1
[[workload.jobs]]
rw = "randread"
bs = "4k"
iodepth = 32
runtime_s = 60
[configs.gp2]
host = "aws/ec2/m5.xlarge"
[[configs.gp2.pools]]
device = "aws/ebs/gp2"
size_gib = 100
"""


def iops(scenario, start: str) -> float:
    rec = api.simulate(scenario(TEXT.format(start=start)))
    return rec["results"][0]["iops"]


def test_full_by_default_empty_runs_at_the_baseline(scenario):
    assert iops(scenario, "") == pytest.approx(3000, rel=0.02)
    assert iops(scenario, 'buckets_at_start = "full"') == pytest.approx(3000, rel=0.02)
    assert iops(scenario, 'buckets_at_start = "empty"') == pytest.approx(300, rel=0.02)
    assert iops(scenario, "buckets_at_start = 50") == pytest.approx(3000, rel=0.02)


@pytest.mark.parametrize("value, near", [('"half"', '"full"'), ("150", "100"), ("-5", "0")])
def test_bad_values_name_the_field_and_the_nearest(scenario, value, near):
    with pytest.raises(StorlabError) as e:
        api.simulate(scenario(TEXT.format(start=f"buckets_at_start = {value}")))
    msg = str(e.value)
    assert "buckets_at_start" in msg and f"nearest valid value {near}" in msg and "s.toml" in msg, msg
