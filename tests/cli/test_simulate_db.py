"""`storlab simulate` with `[workload.database]`: the run record in `bench
db`'s columns, the exports, cost per 1,000 TPM, the automatic sweep, and
bad input. Expected figures come from hand calculations in the comments
(the mechanisms themselves are tested in crates/storlab-sim/tests/db.rs)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import signal
import subprocess
import sys
import time
import tomllib

import pytest

from conftest import EXAMPLES, R5_LARGE, ROOT, db_scenario

# One transaction type: 1 ms of CPU, no page reads, no commit flush, no
# dirtied pages, no concurrency penalty. On an r5.large's 2 vCPUs one user
# runs 1,000 a second (60,000 TPM); from 2 users both vCPUs are busy:
# 2,000 a second = 120,000 TPM, whatever the count. NOPM = 0.5 × TPM.
CPU_PROFILE = """
schema_version = 1
kind = "storlab-db-profile"
name = "cpu-only"
workload = "custom:cpu"
scale_unit = "scale"
metric = "nopm"
nopm_per_txn = 0.5
[data]
bytes_per_scale_unit = 1.0e8
[[transaction]]
name = "t"
share = 1.0
cpu_us = 1000.0
page_accesses = 0.0
pages_dirtied = 0.0
commits = 0.0
wal_bytes = 0.0
[mrc]
cache_fraction = [0.1, 1.0]
miss_ratio = [0.2, 0.0]
[concurrency]
alpha = 0.0
beta = 0.0
"""


def run_json(storlab, path, *extra: str) -> dict:
    r = storlab("simulate", str(path), "--json", *extra)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_record_has_bench_db_columns_and_reads_back(storlab, scenario, limits_json):
    path = scenario(db_scenario())
    rec = run_json(storlab, path)
    assert rec["engine"] == "simulate" and rec["workload"] == "tpcc-postgresql"
    assert [r["vus"] for r in rec["results"]] == [1, 2]
    for r in rec["results"]:
        # bench db's columns, then the model's own.
        for k in ("config", "job", "vus", "repeats", "nopm", "tpm", "txn", "binding", "cpu_utilization", "pools",
                  "monthly_cost_usd", "usd_per_1000_tpm"):
            assert k in r, k
        assert r["job"] == "tpcc"
        assert set(r["txn"]) == {"delivery", "new_order", "order_status", "payment", "stock_level"}
        for t in r["txn"].values():
            assert {"commits", "rollbacks", "errors", "per_min", "lat_p50_us", "lat_p99_us"} <= set(t)
            assert t["lat_p50_us"] <= t["lat_p90_us"] <= t["lat_p99_us"] <= t["lat_max_us"]
        assert set(r["pools"]) == {"data", "log"}
        # NOPM is New-Order's share of TPM (the profile's nopm_per_txn).
        share = tomllib.loads((ROOT / "python/storlab/profiles/tpcc-postgresql.toml").read_text())["nopm_per_txn"]
        assert 0.4 < share < 0.47  # TPC-C's mix: New-Order about 45 % (clause 5.2.3)
        assert r["nopm"] == pytest.approx(r["tpm"] * share, rel=1e-3)
        # The per-type rates add up to TPM.
        assert sum(t["per_min"] for t in r["txn"].values()) == pytest.approx(r["tpm"], rel=1e-3)
        # $ per 1,000 TPM = monthly cost / (TPM / 1,000); the monthly cost is
        # the one `storlab limits` gives for the config.
        monthly = limits_json(path)["configs"][0]["monthly_cost_usd"]
        assert r["monthly_cost_usd"] == monthly
        assert r["usd_per_1000_tpm"] == pytest.approx(monthly / (r["tpm"] / 1000), rel=1e-3)
    assert [t["config"] for t in rec["tipping_point"]] == ["gp3"]
    resources = {s["resource"] for s in rec["series"]}
    assert {"pool data 1 VUs", "pool log 2 VUs", "db 2 VUs"} <= resources
    assert rec["inputs"]["profile"] == "tpcc-postgresql" and rec["inputs"]["scale"] == 10
    # The record reads back through the one record type, as bench db's does.
    from storlab import api

    assert api.check_record(rec)["results"][0]["vus"] == 1


def test_cpu_bound_sweep_by_hand(storlab, scenario, tmp_path):
    (tmp_path / "cpu.toml").write_text(CPU_PROFILE)
    rec = run_json(storlab, scenario(db_scenario(profile="cpu.toml", vus="[1, 2, 4]")))
    tpm = [r["tpm"] for r in rec["results"]]
    assert tpm[0] == pytest.approx(60_000, rel=0.01)
    assert tpm[1] == pytest.approx(120_000, rel=0.01) and tpm[2] == pytest.approx(120_000, rel=0.01)
    assert rec["results"][2]["nopm"] == pytest.approx(60_000, rel=0.01)
    assert rec["results"][2]["binding"].startswith("host CPU 2 vCPUs at 100 %")
    assert rec["results"][2]["cpu_utilization"] > 0.99
    # 2 users are the tipping point: 4 gain nothing.
    assert (rec["tipping_point"][0]["vus"], rec["tipping_point"][0]["reached"]) == (2, True)
    # Where the time went: one user 1 ms on a vCPU and nothing else; four
    # users go round in 4 / 2,000 a second = 2 ms, of it 1 ms on a vCPU and
    # 1 ms waiting for one (2 users in each state, as pg_stat_activity would
    # count them).
    one, four = rec["results"][0]["time_us"], rec["results"][2]["time_us"]
    assert one["cpu"] == pytest.approx(1000, rel=0.01) and one["cpu_queue"] == pytest.approx(0, abs=5)
    assert four["cpu"] == pytest.approx(1000, rel=0.01) and four["cpu_queue"] == pytest.approx(1000, rel=0.02)
    assert four["row_locks"] == four["data_reads"] == four["commit"] == four["think"] == 0


def test_the_client_wait_adds_its_growth_outside_the_server_by_hand(storlab, scenario, tmp_path):
    # The CPU-only profile, its users' wait for the client recorded as 0 µs a
    # transaction at 1 user and 2,000 at 4: at 2 users, halfway in ln N,
    # 1,000 µs more outside the server. Two users on 2 vCPUs never queue:
    # each goes round in 1 ms of CPU and 1 ms outside, 2 / 2 ms = 1,000 a
    # second = 60,000 TPM, where without it they ran 120,000. One user is as
    # before (60,000); four go round in 1 + 2 ms at best: 4 / 3 ms = 1,333 a
    # second, 80,000 TPM at most.
    (tmp_path / "cpu.toml").write_text(CPU_PROFILE.replace("beta = 0.0", "beta = 0.0\nvus = [1, 4]\nclient_wait_us = [0.0, 2000.0]"))
    rec = run_json(storlab, scenario(db_scenario(profile="cpu.toml", vus="[1, 2, 4]")))
    tpm = [r["tpm"] for r in rec["results"]]
    assert tpm[0] == pytest.approx(60_000, rel=0.01) and tpm[1] == pytest.approx(60_000, rel=0.01)
    assert 60_000 < tpm[2] <= 80_000 * 1.01
    assert rec["results"][1]["time_us"]["outside"] == pytest.approx(1000, rel=0.01)


def test_the_log_flush_and_commits_per_flush_are_in_the_record(storlab, scenario, tmp_path):
    # The CPU-only profile committing once a transaction: one user's commit
    # starts its flush at once and returns when it ends, so its time in the
    # commit is one flush (`log_flush_us`), and each flush serves one commit.
    # With no commit there is no flush to report.
    (tmp_path / "cpu.toml").write_text(CPU_PROFILE.replace("commits = 0.0\nwal_bytes = 0.0", "commits = 1.0\nwal_bytes = 200.0"))
    (tmp_path / "none.toml").write_text(CPU_PROFILE)
    one = run_json(storlab, scenario(db_scenario(profile="cpu.toml", vus="[1]")))["results"][0]
    assert one["commits_per_flush"] == 1.0
    assert one["log_flush_us"] > 0 and one["log_flush_us"] == pytest.approx(one["time_us"]["commit"], rel=1e-3)
    none = run_json(storlab, scenario(db_scenario(profile="none.toml", vus="[1]")))["results"][0]
    assert "log_flush_us" not in none and "commits_per_flush" not in none


def test_the_tipping_point_is_the_knee_and_ignores_the_recordings_spread(storlab, scenario, tmp_path):
    """A penalty of 0.92 at 4 users makes a transaction cost 0.92 ms of CPU
    there: 2 / 0.92 ms = 2,174 a second, 130,435 TPM, 8.7 % above 2 users'
    120,000. 95 % of the highest is 123,913: 2 users fall short, so 4 users
    (the last step) are the knee and the sweep is still rising. A spread in
    the recording (5 % at each count) changes nothing: the recording
    machine's run-to-run noise is not the host's, and predictions carry
    none."""
    conc = "[concurrency]\nalpha = 0.0\nbeta = 0.0\nvus = [1, 2, 4]\npenalty = [1.0, 1.0, 0.92]\nthroughput = [1000.0, 2000.0, 2174.0]\n"
    (tmp_path / "p.toml").write_text(CPU_PROFILE.replace("[concurrency]\nalpha = 0.0\nbeta = 0.0\n", conc))
    rec = run_json(storlab, scenario(db_scenario(profile="p.toml", vus="[1, 2, 4]"), "a.toml"))
    assert [r["tpm"] for r in rec["results"]] == pytest.approx([60_000, 120_000, 130_435], rel=0.01)
    assert (rec["tipping_point"][0]["vus"], rec["tipping_point"][0]["reached"]) == (4, False)
    (tmp_path / "p.toml").write_text(CPU_PROFILE.replace("[concurrency]\nalpha = 0.0\nbeta = 0.0\n",
                                                         conc + "throughput_stdev = [50.0, 100.0, 108.7]\n"))
    rec = run_json(storlab, scenario(db_scenario(profile="p.toml", vus="[1, 2, 4]"), "b.toml"))
    assert "nopm_stdev" not in rec["results"][2] and "tpm_stdev" not in rec["results"][2]
    assert (rec["tipping_point"][0]["vus"], rec["tipping_point"][0]["reached"]) == (4, False)
    assert any("95 % of the sweep's highest" in a for a in rec["inputs"]["assumptions"]), rec["inputs"]


def test_auto_sweep_steps_by_root_two_and_stops_two_steps_past_the_best(storlab, scenario, tmp_path):
    (tmp_path / "cpu.toml").write_text(CPU_PROFILE)
    rec = run_json(storlab, scenario(db_scenario(profile="cpu.toml", vus='"auto"')))
    # √2 steps: 1, 2 (1.41 and 2 round to 1 and 2), 3 (2.83), 4, ... The best,
    # 120,000 TPM, comes at 2; 3 and 4 gain nothing, so the sweep stops at 4.
    assert [r["vus"] for r in rec["results"]] == [1, 2, 3, 4]
    assert rec["tipping_point"][0]["vus"] == 2


def test_table_csv_and_cloudwatch(storlab, scenario, tmp_path):
    path = scenario(db_scenario())
    r = storlab("simulate", str(path))
    assert r.returncode == 0, r.stderr
    for needle in ("VUs", "NOPM", "TPM", "new_order p50 / p99", "CPU", "pool data", "pool log", "binding",
                   "tipping point", "per 1,000 TPM"):
        assert needle in r.stdout, needle
    r = storlab("simulate", str(path), "--csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [row["vus"] for row in rows] == ["1", "2"]
    for k in ("nopm", "tpm", "data_read_iops", "log_write_bytes_s", "new_order_p99_us", "usd_per_1000_tpm", "binding"):
        assert k in rows[0], k
    cw = tmp_path / "cw.json"
    assert storlab("simulate", str(path), "--cloudwatch", str(cw)).returncode == 0
    labels = [m["Label"] for m in json.loads(cw.read_text())["MetricDataResults"]]
    assert "gp3 pool data 2 VUs VolumeReadOps" in labels and "gp3 db 1 VUs Transactions" in labels


def test_a_missing_price_stays_missing(storlab, scenario):
    # No price for r5.large with SQL Server Enterprise licence-included in
    # the catalog: no monthly cost, no $ per 1,000 TPM, and a note.
    cfg = R5_LARGE.replace('"aws/ec2/r5.large"', '"aws/ec2/r5.large"\nlicense = "windows-sql-enterprise"')
    path = scenario(db_scenario(vus="[1]", configs=cfg))
    rec = run_json(storlab, path)
    r = rec["results"][0]
    assert r.get("monthly_cost_usd") is None and r.get("usd_per_1000_tpm") is None
    assert any("no monthly cost" in w and "windows-sql-enterprise" in w for w in rec["warnings"]), rec["warnings"]
    assert "monthly cost not known" in storlab("simulate", str(path)).stdout


def test_no_log_pool_logs_on_data_and_says_so(storlab, scenario):
    cfg = '[configs.one]\nhost = "aws/ec2/r5.large"\n[[configs.one.pools]]\nrole = "data"\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n'
    rec = run_json(storlab, scenario(db_scenario(vus="[2]", configs=cfg)))
    assert any("no log pool" in w for w in rec["warnings"])
    data = rec["results"][0]["pools"]["data"]
    assert data["write_iops"] > 0 and set(rec["results"][0]["pools"]) == {"data"}


def test_the_insert_storm_says_when_every_users_rows_are_in(storlab, scenario):
    # 3 users × 20,000 rows = 60,000 rows; no bucket empties on the gp3,
    # so one rate holds: 60,000 / (rows a minute / 60) seconds.
    path = scenario(db_scenario(profile="insert-postgresql", scale="1000000", vus="[3]",
                                extra="rows_per_user = 20000"))
    rec = run_json(storlab, path)
    r = rec["results"][0]
    assert r["rows_target"] == 60000 and not r.get("phases")
    assert r["finish_s"] == pytest.approx(60000 / (r["rows_per_min"] / 60), abs=0.1)
    assert "3 VUs × their rows: 60,000 rows all in after" in storlab("simulate", str(path)).stdout
    # Only an insert storm's profile has rows to finish.
    fails(storlab, scenario(db_scenario(extra="rows_per_user = 20000"), name="tpcc.toml"), "rows_per_user",
          "not an insert storm's")


def fails(storlab, path, *needles):
    r = storlab("simulate", str(path))
    assert r.returncode == 1, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("error: ")
    for n in needles:
        assert n in err, (n, err)


def test_unknown_profile_lists_the_shipped_ones(storlab, scenario):
    fails(storlab, scenario(db_scenario(profile="tpcc-postgres")), "s.toml", "workload.database.profile",
          "unknown profile 'tpcc-postgres'", "did you mean 'tpcc-postgresql'",
          "insert-postgresql, sysbench-read-only-postgresql, sysbench-read-write-postgresql, tpcb-postgresql, "
          "tpcc-mariadb, tpcc-postgresql, tpce-postgresql")


def test_profile_of_another_schema_version(storlab, scenario, tmp_path):
    (tmp_path / "v2.toml").write_text(CPU_PROFILE.replace("schema_version = 1", "schema_version = 2"))
    fails(storlab, scenario(db_scenario(profile="v2.toml")), "s.toml", "workload.database.profile", "v2.toml",
          "schema_version 2 is not supported", "schema_version 1")


def test_scale_zero(storlab, scenario):
    fails(storlab, scenario(db_scenario(scale="0")), "s.toml", "workload.database.scale", "0 warehouses",
          "nearest valid value 1")


@pytest.mark.parametrize("vus,field", [("[0]", "workload.database.vus[0]"), ("[]", "workload.database.vus"),
                                       ("[4, -2]", "workload.database.vus[1]")])
def test_bad_vus(storlab, scenario, vus, field):
    fails(storlab, scenario(db_scenario(vus=vus)), "s.toml", field, "1")


def test_cold_cache_is_true_or_false(storlab, scenario):
    fails(storlab, scenario(db_scenario(extra='cold_cache = "yes"')), "s.toml", "workload.database.cold_cache",
          '"yes"', "give true", "or false")


def test_a_cold_cache_is_said_and_says_when_it_was_full(storlab, scenario):
    # tpcc-postgresql at 1 warehouse on an r5.large: 75 % of its 16 GiB
    # holds the data, so a cold cache fills and is full within 31 s; a warm
    # one has no cache_full_s. A cold run's first seconds read every page
    # they touch, so it runs fewer transactions than a warm one.
    def text(extra: str) -> str:
        return db_scenario(scale="1", vus="[4]", extra=extra).replace("duration_s = 10", "duration_s = 30")
    cold = run_json(storlab, scenario(text("cold_cache = true"), name="cold.toml"))
    warm = run_json(storlab, scenario(text(""), name="warm.toml"))
    assert any(a.startswith("cold_cache: the database's cache") for a in cold["inputs"]["assumptions"])
    assert any(a.startswith("the caches are warm from the start") for a in warm["inputs"]["assumptions"])
    (c,), (w,) = cold["results"], warm["results"]
    assert "cache_full_s" not in w
    assert 0 < c["cache_full_s"] < 31, c.get("cache_full_s")
    assert c["tpm"] < 0.95 * w["tpm"], (c["tpm"], w["tpm"])


def test_home_warehouses_is_round_robin_or_random(storlab, scenario):
    fails(storlab, scenario(db_scenario(extra='home_warehouses = "hammerdb"')), "s.toml",
          "workload.database.home_warehouses", "'hammerdb'", '"round-robin"', '"random"')
    # HammerDB's draw: 8 users on 8 warehouses share some (8! / 8^8 = 0.24 %
    # chance they do not), so some wait for another's row, where round-robin
    # gives each its own. (The throughput can go either way: fewer home
    # warehouses in use also dirty fewer pages for the checkpoints.)
    rr = run_json(storlab, scenario(db_scenario(scale="8", vus="[8]")))["results"][0]
    rnd = run_json(storlab, scenario(db_scenario(scale="8", vus="[8]", extra='home_warehouses = "random"')))["results"][0]
    assert rr["time_us"]["row_locks"] == 0.0 and rnd["time_us"]["row_locks"] > 0.0, (rr["time_us"], rnd["time_us"])


def test_no_pool_for_the_data(storlab, scenario):
    cfg = '[configs.logonly]\nhost = "aws/ec2/r5.large"\n[[configs.logonly.pools]]\nrole = "log"\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n'
    fails(storlab, scenario(db_scenario(configs=cfg)), "s.toml", "configs.logonly.pools", 'role = "data" or "all"',
          "this config has log")


def test_io_fields_beside_a_database_workload(storlab, scenario):
    fails(storlab, scenario('[workload]\nprofile = "cdm-default"\n' + db_scenario()), "s.toml", "workload.profile",
          "not used with [workload.database]")


def test_ctrl_c_keeps_the_finished_steps(scenario):
    path = scenario(db_scenario(vus="[1, 2, 4, 8, 16, 32, 64, 128]", extra="").replace("duration_s = 10", "duration_s = 3600"))
    p = subprocess.Popen([sys.executable, "-m", "storlab.cli", "simulate", str(path), "--json"], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait for the simulation's worker thread (storlab-py's off_gil), so the
    # signal reaches a running simulation, not Python's start-up.
    from pathlib import Path

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        comms = []
        for c in Path(f"/proc/{p.pid}/task").glob("*/comm"):
            try:
                comms.append(c.read_text().strip())
            except OSError:  # a thread that just ended
                pass
        if "storlab-work" in comms:
            break
        time.sleep(0.1)
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    rec = json.loads(out)
    assert rec["interrupted"] is True
    assert 1 <= len(rec["results"]) < 8


def shortened(text: str) -> str:
    """An example with 5 s per VU count, so the test stays quick."""
    import re

    text = re.sub(r"(?m)^duration_s = .*$", "duration_s = 5", text)
    return re.sub(r"(?m)^rampup_s = .*$", "rampup_s = 1", text)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("db-*.toml")), ids=lambda p: p.name)
def test_database_examples_simulate(storlab, scenario, path):
    rec = run_json(storlab, scenario(shortened(path.read_text()), name=path.name))
    configs = {r["config"] for r in rec["results"]}
    assert len(configs) >= 2, path.name
    # A sweep has TPM per VU count; an import a load time per config.
    assert all((r.get("tpm") or 0) > 0 or (r.get("runtime_s") or 0) > 0 for r in rec["results"]), path.name


def test_gp2_example_nopm_falls_when_the_burst_runs_out(storlab):
    rec = run_json(storlab, EXAMPLES / "db-tpcc-gp2-burst.toml")

    def series(config, resource, metric):
        return next(s["values"] for s in rec["series"]
                    if (s["config"], s["resource"], s["metric"]) == (config, resource, metric))

    bal = series("gp2", "pool data 4 VUs", "BurstBalance")
    ops = [r + w for r, w in zip(series("gp2", "pool data 4 VUs", "VolumeReadOps"),
                                 series("gp2", "pool data 4 VUs", "VolumeWriteOps"))]
    txn = series("gp2", "db 4 VUs", "Transactions")
    # gp2's rules (EBS user guide): 5.4 M credits; each second the volume
    # spends its I/Os and earns its baseline, 3 × 200 GiB = 600. So the
    # balance at the end of minute k is 100 × (1 − Σ (ops − 600 × 60) / 5.4 M).
    empty = next(i for i, v in enumerate(bal) if v < 0.01)
    spent = 0.0
    for k in range(empty):
        spent += ops[k] - 600 * 60
        assert bal[k] == pytest.approx(100 * (1 - spent / 5.4e6), abs=0.5), k
    # Then the volume runs at its 600 IOPS baseline, and the transactions
    # fall with the reads: a transaction's data reads are synchronous, the
    # same number before and after (the background writer, which does not
    # hold a transaction up, falls behind instead).
    # Minute by minute the mix varies (a Stock-Level reads far more than a
    # Payment), so compare the averages of the whole minutes on each side.
    reads = series("gp2", "pool data 4 VUs", "VolumeReadOps")
    assert ops[empty + 2] / 60 == pytest.approx(600, rel=0.03)
    before, after = slice(2, empty - 1), slice(empty + 2, len(txn) - 1)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    assert mean(txn[after]) / mean(txn[before]) == pytest.approx(mean(reads[after]) / mean(reads[before]), rel=0.03)
    assert txn[empty + 2] < 0.3 * txn[5]
    # The gp3 holds its 3,000 IOPS: no fall.
    gp3 = series("gp3", "db 4 VUs", "Transactions")
    assert gp3[-2] == pytest.approx(gp3[5], rel=0.05)
    # The result splits where the bucket empties: inside minute `empty`
    # (its balance, read at the minute's end, is the first at 0), and the
    # stretch after it runs at the 600 IOPS baseline.
    gp2 = next(r for r in rec["results"] if r["config"] == "gp2")
    before, after = gp2["phases"]
    assert empty * 60 <= before["to_s"] <= (empty + 1) * 60, (empty, before["to_s"])
    data = after["pools"]["data"]
    assert data["read_iops"] + data["write_iops"] == pytest.approx(600, rel=0.03)
    assert after["emptied"] == ["device aws/ebs/gp2 (200 GiB): baseline 600 IOPS"]
    # The stretches' NOPM, weighted by their lengths, make the whole's.
    whole = (before["nopm"] * (before["to_s"] - before["from_s"]) + after["nopm"] * (after["to_s"] - after["from_s"])) / 3000
    assert whole == pytest.approx(gp2["nopm"], rel=0.01)
    assert not any("BurstBalance reached 0" in w for w in rec["warnings"]), "the phases tell it, not a warning"
    assert any(a["to"] == "ALARM" and a["config"] == "gp2" for a in rec["alarms"])


def import_profile(cpu_us_per_mib: float, wal: float, table: float = 0.0, index: float = 0.0) -> str:
    return (f'schema_version = 1\nkind = "storlab-import-profile"\nname = "t"\nworkload = "import"\n'
            f"cpu_us_per_mib = {cpu_us_per_mib}\n[per_input_byte]\nwal_bytes = {wal}\ntable_bytes = {table}\n"
            f"index_bytes = {index}\n")


def import_scenario(streams: int, host: str = "aws/ec2/r5.large", data: str = "", log: str = "",
                    size: str = "1", profile: str = "imp.toml") -> str:
    return (f'[workload.import]\nprofile = "{profile}"\nsize_gib = {size}\nstreams = {streams}\n'
            f'[configs.a]\nhost = "{host}"\n[[configs.a.pools]]\nrole = "data"\ndevice = "aws/ebs/gp3"\nsize_gib = 500\n{data}'
            f'[[configs.a.pools]]\nrole = "log"\ndevice = "aws/ebs/gp3"\nsize_gib = 500\n{log}')


def test_import_cpu_bound_by_hand(storlab, scenario, tmp_path):
    # 100 ms of CPU per MiB, nothing written: 4 streams on an r5.large's
    # 2 vCPUs keep both busy, so 1,024 MiB take 1,024 × 0.1 s / 2 = 51.2 s.
    (tmp_path / "imp.toml").write_text(import_profile(100_000, 0.0))
    rec = run_json(storlab, scenario(import_scenario(4)))
    r = rec["results"][0]
    assert r["job"] == "import" and r["runtime_s"] == pytest.approx(51.2, rel=0.03)
    assert r["bw_bytes_s"] == pytest.approx(2**30 / 51.2, rel=0.03)
    assert r["binding"].startswith("CPU: 4 COPY streams") or r["binding"].startswith("host CPU 2 vCPUs")
    # One stream uses one vCPU at most: 102.4 s of CPU, plus its 1,024 reads.
    one = run_json(storlab, scenario(import_scenario(1)))["results"][0]
    assert one["runtime_s"] >= 102.4 and one["binding"].startswith("CPU: 1 COPY stream")


def test_import_wal_bound_by_hand(storlab, scenario, tmp_path):
    # 2 bytes of WAL per input byte on a gp3 log at its 125 MiB/s: the
    # input goes in at 125 / 2 = 62.5 MiB/s, so 1 GiB takes 1,024 / 62.5 =
    # 16.4 s (1 ms of CPU per MiB and a data gp3 at 1,000 MiB/s do not bind).
    (tmp_path / "imp.toml").write_text(import_profile(1000, 2.0))
    rec = run_json(storlab, scenario(import_scenario(8, host="aws/ec2/r5b.24xlarge",
                                                     data="iops = 16000\nthroughput_mib_s = 1000\n")))
    r = rec["results"][0]
    assert r["runtime_s"] == pytest.approx(16.4, rel=0.03)
    assert r["pools"]["log"]["write_bytes_s"] == pytest.approx(125 * 2**20, rel=0.03)
    assert r["binding"].startswith("log pool: device aws/ebs/gp3"), r["binding"]
    out = storlab("simulate", str(scenario(import_scenario(8, host="aws/ec2/r5b.24xlarge")))).stdout
    assert "load time" in out and "input MB/s" in out


@pytest.mark.parametrize("engine, warned", [("db2", True), ("postgres", False)])
def test_an_import_on_another_engine_says_whose_profile_it_runs(storlab, scenario, engine, warned):
    # import-postgresql was recorded on PostgreSQL (provenance.database): a
    # config naming Db2 runs PostgreSQL's COPY figures and says so, with a
    # fix a Db2 user can take; one naming PostgreSQL says nothing.
    text = import_scenario(1, profile="import-postgresql").replace('host = "aws/ec2/r5.large"', f'host = "aws/ec2/r5.large"\nengine = "{engine}"')
    rec = run_json(storlab, scenario(text))
    said = [w for w in rec["warnings"] if "simulated with the postgres profile import-postgresql" in w]
    if warned:
        assert len(said) == 1 and 'engine = "db2"' in said[0] and "storlab cannot run db2" in said[0], rec["warnings"]
    else:
        assert not said, rec["warnings"]


def test_import_bad_input(storlab, scenario, tmp_path):
    (tmp_path / "imp.toml").write_text(import_profile(1000, 2.0))
    fails(storlab, scenario(import_scenario(1, size="0")), "s.toml", "workload.import.size_gib", "must be above 0")
    fails(storlab, scenario(import_scenario(1, profile="import-postgres")), "workload.import.profile",
          "did you mean 'import-postgresql'")
    fails(storlab, scenario(import_scenario(1).replace("streams = 1", 'streams = 1\ninput_pool = "tempdb"')),
          "configs.a.pools", 'role = "tempdb" or "all"')


@pytest.mark.parametrize("example", ["db-tpcc-fsx-vs-io2.toml", "db-import-gp3-log.toml"])
def test_csv_columns_are_documented(storlab, example):
    """Every column simulate --csv prints for a database sweep or an import
    is in docs/record.md's CSV table: by name, or as `<role>_...` (a pool
    role's figures) or `<type>_...` (a transaction type's)."""
    import re

    section = (ROOT / "docs" / "record.md").read_text().split("## CSV", 1)[1]
    documented = set(re.findall(r"`([a-z0-9_<>]+)`", section))
    r = storlab("simulate", str(ROOT / "examples" / example), "--csv")
    assert r.returncode == 0, r.stderr
    header = next(csv.reader(io.StringIO(r.stdout)))
    roles = {"data", "log", "tempdb", "all"}
    types = {c.removesuffix("_per_min") for c in header if c.endswith("_per_min") and c != "rows_per_min"}
    assert any(c.startswith("data_") for c in header), "pool columns expected"
    for col in header:
        pre = next((p for p in sorted(roles | types, key=len, reverse=True) if col.startswith(p + "_")), None)
        generic = None if pre is None else ("<role>_" if pre in roles else "<type>_") + col[len(pre) + 1:]
        assert col in documented or generic in documented, col


def test_dirtied_pages_are_written_in_steady_state_or_once_of_age(storlab, scenario, tmp_path):
    # A negative delay is refused in one line, with the nearest valid value.
    fails(storlab, scenario(db_scenario(extra="writeback_delay_s = -5")), "s.toml",
          "workload.database.writeback_delay_s", "-5", "nearest valid value 0")
    # The CPU-only profile with 0.5 dirtied pages a transaction: one user,
    # 1,000 transactions a second on the r5.large, so 500 data writes a
    # second of 8 KiB, in a sweep's steady state (the default) — none in a
    # window that ends at 11 s on a freshly started server
    # (writeback_delay_s = 30), and the assumptions say so.
    (tmp_path / "d.toml").write_text(CPU_PROFILE.replace("pages_dirtied = 0.0", "pages_dirtied = 0.5"))
    now = run_json(storlab, scenario(db_scenario(profile="d.toml", vus="[1]")))
    assert now["inputs"]["writeback_delay_s"] == 0
    r = now["results"][0]
    assert r["tpm"] == pytest.approx(60_000, rel=0.01)
    data = r["pools"]["data"]
    assert data["write_iops"] == pytest.approx(500, rel=0.02)
    assert data["write_bytes_s"] == pytest.approx(500 * 8192, rel=0.02)
    fresh = run_json(storlab, scenario(db_scenario(profile="d.toml", vus="[1]", extra="writeback_delay_s = 30")))
    assert fresh["results"][0]["pools"]["data"]["write_iops"] == 0
    assert any("30 s old" in a and "first 10 s write none" in a for a in fresh["inputs"]["assumptions"]), \
        fresh["inputs"]["assumptions"]


@pytest.mark.parametrize("line,named", [('engine = "mysql"', 'engine = "mysql"'),
                                        ('engine = "sqlserver"', 'engine = "sqlserver"'),
                                        ('license = "windows-sql-standard"', 'license = "windows-sql-standard"'),
                                        ('engine = "postgres"', None), ("", None)])
def test_another_engines_profile_is_said_in_the_record_and_the_table(storlab, scenario, line, named):
    # tpcc-postgresql was recorded on PostgreSQL (its provenance.database):
    # a config that names another engine, or SQL Server by its licence, runs
    # PostgreSQL's figures and must say so; one that names PostgreSQL, or
    # none, must not.
    cfg = R5_LARGE.replace('"aws/ec2/r5.large"', f'"aws/ec2/r5.large"\n{line}')
    path = scenario(db_scenario(vus="[1]", configs=cfg))
    rec = run_json(storlab, path)
    said = [w for w in rec["warnings"] if "simulated with the postgres profile tpcc-postgresql" in w]
    if named is None:
        assert not said, rec["warnings"]
    else:
        assert len(said) == 1 and named in said[0], rec["warnings"]
        assert "simulated with the postgres profile" in storlab("simulate", str(path)).stdout
        # storlab runs MySQL's fork (MariaDB) itself; SQL Server it cannot:
        # the fix offered is one a user can take.
        if "mysql" in line:
            assert "bench db --profile-out" in said[0], said[0]
        else:
            assert "bench db --profile-out" not in said[0] and "storlab cannot run sqlserver" in said[0], said[0]
            assert "storlab import hammerdb.log" in said[0], said[0]


def test_repeats_give_the_models_own_seed_to_seed_spread(storlab, scenario):
    path = scenario(db_scenario(vus="[1, 4, 8]"))
    once = run_json(storlab, path)
    one = run_json(storlab, path, "--repeats", "1")
    three = run_json(storlab, path, "--repeats", "3")
    # One repeat is the run of none: the same seed, the same figures.
    assert [r["nopm"] for r in one["results"]] == [r["nopm"] for r in once["results"]]
    assert all(r["repeats"] == 1 and r.get("nopm_stdev") is None for r in once["results"])
    for r0, r3 in zip(once["results"], three["results"]):
        assert r3["repeats"] == 3
        # Other seeds move the figures a little: a spread above zero, well
        # under the figure itself; the mean of three is not the first seed's.
        assert 0 < r3["nopm_stdev"] < 0.05 * r3["nopm"], r3
        assert r3["nopm"] != r0["nopm"]
        assert abs(r3["nopm"] - r0["nopm"]) < 4 * r3["nopm_stdev"] + 0.05 * r0["nopm"]
    # The tipping point takes the top step's repeats as its noise.
    assert all("repeats' noise" in t["note"] or not t["reached"] for t in three["tipping_point"]), three["tipping_point"]


def test_repeats_are_refused_where_they_mean_nothing(storlab):
    r = storlab("simulate", str(EXAMPLES / "azure-ds4-p30-host-cache.toml"), "--repeats", "3")
    assert r.returncode == 1 and "--repeats: applies to database workloads" in r.stderr, r.stderr
    r = storlab("simulate", str(EXAMPLES / "db-tpcc-gp2-burst.toml"), "--repeats", "1000")
    assert r.returncode == 1 and "nearest valid value 100" in r.stderr, r.stderr


@pytest.mark.parametrize("setting,needles", [
    ("innodb_flush_neighbors = 1", ["settings.innodb_flush_neighbors", "the database model reads innodb_doublewrite", "nearest valid value 'innodb_"]),
    ('innodb_io_capacity_max = "fast"', ["settings.innodb_io_capacity_max", "'fast'", "nearest valid value '2000'"]),
    ('innodb_log_file_size = "96 parsecs"', ["settings.innodb_log_file_size", "nearest valid value '96M'"]),
    ('innodb_doublewrite = "maybe"', ["settings.innodb_doublewrite", "nearest valid value 'ON'"]),
])
def test_a_setting_the_model_cannot_read_is_refused_with_the_nearest(storlab, scenario, setting, needles):
    cfg = R5_LARGE.replace('"aws/ec2/r5.large"', f'"aws/ec2/r5.large"\nsettings = {{ {setting} }}')
    fails(storlab, scenario(db_scenario(profile="tpcc-mariadb", vus="[1]", configs=cfg)), "s.toml", *needles)


def test_the_page_cleaners_settings_are_said_with_where_they_came_from(storlab, scenario):
    # tpcc-mariadb was recorded with MariaDB's defaults (2000 pages a second,
    # a 96 MiB redo log: 10 % of it is 9.6 MiB); the config's own value wins.
    cfg = R5_LARGE.replace('"aws/ec2/r5.large"', '"aws/ec2/r5.large"\nsettings = { innodb_io_capacity_max = 400 }')
    rec = run_json(storlab, scenario(db_scenario(profile="tpcc-mariadb", vus="[1]", configs=cfg)))
    (said,) = [a for a in rec["inputs"]["assumptions"] if "page cleaner" in a]
    assert "up to 400 pages a second (innodb_io_capacity_max, the config's settings)" in said, said
    assert "under 10 MiB (10 % of the 96 MiB redo log" in said, said


def test_rds_for_mariadb_and_mysql_is_priced_by_its_engine(storlab, scenario):
    # RDS db.r5.large for MariaDB or MySQL, us-east-1: $0.24 an hour (the
    # AWS Price List as ec2instances.info's rds/instances.json gives it),
    # × 730 h = $175.20, plus 100 GiB of RDS gp3 at $0.115 a GiB-month
    # ($11.50): $186.70 a month. A class the catalog has no price for says so.
    cfg = "".join(f'\n[configs.{e}]\nhost = "aws/rds/db.r5.large"\nregion = "aws/us-east-1"\nengine = "{e}"\n'
                  f'[[configs.{e}.pools]]\nrole = "all"\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n' for e in ("mariadb", "mysql"))
    cfg += '\n[configs.m6i]\nhost = "aws/rds/db.m6i.large"\nregion = "aws/us-east-1"\nengine = "mysql"\n' \
           '[[configs.m6i.pools]]\nrole = "all"\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n'
    rec = run_json(storlab, scenario(db_scenario(profile="tpcc-mariadb", vus="[1]", configs=cfg)))
    cost = {r["config"]: r.get("monthly_cost_usd") for r in rec["results"]}
    assert cost["mariadb"] == pytest.approx(186.70, abs=0.01) and cost["mysql"] == pytest.approx(186.70, abs=0.01), cost
    assert cost.get("m6i") is None
    assert any("aws/rds/db.m6i.large (engine mysql)" in w and "no price" in w for w in rec["warnings"]), rec["warnings"]


def test_innodbs_cache_is_the_buffer_pool_the_config_gives_it(storlab, scenario):
    # tpcc-mariadb's data at 10 warehouses: 10 × bytes_per_scale_unit +
    # fixed_bytes (its [data]). A 128 MiB buffer pool (134,217,728 bytes)
    # holds that share of it, whatever the host's memory (InnoDB reads past
    # the kernel's cache, O_DIRECT); without the setting the cache is 75 %
    # of the r5.large's 16 GiB, 12 GiB, and holds all of it.
    data = tomllib.loads((ROOT / "python/storlab/profiles/tpcc-mariadb.toml").read_text())["data"]
    share = 134217728 / (10 * data["bytes_per_scale_unit"] + data["fixed_bytes"])
    cfg = R5_LARGE.replace('"aws/ec2/r5.large"', '"aws/ec2/r5.large"\nsettings = { innodb_buffer_pool_size = "128M" }')
    rec = run_json(storlab, scenario(db_scenario(profile="tpcc-mariadb", vus="[1]", configs=cfg)))
    (said,) = [a for a in rec["inputs"]["assumptions"] if "database cache" in a]
    assert "database cache 0.1 GiB (innodb_buffer_pool_size, the config's settings)" in said, said
    assert f"{share:.2f} of the data cached" in said and share < 0.2, said
    rec = run_json(storlab, scenario(db_scenario(profile="tpcc-mariadb", vus="[1]")))
    (said,) = [a for a in rec["inputs"]["assumptions"] if "database cache" in a]
    assert "database cache 12.0 GiB (75 % of 16 GiB host memory)" in said and "1.00 of the data cached" in said, said


def test_a_striped_pools_binding_names_its_count_once(storlab, scenario):
    # Four 125 GiB gp2 volumes from empty buckets: 3 IOPS a GiB, 375 each
    # (the vendor's baseline). 3,000 warehouses on an m5.large's 6 GiB of
    # cache miss on most reads, so the stripe's baseline binds.
    text = ('region = "aws/us-east-1"\nbuckets_at_start = "empty"\n[workload.database]\nprofile = "tpcc-postgresql"\n'
            'scale = 3000\nvus = [4]\nrampup_s = 5\nduration_s = 30\n[configs.four]\nhost = "aws/ec2/m5.large"\n'
            '[[configs.four.pools]]\ndevice = "aws/ebs/gp2"\nsize_gib = 125\ncount = 4\nlayout = "stripe"\n')
    b = run_json(storlab, scenario(text))["results"][0]["binding"]
    assert "device aws/ebs/gp2 (125 GiB) × 4: baseline 375 IOPS each" in b, b
    assert b.count("4 ×") + b.count("× 4") == 1, b


def test_an_import_held_by_a_busy_limit_names_it(storlab):
    # The example's defaults: the data gp3 at its 3,000 IOPS default is
    # the busiest limit while the COPY streams wait for the writers; the
    # binding names it, not "write latency".
    rec = json.loads(storlab("simulate", str(EXAMPLES / "db-import-gp3-log.toml"), "--json").stdout)
    r = next(x for x in rec["results"] if x["config"] == "defaults")
    assert "the writers held by data pool: device aws/ebs/gp3 (500 GiB): 3000 IOPS" in r["binding"], r["binding"]
    assert not r["binding"].startswith("write latency")


@pytest.mark.parametrize("profile, engine, page, rules", [
    ("tpcc-postgresql", "sqlserver", 8192, "I/O rules: SQL Server, from documentation"),
    ("tpcc-postgresql", "db2", 4096, "I/O rules: Db2, from documentation"),
    ("tpcc-mariadb", "sqlserver", 8192, "I/O rules: SQL Server, from documentation"),
    ("tpcc-mariadb", "mariadb", 16384, None),
    ("tpcc-postgresql", "postgres", 8192, None),
])
def test_sql_server_and_db2_run_by_their_documented_io_rules(storlab, scenario, profile, engine, page, rules):
    # A cache miss reads one page of the engine's size: SQL Server's pages are
    # 8 KiB ("Pages and extents architecture guide"), Db2's CREATE DATABASE
    # default 4 KiB, InnoDB's 16 KiB, PostgreSQL's 8 KiB. With 64 MiB of cache
    # for 10 warehouses (~1 GB) nearly every transaction misses, so the data
    # pool's read bytes over its read IOPS is the page, whatever the engine
    # the profile was recorded on.
    cfg = R5_LARGE.replace('"aws/ec2/r5.large"', f'"aws/ec2/r5.large"\nengine = "{engine}"')
    rec = run_json(storlab, scenario(db_scenario(profile=profile, vus="[4]", extra="db_memory_gib = 0.0625", configs=cfg)))
    data = rec["results"][0]["pools"]["data"]
    assert data["read_iops"] > 100, data
    assert data["read_bytes_s"] / data["read_iops"] == pytest.approx(page, rel=1e-3)
    said = [a for a in rec["inputs"]["assumptions"] if "I/O rules:" in a]
    if rules is None:
        assert not said, rec["inputs"]["assumptions"]
    else:
        assert len(said) == 1 and rules in said[0] and "recording" in said[0], said
        # The record says whose figures are whose: the I/O rules the
        # engine's documentation's, the CPU the recording's.
        warned = [w for w in rec["warnings"] if "simulated with the" in w]
        assert len(warned) == 1 and "I/O rules are" in warned[0] and "storlab cannot run" in warned[0], rec["warnings"]
        # InnoDB's doublewrite and page cleaner are InnoDB's: not SQL Server's.
        assert not [a for a in rec["inputs"]["assumptions"] if "InnoDB write path" in a], rec["inputs"]["assumptions"]


def test_sql_server_writes_its_log_in_blocks_of_at_most_60_kib(storlab, scenario):
    # SQL Server writes log blocks of 512 B to 60 KiB, several in flight; a
    # PostgreSQL flush goes in writes of up to 1 MiB. 256 users on 30
    # warehouses commit in large groups: the log pool's mean write on SQL
    # Server's rules must stay at or under 60 KiB, and under PostgreSQL's
    # rules exceed it.
    def mean_log_write(engine: str) -> float:
        cfg = R5_LARGE.replace('"aws/ec2/r5.large"', f'"aws/ec2/r5.4xlarge"\nengine = "{engine}"')
        rec = run_json(storlab, scenario(db_scenario(scale="30", vus="[256]", configs=cfg)))
        log = rec["results"][0]["pools"]["log"]
        return log["write_bytes_s"] / log["write_iops"]
    assert mean_log_write("sqlserver") <= 61440 * 1.001
    assert mean_log_write("postgres") > 61440


def test_a_tpce_like_profile_is_simulated_in_tpse(storlab, scenario, tmp_path):
    # tpsE is Trade-Result's commits a second: TPM × Trade-Result's share of
    # the mix (the profile's own) / 60, in each result, the table and the
    # tipping point's note.
    prof = tomllib.loads((ROOT / "python" / "storlab" / "profiles" / "tpce-postgresql.toml").read_text())
    assert prof["headline"] == {"name": "tpsE", "transaction": "trade_result", "per_s": 1.0}
    share = next(t["share"] for t in prof["transaction"] if t["name"] == "trade_result")
    assert share == pytest.approx(0.1, abs=0.02)  # TPC-E's 10 %, as recorded
    path = scenario(db_scenario(profile="tpce-postgresql", scale="20", vus="[1, 4, 16]"))
    rec = run_json(storlab, path)
    assert rec["inputs"]["metric"] == "headline"
    for r in rec["results"]:
        assert r["headline_name"] == "tpsE"
        assert r["headline"] == pytest.approx(r["tpm"] * share / 60, rel=1e-3)
    assert all("tpsE" in t["note"] for t in rec["tipping_point"] if t.get("reached", True)), rec["tipping_point"]
    out = storlab("simulate", str(path)).stdout
    assert "tpsE" in out
    # A headline naming a transaction the profile lacks is refused with the nearest.
    text = (ROOT / "python" / "storlab" / "profiles" / "tpce-postgresql.toml").read_text().replace(
        'transaction = "trade_result"', 'transaction = "trade_resul"')
    (tmp_path / "bad.toml").write_text(text)
    bad = tmp_path / "s.toml"
    bad.write_text(db_scenario(profile=str(tmp_path / "bad.toml"), vus="[1]"))
    r = storlab("simulate", str(bad))
    assert r.returncode != 0 and "headline.transaction" in r.stderr and "'trade_result'" in r.stderr, r.stderr


def test_the_host_read_cache_serves_the_buffer_pools_misses_by_hand(storlab, scenario, tmp_path):
    # One user, 10 page accesses and nothing else a transaction, on a
    # DS4_v2 (host cache 344 GiB) with one P30. The data: 688 units of
    # 1 GiB = 688 GiB; the database cache 6.88 GiB = 0.01 of it, where the
    # curve misses 0.5: 5 reads a transaction. The host cache holds 344 /
    # 688 = 0.5 of the data, where the curve misses 0.1, so with ReadOnly
    # caching 1 - 0.1 / 0.5 = 80 % of those reads are hits and 20 % go to
    # the disk; with caching None all 5 go to the disk.
    prof = CPU_PROFILE.replace("cpu_us = 1000.0", "cpu_us = 1.0").replace("page_accesses = 0.0", "page_accesses = 10.0")
    prof = prof.replace("bytes_per_scale_unit = 1.0e8", "bytes_per_scale_unit = 1073741824.0")
    prof = prof.replace("cache_fraction = [0.1, 1.0]\nmiss_ratio = [0.2, 0.0]", "cache_fraction = [0.01, 0.5, 1.0]\nmiss_ratio = [0.5, 0.1, 0.0]")
    (tmp_path / "reads.toml").write_text(prof)
    cfg = """
