"""`[[alarms]]` in a scenario: CloudWatch's M-out-of-N alarms on the
simulated series, in the record and the table. Expected times are hand
calculations from the EBS user guide's gp2 arithmetic."""

from __future__ import annotations

import json

from conftest import shared_scenario

GP2_100 = shared_scenario("gp2-100-burst-alarm")


def test_gp2_burst_balance_alarm_goes_off_at_minute_18(storlab, scenario):
    # gp2 100 GiB: 5.4 M credits, baseline 3 × 100 = 300 IOPS, burst 3,000.
    # At 3,000 IOPS the bucket drains 2,700 credits/s: empty at 2,000 s, so
    # BurstBalance(t) = 100 (1 − t/2000) %. Each minute's datapoint is the
    # balance at its end: minute ending 960 s → 52 %, 1,020 s → 49 %,
    # 1,080 s → 46 %. The first two consecutive minutes below 50 end at
    # 1,020 s and 1,080 s: ALARM at 1,080 s = 00:18. The first minute
    # (97 %) puts it in OK at 60 s.
    path = scenario(GP2_100)
    rec = json.loads(storlab("simulate", str(path), "--json").stdout)
    got = [(a["time_s"], a["from"], a["to"]) for a in rec["alarms"]]
    assert got == [(60, "INSUFFICIENT_DATA", "OK"), (1080, "OK", "ALARM")]
    assert rec["alarms"][1]["reason"] == "BurstBalance < 50 for 2 of 2 periods"
    assert rec["alarms"][1]["config"] == "gp2"
    table = storlab("simulate", str(path)).stdout
    assert "burst-below-half: BurstBalance < 50 for 2 of 2 periods: ALARM at 00:18" in table


def test_a_bad_alarm_is_one_line_naming_the_field(storlab, scenario):
    r = storlab("simulate", str(scenario(GP2_100.replace("LessThanThreshold", "LessThan"))))
    assert r.returncode == 1
    assert "alarms[0] (burst-below-half).comparison: unknown value 'LessThan' — did you mean 'LessThanThreshold'?" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
