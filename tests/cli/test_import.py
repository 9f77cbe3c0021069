"""`storlab import` and the commands that take other tools' files directly
(calibrate, report, compare), on the sample files in tests/data/import,
which are in each tool's exact format (CRLF, trailing blanks, a stopped
run)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import db_scenario
from storlab.cli import app

DATA = Path(__file__).resolve().parents[1] / "data" / "import"

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=True, env={"COLUMNS": "200", "NO_COLOR": "1"})


def imported(name: str) -> dict:
    r = invoke("import", str(DATA / name), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    return json.loads(r.stdout)


def by_job(rec: dict) -> dict:
    return {r["job"]: r for r in rec["results"]}


def test_cdm8_json_has_the_exports_numbers():
    rec = imported("cdm8.txt")
    assert rec["engine"] == "measure" and rec["schema_version"] == 1
    assert rec["tool"]["name"] == "CrystalDiskMark 8.0.4"
    jobs = by_job(rec)
    # `  SEQ    1MiB (Q=  8, T= 1):  7427.749 MB/s [   7083.7 IOPS] <   987.81 us>`
    seq = jobs["SEQ1M-Q8T1-read"]
    assert (seq["bw_bytes_s"], seq["iops"], seq["lat_mean_us"], seq["outstanding"]) == (7427.749e6, 7083.7, 987.81, 8)
    # `  RND    4KiB (Q=  1, T= 1):   287.520 MB/s [  70195.3 IOPS] <    14.16 us>` under [Write]
    w = jobs["RND4K-Q1T1-write"]
    assert (w["bw_bytes_s"], w["write_iops"], w["read_iops"], w["lat_mean_us"]) == (287.52e6, 70195.3, 0, 14.16)
    # [Mix] Read 70%/Write 30%: 139643.3 IOPS, 70 % of them reads.
    mix = jobs["RND4K-Q32T16-mix70"]
    assert mix["read_iops"] == pytest.approx(139643.3 * 0.7) and mix["outstanding"] == 512
    assert len(jobs) == 12
    h = rec["host_info"]
    assert h["profile"] == "Default" and h["date"] == "2024/01/06 5:41:48" and h["test_size_bytes"] == 2**30
    assert h["os"].startswith("Windows 11")


def test_cdm7_and_cdm6():
    rec = imported("cdm7.txt")
    assert rec["tool"]["name"] == "CrystalDiskMark 7.0.0"
    # `    Random 4KiB (Q= 32, T=16):     0.851 MB/s [    207.8 IOPS] <635043.04 us>`
    r = by_job(rec)["RND4K-Q32T16-read"]
    assert (r["bw_bytes_s"], r["iops"], r["lat_mean_us"]) == (0.851e6, 207.8, 635043.04)
    rec6 = imported("cdm6.txt")
    # `   Sequential Read (Q= 32,T= 1) :   471.231 MB/s`: 128 KiB blocks, IOPS derived.
    s = by_job(rec6)["SEQ128K-Q32T1-read"]
    assert s["iops"] == pytest.approx(471.231e6 / 131072)
    assert any("no latency" in w for w in rec6["warnings"])


def test_the_table_and_a_stopped_run(tmp_path):
    out = tmp_path / "rec.json"
    r = invoke("import", str(DATA / "cdm8-peak-stopped.txt"), "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "SEQ1M-Q8T1-read" in r.stdout and "7,431.1 MB/s" in r.stdout
    assert "RND4K-Q32T16-write reads 0.000 MB/s" in r.stdout and "interrupted" in r.stdout
    rec = json.loads(out.read_text())
    assert rec["interrupted"] is True and len(rec["results"]) == 3
    assert rec["host_info"]["profile"] == "Peak"


def test_fio_json_plus_with_sync_and_groups():
    rec = imported("fio-jsonplus.json")
    assert rec["tool"]["name"] == "fio-3.33"
    doc = json.loads((DATA / "fio-jsonplus.json").read_text())
    w = doc["jobs"][0]["write"]
    got = by_job(rec)["SEQ1M-Q1T1-write"]
    assert got["iops"] == w["iops"] and got["bw_bytes_s"] == w["bw_bytes"]
    assert got["lat_p99_us"] == w["clat_ns"]["percentile"]["99.000000"] / 1000
    sync = by_job(rec)["SEQ1M-Q1T1-write-sync"]
    s = doc["jobs"][0]["sync"]
    assert sync["lat_mean_us"] == pytest.approx(s["lat_ns"]["mean"] / 1000)
    # syncs over the job's time: the longer of job_runtime and the write's runtime (ms)
    secs = max(doc["jobs"][0]["job_runtime"], w["runtime"]) / 1000
    assert sync["iops"] == pytest.approx(s["total_ios"] / secs)
    assert by_job(rec)["mixed-read"]["outstanding"] == 2


def test_several_files_keep_apart():
    r = invoke("import", str(DATA / "cdm7.txt"), str(DATA / "cdm8.txt"), "--json")
    assert r.exit_code == 0, r.output
    rec = json.loads(r.stdout)
    assert {x["config"] for x in rec["results"]} == {"cdm7", "cdm8"}
    assert rec["tool"]["name"] == "CrystalDiskMark 7.0.0 + CrystalDiskMark 8.0.4"


def test_bad_files_are_one_line_errors(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello\n")
    r = invoke("import", str(p))
    assert r.exit_code != 0
    assert str(r.exception).startswith(f"{p}: not a format storlab imports")
    q = tmp_path / "bad.txt"
    q.write_text("[Read]\n  SEQ    1MiB (Q=  8, T= 1):  1.0 parsecs [ 1.0 IOPS]\n")
    r = invoke("import", str(q))
    assert str(r.exception) == f"{q}: line 2: bandwidth: unknown unit 'parsecs' — expected MB/s (or GB/s, KB/s)"


GP3 = """
[workload]
preset = "cdm-default"
[configs.gp3]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp3.pools]]
device = "aws/ebs/gp3"
size_gib = 500
"""


@pytest.mark.parametrize("name, read_mean, write_mean", [
    ("cdm7.txt", 10013.33, 6152.49),  # `Random 4KiB (Q=  1, T= 1)` lines of the export
    ("cdm8.txt", 48.38, 14.16),
])
def test_calibrate_from_cdm_exports(tmp_path, name, read_mean, write_mean):
    import math

    from storlab.calibrate import Z99, read_result

    kind, jobs = read_result(DATA / name)
    assert kind == "cdm"
    sc = tmp_path / "s.toml"
    sc.write_text(GP3)
    out = tmp_path / "o.toml"
    r = invoke("calibrate", str(DATA / name), "--scenario", str(sc), "--config", "gp3", "--catalog-out", str(out))
    assert r.exit_code == 0, (r.output, r.exception)
    lat = tomllib.loads(out.read_text())["latency"][0]
    # A mean only: median = mean / exp(σ²/2), σ from the catalog's gp3
    # p99/median (read 1,090 / 709; write: the ratio the overlay keeps).
    sigma = math.log(lat["read_p99_us"] / lat["read_median_us"]) / Z99
    assert lat["read_median_us"] == pytest.approx(read_mean / math.exp(sigma * sigma / 2), rel=1e-3)
    wsigma = math.log(lat["write_p99_us"] / lat["write_median_us"]) / Z99
    assert lat["write_median_us"] == pytest.approx(write_mean / math.exp(wsigma * wsigma / 2), rel=1e-3)
    assert "RND4K-Q1T1-read" in lat["note"] and "RND4K-Q1T1-write" in lat["note"]


def test_report_and_compare_take_imported_files(tmp_path):
    out = tmp_path / "r.html"
    r = invoke("report", str(DATA / "fio-randread.json"), str(DATA / "cdm8.txt"), "-o", str(out))
    assert r.exit_code == 0, (r.output, r.exception)
    html = out.read_text()
    assert "RND4K-Q1T1-read" in html and "SEQ1M-Q8T1-read" in html
    r = invoke("compare", str(DATA / "cdm7.txt"), str(DATA / "cdm8.txt"), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    cmp = json.loads(r.stdout)
    row = next(x for x in cmp["rows"] if x["job"] == "SEQ1M-Q8T1-read" and x["key"] == "bw_bytes_s")
    # 7427.749 / 101.514 MB/s
    assert row["ratio"] == pytest.approx(7427.749 / 101.514, rel=1e-3)
    # CrystalDiskMark 7 and 8 give a mean latency and no p99: no p99 row of
    # 0.0 µs, and the mean is compared (CDM 8's `<   987.81 us>`).
    assert not any(x["key"] == "lat_p99_us" for x in cmp["rows"]), [x for x in cmp["rows"] if x["key"] == "lat_p99_us"][:2]
    mean = next(x for x in cmp["rows"] if x["job"] == "SEQ1M-Q8T1-read" and x["key"] == "lat_mean_us")
    assert mean["b"] == pytest.approx(987.81)
    r = invoke("compare", str(DATA / "cdm7.txt"), str(DATA / "cdm8.txt"))
    assert r.exit_code == 0 and "0.0 µs" not in r.stdout and "0 µs" not in r.stdout, r.stdout


def test_the_import_table_names_its_rate_for_what_it_holds():
    disk_only = invoke("import", str(DATA / "cdm8.txt"))
    assert disk_only.exit_code == 0 and "NOPM" not in disk_only.stdout and "IOPS" in disk_only.stdout, disk_only.stdout
    db_only = invoke("import", str(DATA / "pgbench.txt"))
    assert db_only.exit_code == 0 and "IOPS" not in db_only.stdout and "NOPM, TPM" in db_only.stdout, db_only.stdout


def test_hammerdb_sysbench_pgbench_cloudwatch_tables():
    rec = imported("hammerdb-mysql-tprocc.json")
    res = rec["results"][0]
    # "nopm": 328858, "tpm": 763485, 24 active virtual users; NEWORD avg_ms 1.998.
    assert (res["nopm"], res["tpm"], res["vus"]) == (328858, 763485, 24)
    assert res["txn"]["new_order"]["lat_mean_us"] == pytest.approx(1998.0)
    r = invoke("import", str(DATA / "hammerdb-mysql-tprocc.json"))
    assert r.exit_code == 0 and "NOPM 328,858" in r.stdout and "TPM 763,485" in r.stdout
    sb = imported("sysbench-oltp_read_write.txt")
    # `transactions: 4325 (864.05 per sec.)`: 51,843 a minute.
    assert sb["results"][0]["tpm"] == pytest.approx(864.05 * 60)
    pg = imported("pgbench-progress.txt")
    # `tps = 387.837419`, `latency average = 5.153 ms`
    assert pg["results"][0]["tpm"] == pytest.approx(387.837419 * 60)
    assert pg["results"][0]["txn"]["transaction"]["lat_mean_us"] == pytest.approx(5153.0)
    cw = invoke("import", str(DATA / "cloudwatch-get-metric-data.json"))
    assert cw.exit_code == 0, cw.output
    assert "VolumeReadOps" in cw.stdout and "BurstBalance" in cw.stdout and "300 s" in cw.stdout


DB_SCENARIO = db_scenario()


def validate_job_report(doc: dict) -> None:
    """The checks of the public hammerdb-results repository's validator
    (tools/result_validation.py) for a TPROC-C artifact."""
    from datetime import datetime

    assert doc["schema"] == "hammerdb-job-report-v1"
    assert doc["disclaimer"]["audited"] is False
    for k in ("jobid", "hdb_version", "database", "database_display", "benchmark", "timestamp"):
        assert doc["job"][k], k
    assert doc["job"]["benchmark"] in ("TPROC-C", "TPROC-H")
    datetime.strptime(doc["job"]["timestamp"], "%Y-%m-%d %H:%M:%S")
    assert isinstance(doc["benchmark_config"], dict) and isinstance(doc["result"], dict)
    for k in ("nopm", "tpm"):
        assert isinstance(doc["result"][k], (int, float)) and not isinstance(doc["result"][k], bool)
    for k in ("warehouses", "virtual_users", "rampup_minutes", "duration_minutes"):
        assert k in doc["benchmark_config"], k


def test_simulate_writes_a_hammerdb_job_report_that_reads_back(tmp_path):
    sc = tmp_path / "db.toml"
    sc.write_text(DB_SCENARIO)
    out = tmp_path / "h.json"
    r = invoke("simulate", str(sc), "--json", "--hammerdb-json", str(out), "--start", "2026-01-02T03:04:05+00:00")
    assert r.exit_code == 0, (r.output, r.exception)
    rec = json.loads(r.stdout)
    doc = json.loads(out.read_text())
    validate_job_report(doc)
    assert doc["system"]["simulated"] is True and "simulated" in doc["system"]["notes"][0]
    assert doc["job"]["timestamp"] == "2026-01-02 03:04:05" and doc["job"]["database"] == "PostgreSQL"
    best = max(rec["results"], key=lambda x: x["nopm"])
    assert doc["result"]["nopm"] == round(best["nopm"]) and doc["result"]["active_virtual_users"] == best["vus"]
    back = imported_path(out)
    assert back["results"][0]["nopm"] == round(best["nopm"])


def imported_path(p: Path) -> dict:
    r = invoke("import", str(p), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    return json.loads(r.stdout)


def test_bench_db_hammerdb_json(tmp_path):
    out = tmp_path / "bench.json"
    r = invoke("bench", "db", "--db", "sqlite", "--dir", str(tmp_path), "--vus", "1", "--rampup", "1", "--duration", "2",
               "--hammerdb-json", str(out))
    assert r.exit_code == 0, (r.output, r.exception)
    doc = json.loads(out.read_text())
    validate_job_report(doc)
    assert doc["job"]["database"] == "SQLite" and doc["benchmark_config"]["virtual_users"] == 1
    # the measured window as the run timed it: 2 s, give or take the clock
    assert doc["benchmark_config"]["duration_minutes"] == pytest.approx(2 / 60, rel=0.05)
    assert doc["result"]["tpm"] > 0
    r = invoke("bench", "db", "--workload", "insert", "--hammerdb-json", str(out))
    assert "describes a TPROC-C run" in str(r.exception)


# tests/data/import/cloudwatch-console.csv: a CloudWatch graph's CSV download
# of one EBS volume's VolumeReadOps, VolumeWriteOps, VolumeReadBytes and
# VolumeWriteBytes (Sum, 5-minute periods, 10:00 to 10:30 UTC on 2024-03-01),
# CRLF, in the layout cloudwatch.rs's read_csv reads (its note gives the
# sources; no published page quotes a console download); the 10:15
# VolumeWriteOps cell is empty.
CW_VOLUME = "vol-0a1b2c3d4e5f67890"


def test_cloudwatch_console_csv_gives_the_series_and_their_period():
    rec = imported("cloudwatch-console.csv")
    s = {x["metric"]: x for x in rec["series"]}
    assert list(s) == ["VolumeReadOps", "VolumeWriteOps", "VolumeReadBytes", "VolumeWriteBytes"]
    assert {(x["resource"], x["period_s"]) for x in s.values()} == {(CW_VOLUME, 300)}
    assert (s["VolumeReadOps"]["unit"], s["VolumeReadBytes"]["unit"]) == ("Count", "Bytes")
    reads = s["VolumeReadOps"]
    assert reads["values"] == [420000, 450000, 510000, 480000, 600000, 540000, 390000]
    assert reads["timestamps"][0] == "2024-03-01T10:00:00Z" and reads["timestamps"][-1] == "2024-03-01T10:30:00Z"
    # The empty cell is no data point, not a zero: six writes, 10:10 then 10:20.
    writes = s["VolumeWriteOps"]
    assert writes["values"] == [180000, 195000, 240000, 270000, 255000, 150000]
    assert writes["timestamps"][2:4] == ["2024-03-01T10:10:00Z", "2024-03-01T10:20:00Z"]
    # 10:15's VolumeWriteBytes cell is there: 225,000 writes × 32 KiB.
    assert s["VolumeWriteBytes"]["values"][3] == 225000 * 32768
    r = invoke("import", str(DATA / "cloudwatch-console.csv"))
    assert r.exit_code == 0, (r.output, r.exception)
    assert "VolumeWriteBytes" in r.stdout and "300 s" in r.stdout


def test_cloudwatch_csv_with_a_bad_number_is_one_line(storlab, tmp_path):
    p = tmp_path / "graph.csv"
    p.write_bytes((DATA / "cloudwatch-console.csv").read_bytes().replace(b"510000,240000,", b"510000,24o000,", 1))
    r = storlab("import", str(p))
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    # The 10:10 row is the file's 4th line; VolumeWriteOps its 3rd column.
    assert f"{p}: line 4: column 3 '{CW_VOLUME} VolumeWriteOps': '24o000' is not a number" in r.stderr


def test_a_hammerdb_log_is_a_sweep_of_its_runs():
    # HammerDB's documented CLI sequence (vu 1, 2, 4 on SQL Server): one
    # result a `TEST RESULT` line, its VUs from "N Active Virtual Users configured".
    rec = imported("hammerdb-sqlserver-sequence.log")
    assert rec["tool"]["name"] == "HammerDB" and rec["workload"] == "tpcc"
    assert [(r["vus"], r["nopm"], r["tpm"]) for r in rec["results"]] == [
        (1, 121771.0, 283024.0), (2, 177765.0, 413812.0), (4, 198787.0, 462298.0)]
    assert any("batch requests" in w for w in rec["warnings"])


@pytest.mark.parametrize("name, text, field", [
    ("neg-sysbench.txt", "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nSQL statistics:\n"
     "    transactions:                        -100 (-5.00 per sec.)\n", "transactions"),
    ("neg-fio.json", '{"fio version": "fio-3.33", "jobs": [{"jobname": "w", "write": '
     '{"total_ios": 4, "iops": 4.0, "bw_bytes": -16384, "runtime": 1000}}]}', "bw_bytes_s"),
    ("neg-pgbench.txt", "pgbench (15.18 (Debian 15.18-0+deb12u1))\ntransaction type: <builtin: TPC-B (sort of)>\n"
     "scaling factor: 2\nnumber of clients: 4\nnumber of transactions actually processed: 4096\n"
     "latency average = -4.879 ms\ntps = 819.813056 (without initial connection time)\n", "lat_mean_us"),
    ("neg-hammerdb.log", "Vuser 1:4 Active Virtual Users configured\n"
     "Vuser 1:TEST RESULT : System achieved -123 NOPM from 283456 PostgreSQL TPM\n", "nopm"),
])
def test_negative_figures_are_refused_where_they_enter(tmp_path, name, text, field):
    p = tmp_path / name
    p.write_text(text)
    r = invoke("import", str(p))
    assert r.exit_code == 1, (r.output, r.exception)
    msg = str(r.exception)
    assert msg.startswith(f"{p}: ") and field in msg and "nearest valid value 0" in msg, msg