[configs.{name}]
host = "azure/vm/Standard_DS4_v2"
[[configs.{name}.pools]]
role = "all"
device = "azure/premium-ssd/P30"
host_cache = "{mode}"
"""
    configs = cfg.format(name="cached", mode="readonly") + cfg.format(name="none", mode="none")
    rec = run_json(storlab, scenario(db_scenario(profile="reads.toml", scale="688", vus="[1]",
                                                 extra="db_memory_gib = 6.88", configs=configs)))
    by = {r["config"]: r for r in rec["results"]}
    # The binding counts the run's own reads: 80 % give or take the draws.
    share = re.search(r"\((\d+) % from the host cache\)", by["cached"]["binding"])
    assert share and 78 <= int(share.group(1)) <= 82, by["cached"]["binding"]
    assert "host cache" not in by["none"]["binding"]
    (said,) = [a for a in rec["inputs"]["assumptions"] if "host read cache" in a]
    assert "config cached" in said and "344 GiB" in said and "serves 80 %" in said, said
    # A read's mean: the catalog's log-normal medians with their p99s.
    from storlab.api import open_catalog
    cat = open_catalog()[0]
    lat = {d: cat.latency(d) for d in ("azure/premium-ssd/P30", "azure/host-cache")}

    def mean(x: dict, key: str) -> float:
        sigma = math.log(x[f"{key}_p99_us"] / x[f"{key}_median_us"]) / 2.3263478740408408
        return x[f"{key}_median_us"] * math.exp(sigma * sigma / 2)

    disk, hit = mean(lat["azure/premium-ssd/P30"], "read"), mean(lat["azure/host-cache"], "read")
    assert by["none"]["time_us"]["data_reads"] == pytest.approx(5 * disk, rel=0.06)
    assert by["cached"]["time_us"]["data_reads"] == pytest.approx(5 * (0.8 * hit + 0.2 * disk), rel=0.06)


def test_the_core_contention_term_is_said_with_its_values_and_source(storlab, scenario):
    # The shipped TPC-C profiles carry σ₁ (measured here, 1 → 2 CPUs) and
    # σ₂ (cited, past 2) with their source; a profile without them says it
    # has none, and a profile whose measured term is 0 says that.
    profiles = ROOT / "python" / "storlab" / "profiles"
    maria = tomllib.loads((profiles / "tpcc-mariadb.toml").read_text(encoding="utf-8"))["concurrency"]
    rec = run_json(storlab, scenario(db_scenario(profile="tpcc-mariadb", scale="2", vus="[2]"), name="m.toml"))
    (said,) = [a for a in rec["inputs"]["assumptions"] if a.startswith("CPU per transaction grows with the backends")]
    assert f"1 + {maria['core_contention']:.4f}·(min(p, 2) − 1) + {maria['core_contention_beyond']:.4f}·(p − 2)" in said, said
    assert maria["core_contention_source"] in said
    pg = run_json(storlab, scenario(db_scenario(scale="2", vus="[2]"), name="p.toml"))
    assert any(a.startswith("CPU per transaction taken as independent of the host's cores: the profile's core "
                            "contention term is 0") for a in pg["inputs"]["assumptions"]), pg["inputs"]["assumptions"]
    tpcb = run_json(storlab, scenario(db_scenario(profile="tpcb-postgresql", scale="2", vus="[2]"), name="b.toml"))
    assert any("the profile has no core contention term" in a for a in tpcb["inputs"]["assumptions"])
