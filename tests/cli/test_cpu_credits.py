"""A burstable host's CPU credits (EC2 T3): `standard` holds each vCPU to
its baseline once the balance is spent, `unlimited` (the default) never
slows and bills the vCPU time above the baseline. Expected figures by hand
from the EC2 user guide's credit table (t3.large: 2 vCPUs, 36 credits an
hour, at most 864, a 30 % baseline; one credit = one vCPU for a minute) and
its surplus rate ($0.05 a vCPU-hour, Linux)."""

from __future__ import annotations

import json
import tomllib

import pytest

from conftest import ROOT, db_scenario
from test_simulate_db import CPU_PROFILE


def t3(mode: str | None, start: str = "") -> str:
    credits = f'cpu_credits = "{mode}"\n' if mode else ""
    return (f'[configs.t3]\nhost = "aws/ec2/t3.large"\n{credits}'
            '[[configs.t3.pools]]\nrole = "all"\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n')


def run(storlab, scenario, tmp_path, mode, start, vus="[4]", duration=10):
    (tmp_path / "cpu.toml").write_text(CPU_PROFILE)
    text = (f'region = "aws/us-east-1"\nbuckets_at_start = {start}\n'
            + db_scenario(profile="cpu.toml", vus=vus, configs=t3(mode, start)).replace("duration_s = 10", f"duration_s = {duration}"))
    r = storlab("simulate", str(scenario(text)), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_catalog_has_the_credit_table_of_the_user_guide():
    from storlab import api

    cat = {h["id"]: h for h in api.load_catalog()["hosts"]}
    # (earned an hour, most accrued, vCPUs, baseline %): the guide's T3 rows.
    want = {"t3.nano": (6, 144, 2, 5), "t3.micro": (12, 288, 2, 10), "t3.small": (24, 576, 2, 20),
            "t3.medium": (24, 576, 2, 20), "t3.large": (36, 864, 2, 30), "t3.xlarge": (96, 2304, 4, 40),
            "t3.2xlarge": (192, 4608, 8, 40)}
    # T3a's rows are T3's (the same table).
    want |= {k.replace("t3.", "t3a."): v for k, v in want.items()}
    for size, (earned, most, vcpus, base) in want.items():
        h = cat[f"aws/ec2/{size}"]
        c = {k: v["value"] if isinstance(v, dict) else v for k, v in h["cpu_credits"].items()}
        assert (c["earned_per_hour"], c["max_accrued"], h["vcpus"]["value"], c["baseline_pct"]) == (earned, most, vcpus, base)
        # The guide's own rule: baseline % = credits earned / vCPUs / 60.
        assert base == pytest.approx(100 * earned / vcpus / 60)
        assert most == 24 * earned
        assert c["default_mode"] == "unlimited"


def test_unlimited_runs_at_full_speed_and_bills_the_surplus(storlab, scenario, tmp_path):
    # 1 ms of CPU a transaction, 4 users on 2 vCPUs: 2,000 a second,
    # 120,000 TPM, both vCPUs busy. Surplus: (100 % − 30 %) × 2 vCPUs ×
    # 730 h × $0.05 = $51.10 a month over the t3.large's $0.0832 × 730 =
    # $60.736 and 100 GiB of gp3 at $0.08 = $8.
    r = run(storlab, scenario, tmp_path, None, '"empty"')["results"][0]
    assert r["tpm"] == pytest.approx(120_000, rel=0.01)
    assert r["surplus_credits_usd_month"] == pytest.approx(0.7 * 2 * 730 * 0.05, rel=0.01)
    assert r["monthly_cost_usd"] == pytest.approx(60.736 + 8 + 51.10, abs=0.6)
    assert "$0.05 a vCPU-hour" in r["cpu_credits"]


def test_standard_from_empty_is_held_to_the_baseline(storlab, scenario, tmp_path):
    # No credits at the start (T3 earns no launch credits): each vCPU gives
    # 30 % of a second a second, 0.6 s of CPU a second on two, 600
    # transactions: 36,000 TPM, CPUUtilization 30 %, no surplus billed.
    rec = run(storlab, scenario, tmp_path, "standard", '"empty"')
    r = rec["results"][0]
    assert r["tpm"] == pytest.approx(36_000, rel=0.03)
    assert r["cpu_utilization"] == pytest.approx(0.30, rel=0.03)
    assert r["binding"].startswith("host CPU credits: 2 vCPUs held to their 30 % baseline")
    assert r["monthly_cost_usd"] == pytest.approx(68.74, abs=0.01)
    assert "surplus_credits_usd_month" not in r


def test_standard_spends_its_balance_then_slows(storlab, scenario, tmp_path):
    # 0.05 % of 864 credits = 0.432 credits = 25.92 vCPU-seconds; at full
    # speed two busy vCPUs spend 2 a second and earn 36 × 60 / 3,600 = 0.6:
    # the balance lasts 25.92 / 1.4 = 18.5 s. From 1 s to 41 s: 17.5 s at
    # 2,000 a second and 22.5 s at 600, 48,500 in 40 s = 72,750 TPM.
    rec = run(storlab, scenario, tmp_path, "standard", "0.05", duration=40)
    assert rec["results"][0]["tpm"] == pytest.approx(72_750, rel=0.03)
    # From a full balance 131 s are nowhere near its end: full speed, and
    # CPUCreditBalance (a minute a period) falls 1.4 vCPU-seconds a second
    # from 864: 1.4 credits a minute.
    rec = run(storlab, scenario, tmp_path, "standard", '"full"', duration=130)
    assert rec["results"][0]["tpm"] == pytest.approx(120_000, rel=0.01)
    bal = next(s for s in rec["series"] if s["metric"] == "CPUCreditBalance")
    assert bal["unit"] == "Count" and bal["values"][0] == pytest.approx(864, abs=0.05)
    assert bal["values"][1] == pytest.approx(864 - 1.4, abs=0.05) and bal["values"][2] == pytest.approx(864 - 2.8, abs=0.05)


def test_cpu_credits_refused_where_they_make_no_sense(storlab, scenario, tmp_path):
    (tmp_path / "cpu.toml").write_text(CPU_PROFILE)
    bad = db_scenario(profile="cpu.toml", configs=t3("standrd", '"empty"'))
    r = storlab("simulate", str(scenario(bad, "bad.toml")))
    assert r.returncode == 1 and "configs.t3" in r.stderr and "cpu_credits" in r.stderr
    assert "nearest valid value 'standard'" in r.stderr
    m5 = t3("standard", '"empty"').replace("t3.large", "m5.large")
    r = storlab("simulate", str(scenario(db_scenario(profile="cpu.toml", configs=m5), "m5.toml")))
    assert r.returncode == 1 and "earns no CPU credits" in r.stderr and "Traceback" not in r.stderr
