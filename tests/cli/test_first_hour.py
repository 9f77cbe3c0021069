"""The traps of a new user's first hour: fio job files as fio runs them,
clear errors where an internal error was, whole numbers when piped, CSV on
every command, units that say what they are, scenario overrides."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT

QUICK = ("--runs", "1", "--runtime", "0.2", "--interval", "0")


@contextlib.contextmanager
def unwritable(folder: Path):
    """A folder no one may create files in: immutable (chattr +i) as root,
    whom mode bits do not stop; mode 0555 otherwise."""
    if os.geteuid() == 0:
        r = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"chattr +i not supported here: {r.stderr.strip()}")
        try:
            yield folder
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)


def one_line_error(r) -> str:
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    err = r.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


# --- a. libaio job files, size= -------------------------------------------


def test_a_libaio_job_file_runs_and_says_with_what(storlab, tmp_path):
    """Most job files name libaio: it runs with io_uring (or psync where the
    kernel refuses io_uring), said once on stderr and in the record. size=8m
    at bs=1m without time_based is 8 reads of 1 MiB (fio: each job does its
    size once), and the test file is those 8 MiB = 8,388,608 bytes."""
    job = tmp_path / "aio.fio"
    job.write_text("[global]\nioengine=libaio\ndirect=1\n[seq]\nrw=read\nbs=1m\niodepth=4\nsize=8m\n")
    data = tmp_path / "data"
    data.mkdir()
    r = storlab("bench", "disk", "--path", str(data), "--job", str(job), "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    warnings = [w for w in rec["warnings"] if "ioengine=libaio" in w]
    assert len(warnings) == 1 and re.search(r"ioengine=libaio runs with (io_uring|psync)", warnings[0]), rec["warnings"]
    assert [ln for ln in r.stderr.splitlines() if "ioengine=libaio" in ln] == [f"warning: {warnings[0]}"]
    assert rec["file_bytes"] == 8 * 2**20 and rec["inputs"]["size_bytes"] == 8 * 2**20
    assert rec["runs"][0]["runs"][0]["read"]["ios"] == 8
    assert list(data.iterdir()) == []


# --- b. jobs at once, group_reporting ---------------------------------------


def test_b_two_jobs_run_at_once_and_group_reporting_folds_them(storlab, tmp_path):
    """[a] and [b] without stonewall run together, as in fio: their measured
    windows overlap. Under group_reporting they are one result: a does its
    size=4m in 4 KiB reads (1,024), b its 8m (2,048): 3,072 reads, and the
    result's IOPS is those 3,072 over the group's window."""
    data = tmp_path / "data"
    data.mkdir()
    job = tmp_path / "two.fio"
    job.write_text("[global]\nioengine=psync\nrw=randread\nbs=4k\nsize=4m\nruntime=0.5\ntime_based\n[a]\n[b]\n")
    r = storlab("bench", "disk", "--path", str(data), "--job", str(job), "--json")
    assert r.returncode == 0, r.stderr
    a, b = (x["runs"][0] for x in json.loads(r.stdout)["runs"])
    assert a["start_s"] < b["start_s"] + b["elapsed_s"] and b["start_s"] < a["start_s"] + a["elapsed_s"], (a["start_s"], b["start_s"])

    job.write_text("[global]\nioengine=psync\nrw=randread\nbs=4k\ngroup_reporting\n[a]\nsize=4m\n[b]\nsize=8m\n")
    r = storlab("bench", "disk", "--path", str(data), "--job", str(job), "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    (res,) = rec["results"]
    (runs,) = rec["runs"]
    run = runs["runs"][0]
    assert runs["jobs"] == 2 and run["read"]["ios"] == 3072
    assert res["iops"] == pytest.approx(3072 / run["elapsed_s"], rel=1e-9)
    assert res["outstanding"] == 2, "psync: one I/O in flight per job"


# --- c. clear errors instead of internal ones -------------------------------


def test_c_sqlite_dir_without_permission(storlab, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    with unwritable(locked):
        for d in (locked, locked / "new"):
            err = one_line_error(storlab("bench", "db", "--db", "sqlite", "--dir", str(d), "--duration", "1"))
            assert f"--dir {d}: cannot create files in {locked}" in err, err
        assert list(locked.iterdir()) == []


def test_c_cloudwatch_to_an_unwritable_path_fails_before_the_run(storlab, tmp_path):
    (tmp_path / "file").write_text("x")
    err = one_line_error(storlab("simulate", str(EXAMPLES / "aws-t3-gp2-one-vs-five.toml"), "--cloudwatch", str(tmp_path / "file" / "cw.json")))
    assert "is a file, not a folder" in err
    locked = tmp_path / "locked"
    locked.mkdir()
    with unwritable(locked):
        r = storlab("simulate", str(EXAMPLES / "aws-t3-gp2-one-vs-five.toml"), "--cloudwatch", str(locked / "cw.json"))
        err = one_line_error(r)
        assert f"--cloudwatch {locked / 'cw.json'}: cannot write in {locked}" in err
        assert r.stdout == "", "refused before any run"


def test_c_a_period_too_short_for_a_long_run(storlab, scenario):
    """One job of 4 h (14,400 s) at --period 0.01 would be 1,440,000 points a
    series; at most 100,800 (one GetMetricData request): the shortest period
    is 14,400 / 100,800 = 0.1429 s, 0.15 s rounded up to two digits."""
    s = scenario('[workload]\nduration_s = 14400\n[[workload.jobs]]\nrw = "randread"\nbs = "4k"\n'
                 '[configs.a]\nhost = "aws/ec2/r5b.24xlarge"\n[[configs.a.pools]]\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n')
    err = one_line_error(storlab("simulate", str(s), "--period", "0.01"))
    assert "1440000 points" in err and err.endswith("nearest valid period 0.15 s"), err


# --- d. whole numbers when piped --------------------------------------------


def test_d_piped_tables_are_not_cut_and_columns_is_honoured(storlab):
    ex = str(EXAMPLES / "aws-t3-gp2-one-vs-five.toml")
    r = storlab("limits", ex, env={"COLUMNS": ""})
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) > 80, "piped: as wide as the table needs"
    # The monthly costs print whole, as the record has them.
    rec = json.loads(storlab("limits", ex, "--json").stdout)
    for c in rec["configs"]:
        assert f"${c['monthly_cost_usd']:,.2f}" in r.stdout
    r = storlab("limits", ex, env={"COLUMNS": "60"})
    assert max(len(line) for line in r.stdout.splitlines()) <= 60
    assert "…" not in r.stdout, "narrow: numbers fold, never end in …"


# --- e. CSV everywhere, documented ------------------------------------------


def _csv(r) -> list[dict]:
    assert r.returncode == 0, r.stderr
    return list(csv.DictReader(io.StringIO(r.stdout)))


def _documented_csv_columns() -> set[str]:
    text = (ROOT / "docs" / "record.md").read_text()
    section = text[text.index("## CSV"):]
    return set(re.findall(r"`([a-z0-9_]+)`", section))


def test_e_csv_on_every_command_that_prints_a_result(storlab, tmp_path):
    documented = _documented_csv_columns()
    ex = str(EXAMPLES / "aws-t3-gp2-one-vs-five.toml")
    rows = _csv(storlab("limits", ex, "--csv"))
    rec = json.loads(storlab("limits", ex, "--json").stdout)
    assert [r["config"] for r in rows] == [c["name"] for c in rec["configs"]]
    assert float(rows[0]["rand4k_read_iops"]) == rec["configs"][0]["ceilings"]["rand4k_read_iops"]
    headers = [list(rows[0])]

    data = tmp_path / "d"
    data.mkdir()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    r = storlab("bench", "disk", "--path", str(data), "--size", "4MiB", "--engine", "null", "--profile", "cdm-peak", *QUICK, "--json")
    a.write_text(r.stdout)
    b.write_text(r.stdout)
    rows = _csv(storlab("bench", "disk", "--path", str(data), "--size", "4MiB", "--engine", "null", "--profile", "cdm-peak", *QUICK, "--csv"))
    assert [r["job"] for r in rows] == ["SEQ1M-Q8T1-read", "RND4K-Q32T1-read", "SEQ1M-Q8T1-write", "RND4K-Q32T1-write"]
    headers.append(list(rows[0]))
    rows = _csv(storlab("compare", str(a), str(b), "--csv"))
    assert rows and all(float(r["ratio"]) == 1.0 for r in rows if r["ratio"]), "a record against itself: ratio 1"
    headers.append(list(rows[0]))
    rows = _csv(storlab("simulate", ex, "--csv", "--duration", "60"))
    headers.append(list(rows[0]))
    rows = _csv(storlab("catalog", "list", "--csv", "--kind", "host"))
    assert all(r["type"] == "host" for r in rows)
    for h in headers:
        assert set(h) <= documented, set(h) - documented
    err = one_line_error(storlab("limits", ex, "--csv", "--json"))
    assert "choose one" in err


def test_e_bench_db_csv(storlab, tmp_path):
    """The insert storm on SQLite, 2 VUs × 230 rows committed every 50: per
    VU 4 full batches and one of 30, so 2 × 5 = 10 commits and no errors."""
    r = storlab("bench", "db", "--workload", "insert", "--db", "sqlite", "--dir", str(tmp_path / "ins"), "--vus", "2",
                "--rows", "230", "--commit-every", "50", "--csv")
    (row,) = _csv(r)
    assert set(row) <= _documented_csv_columns()
    assert (row["vus"], row["errors"], row["commits"]) == ("2", "0", "10")
    assert float(row["rows_per_min"]) > 0 and float(row["last_commit_s"]) > 0


def test_e_exit_codes_are_documented():
    readme = " ".join((ROOT / "README.md").read_text().split())
    for code in ("0 success", "1 a user error", "2 a usage error", "130 Ctrl-C", "143 SIGTERM", "129 SIGHUP", "70 an internal error"):
        assert code in readme, code


# --- f. units -----------------------------------------------------------------


def test_f_latency_units_by_magnitude():
    from storlab.cli.out import latency

    # µs below 1 ms, ms below 10 s, s from 10 s: 882,615.78 ms = 882.6 s.
    assert latency(882_615_780) == "882.6 s"
    assert latency(9_999_990) == "9,999.99 ms"
    assert latency(10_000_000) == "10.0 s"
    assert latency(1_500) == "1.50 ms"
    assert latency(850) == "850 µs"
    assert latency(12.34) == "12.3 µs"


def test_f_sizes_say_what_they_mean(storlab, tmp_path):
    from storlab.api import parse_size

    assert parse_size("64MB") == 64_000_000
    assert parse_size("64MiB") == 64 * 2**20 == 67_108_864
    assert parse_size("1GB") == 10**9 and parse_size("1GiB") == 2**30 and parse_size("16m") == 16 * 2**20
    r = storlab("bench", "disk", "--path", str(tmp_path), "--size", "8MB", "--engine", "null", "--profile", "cdm-peak", *QUICK, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["file_bytes"] == 8_000_000


def test_f_one_unit_family_per_table(storlab):
    """limits prints every rate in MB/s (10^6 bytes), as simulate, bench and
    compare do: 100 MiB/s = 104,857,600 B/s = 104.9 MB/s."""
    from storlab.export.limits import fmt_value

    assert fmt_value("seq1m_read_bytes_s", 100 * 2**20) == "104.9 MB/s"
    r = storlab("limits", str(EXAMPLES / "azure-ds4-p30-host-cache.toml"))
    assert r.returncode == 0, r.stderr
    assert "(MB/s: 10^6 bytes a second)" in r.stdout
    # A binding quotes the vendor's cap in the vendor's unit (gp2 100 GiB:
    # 128 MiB/s); the table adds its MB/s: 128 × 1,048,576 = 134,217,728 B/s.
    from storlab.cli.out import with_mb_s

    assert with_mb_s("device aws/ebs/gp2 (100 GiB): 128 MiB/s") == "device aws/ebs/gp2 (100 GiB): 128 MiB/s = 134.2 MB/s"
    assert with_mb_s("1,000 MiB/s each") == "1,000 MiB/s = 1,048.6 MB/s each"
    ex = str(EXAMPLES / "aws-t3-gp2-one-vs-five.toml")
    for cmd in ("limits", "simulate"):
        out = storlab(cmd, ex, *(("--duration", "60") if cmd == "simulate" else ())).stdout
        assert "128 MiB/s = 134.2 MB/s" in out, cmd
        assert re.findall(r"MiB/s(?! = )", out) == [], cmd


# --- h. overrides ---------------------------------------------------------------


def test_h_simulate_overrides(storlab):
    """--config gp2-5x --threads 2 --iodepth 16 --duration 30s --profile
    cdm-real-world: CrystalDiskMark's Real World tests (SEQ1M Q1T1 and
    RND4K Q1T1, read then write), each now 16 × 2 = 32 I/Os in flight for
    30 simulated seconds, on one config."""
    ex = str(EXAMPLES / "aws-t3-gp2-one-vs-five.toml")
    configs = [c["name"] for c in json.loads(storlab("limits", ex, "--json").stdout)["configs"]]
    r = storlab("simulate", ex, "--config", configs[-1], "--threads", "2", "--iodepth", "16", "--duration", "30s",
                "--profile", "cdm-real-world", "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert {x["config"] for x in rec["results"]} == {configs[-1]}
    assert [x["job"] for x in rec["results"]] == ["SEQ1M-Q16T2-read", "RND4K-Q16T2-read", "SEQ1M-Q16T2-write", "RND4K-Q16T2-write"]
    assert all(x["outstanding"] == 32 and x["runtime_s"] == 30.0 for x in rec["results"])
    assert rec["inputs"]["config"] == configs[-1] and rec["inputs"]["duration_s"] == 30.0
    err = one_line_error(storlab("simulate", ex, "--config", "nope"))
    assert "no such config" in err and all(c in err for c in configs)
    err = one_line_error(storlab("simulate", ex, "--duration", "ten"))
    assert "e.g. 30s" in err


# --- i. PartialData, dropped arrivals -----------------------------------------


def test_i_cloudwatch_status_of_complete_and_interrupted_runs():
    """GetMetricData's StatusCode: Complete, or PartialData when more data
    would follow — an interrupted run's series stop early."""
    from storlab.export.simulate import to_cloudwatch

    rec = {"series": [{"config": "c", "resource": "pool data", "metric": "VolumeReadOps", "timestamps": [0, 60], "values": [1, 2]}]}
    assert json.loads(to_cloudwatch(rec))["MetricDataResults"][0]["StatusCode"] == "Complete"
    rec["interrupted"] = True
    assert json.loads(to_cloudwatch(rec))["MetricDataResults"][0]["StatusCode"] == "PartialData"


def test_i_dropped_arrivals_in_the_table_and_csv(storlab, scenario):
    """Offered 2,000,000 arrivals a second to a gp3's 3,000 IOPS for 2 s: the
    waiting I/Os pass the 1,048,576 an open-loop job keeps, so arrivals are
    dropped — and shown."""
    s = scenario('[workload]\nduration_s = 2\n[[workload.jobs]]\nrw = "randread"\nbs = "4k"\narrival_iops = 2000000\n'
                 '[configs.a]\nhost = "aws/ec2/r5b.24xlarge"\n[[configs.a.pools]]\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n')
    r = storlab("simulate", str(s), "--json")
    assert r.returncode == 0, r.stderr
    dropped = json.loads(r.stdout)["results"][0]["dropped"]
    # 4,000,000 arrivals − 1,048,576 kept waiting − 3,000 × 2 served.
    assert dropped == pytest.approx(4_000_000 - 1_048_576 - 6_000, rel=0.005)
    (row,) = _csv(storlab("simulate", str(s), "--csv"))
    assert int(row["dropped"]) == dropped
    table = storlab("simulate", str(s)).stdout
    assert f"{dropped:,} arrivals dropped" in table
    assert "1,048,576" in (ROOT / "docs" / "simulate.md").read_text()
