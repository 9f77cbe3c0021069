"""`storlab bench db --profile-out`: a recording on a small managed
PostgreSQL writes a profile that parses, whose shares sum to 1, whose
miss-ratio curve never rises with the cache, and which holds no password;
a bad --profile-out is one clear line before anything runs."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

from storlab.db import profile as dbprofile
from storlab.db.managed import find_pg_bin
from storlab.errors import DatabaseError


@pytest.fixture
def where():
    d = Path(tempfile.mkdtemp(prefix="storlab-test-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def one_line_error(r) -> str:
    assert r.returncode == 1, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_bad_profile_out_is_one_line_before_anything_runs(storlab, where):
    base = ["bench", "db", "--workload", "insert", "--db", "managed-postgres", "--dir", str(where / "pg"), "--rows", "5"]
    err = one_line_error(storlab(*base, "--profile-out", str(where / "missing" / "p.toml")))
    assert "does not exist" in err and "missing" in err
    err = one_line_error(storlab(*base, "--profile-out", str(where)))
    assert "is a folder" in err
    err = one_line_error(storlab("bench", "db", "--workload", "insert", "--db", "sqlite", "--dir", str(where / "s"),
                                 "--profile-out", str(where / "p.toml")))
    assert "managed-postgres" in err
    assert not (where / "pg").exists() and not (where / "s").exists()


@pytest.mark.needs_postgres
@pytest.mark.slow
def test_insert_storm_profile_on_a_managed_server(storlab, where):
    try:
        find_pg_bin()
    except DatabaseError as e:
        pytest.skip(str(e))
    out = where / "insert.toml"
    env = dict(os.environ, PGPASSWORD="hunter2-not-to-be-seen")
    r = storlab("bench", "db", "--workload", "insert", "--db", "managed-postgres", "--dir", str(where / "pg"),
                "--vus", "2", "--rows", "2000", "--commit-every", "50", "--repeat", "2", "--profile-out", str(out), "--json",
                env=env)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["profile"]["path"] == str(out)
    text = out.read_text()
    assert "hunter2" not in text and "hunter2" not in r.stdout
    p = tomllib.loads(text)
    assert p["schema_version"] == 1 and p["kind"] == "storlab-db-profile" and p["workload"] == "insert"
    (t,) = p["transaction"]
    assert t["name"] == "insert" and t["share"] == pytest.approx(1.0)
    # Every batch of 50 rows writes WAL and commits once; each row touches the
    # heap and five index pages at least.
    assert t["commits"] == 1.0 and t["rows_per_txn"] == 50.0
    assert t["wal_bytes"] > 50 * 600  # a row carries >= 32 + 100 + 500 bytes of text
    assert t["page_accesses"] >= 50 * 6 and t["cpu_us"] > 0
    mrc = p["mrc"]
    assert mrc["cache_fraction"] == sorted(mrc["cache_fraction"]) and len(mrc["cache_fraction"]) >= 3
    assert all(0 <= m <= 1 for m in mrc["miss_ratio"])
    assert all(a >= b for a, b in zip(mrc["miss_ratio"], mrc["miss_ratio"][1:]))
    # A row holds 632..1287 bytes of text (32 + 100..255 + 500..1000) plus
    # its indexes: more than 632 bytes each, and far less than 20 kB.
    assert 632 < p["data"]["bytes_per_scale_unit"] < 20_000
    c = p["concurrency"]
    assert c["vus"] == [1, 2, 4] and c["alpha"] >= 0 and c["beta"] >= 0
    # Two rounds of the counts; each count's throughput the median (here the
    # mean) of its two runs, its spread their sample standard deviation,
    # |a − b| / √2.
    assert [(r["vus"], r["repeat"]) for r in rec["runs"]] == [(1, 1), (2, 1), (4, 1), (1, 2), (2, 2), (4, 2)]
    for n, x, sd in zip(c["vus"], c["throughput"], c["throughput_stdev"]):
        a, b = (r["tpm_client"] / 60.0 for r in rec["runs"] if r["vus"] == n)
        assert x == pytest.approx((a + b) / 2, rel=1e-4) and sd == pytest.approx(abs(a - b) / 2 ** 0.5, rel=1e-4, abs=1e-4)
    assert p["provenance"]["database"].startswith("PostgreSQL ")
    # The sweep runs at PostgreSQL's default, so a durable commit's CPU is
    # in the CPU per transaction (docs/profile.md).
    assert p["provenance"]["settings"]["synchronous_commit"] == "on"
    assert c["fit"] == "cpu_per_txn" and len(c["cpu_us_per_txn"]) == 3 and all(x > 0 for x in c["cpu_us_per_txn"])
    # One type, all of the mix: its CPU is the CPU per transaction at one user
    # (the base the penalty multiplies), even though each user logged off
    # as soon as its rows were in, before the window's last snapshot.
    assert t["cpu_us"] == pytest.approx(c["cpu_us_per_txn"][0], rel=1e-6)
    # The WAL flush at each count: at one user every commit syncs the WAL
    # itself (nobody to share a sync with), so about one sync per
    # transaction (a WAL segment's first sync adds a few); with more users
    # group commit can only lower that. 40 commits a user and run, so that
    # a window's edges cannot move the ratio far.
    assert len(c["wal_sync_us"]) == 3 and all(0 < x < 1e6 for x in c["wal_sync_us"])
    assert 0.9 <= c["wal_syncs_per_txn"][0] <= 1.5
    assert all(x <= c["wal_syncs_per_txn"][0] * 1.2 for x in c["wal_syncs_per_txn"][1:])
    assert "--profile-out" in p["provenance"]["command"]
    # storlab's CPU reference, timed just before the sweep: the median of
    # its 7 trials.
    ref = p["provenance"]["cpu_reference"]
    assert len(ref["trials"]) == 7 and "median of 7 trials" in ref["method"]
    assert ref["ops_per_ms"] == pytest.approx(statistics.median(ref["trials"]), abs=0.01) and ref["ops_per_ms"] > 0
    assert not (where / "pg").exists()
    # The penalty: one multiplier per count, within the bisection's bounds,
    # with which the model on the recording machine (its vCPUs, the durable
    # write timed where the cluster ran) gives back the recorded throughput:
    # run the written profile there again and compare, count by count.
    assert len(c["penalty"]) == 3 and all(0.25 <= m <= 8 for m in c["penalty"]), c["penalty"]
    assert "vCPUs" in c["penalty_method"]
    # All of it: the recorder puts none of the fall on the WAL flush.
    assert "flush_wait_us" not in c
    med, p99 = c["penalty_durable_write_us"]
    assert 0 < med <= p99
    overlay = where / "recording.toml"
    overlay.write_text(dbprofile.recording_overlay({"flush_median_us": med, "flush_p99_us": p99, "writes": 1},
                                                   dbprofile.machine()))
    for n, x, m in zip(c["vus"], c["throughput"], c["penalty"]):
        if m in (0.25, 8.0):
            continue
        scen = where / f"s{n}.toml"
        scen.write_text(f'title = "t"\n[workload.database]\nprofile = "{out}"\nscale = {p["provenance"]["scale"]}\n'
                        f"vus = [{n}]\nrampup_s = 3\nduration_s = 20\n[configs.r]\nhost = \"{dbprofile.RECORDING_HOST}\"\n"
                        f'[[configs.r.pools]]\nrole = "all"\ndevice = "{dbprofile.RECORDING_DISK}"\n')
        # A short test recording may well be suspect (too few commits a
        # run): this test is about the penalty reproducing it.
        s = storlab("simulate", str(scen), "--catalog", str(overlay), "--json", "--accept-suspect")
        assert s.returncode == 0, s.stderr
        got = json.loads(s.stdout)["results"][0]["tpm"] / 60.0
        assert got == pytest.approx(x, rel=0.02), (n, got, x)


def test_client_waits_samples_the_users_backends(where):
    """Two of the driver's connections (application_name storlab): one
    runs a 4 s statement, never idle; the other has run its statement and
    waits for its client's next one, always idle. Sampled 10 times a second
    for 1.5 s: as one user (the busiest backend) no wait for the client; as
    two, half their time."""
    import subprocess
    import time

    from storlab.db.managed import ManagedPostgres

    try:
        psql = str(find_pg_bin() / "psql")
    except DatabaseError as e:
        pytest.skip(str(e))
    with ManagedPostgres(where / "pg") as pg:
        conn = pg.conninfo + " application_name=storlab"
        busy = subprocess.Popen([psql, "-X", "-q", "-d", conn, "-c", "SELECT pg_sleep(4)"], stdout=subprocess.DEVNULL)
        idle = subprocess.Popen([psql, "-X", "-q", "-d", conn], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        try:
            assert idle.stdin is not None
            idle.stdin.write("SELECT 1;\n")
            idle.stdin.flush()
            deadline = time.time() + 10
            while pg.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'storlab' AND "
                         "(state = 'idle' OR query LIKE '%pg_sleep%')").strip() != "2":
                assert time.time() < deadline, "the two connections did not come up"
                time.sleep(0.1)
            with dbprofile.ClientWaits(pg) as cw:
                time.sleep(1.5)
            one, two = cw.result(1), cw.result(2)
        finally:
            idle.stdin.close()  # type: ignore[union-attr]
            idle.wait(timeout=10)
            busy.wait(timeout=10)
    assert one is not None and two is not None
    # 1.5 s at 10 a second: about 15 samples of each backend.
    assert 8 <= two["samples"] / 2 <= 17, two
    assert one["idle_share"] == 0.0
    assert two["idle_share"] == pytest.approx(0.5, abs=0.1)


@pytest.mark.needs_postgres
def test_the_writeback_run_counts_a_checkpoints_pages_and_runs_on_a_real_cluster(where, monkeypatch):
    """A table of 2,000 rows, about 9 to a page (fillfactor 50), vacuumed;
    then 10 updates, each of the next 200 rows in place (HOT: the new
    versions stay on their pages) while pg_buffercache is sampled. The last
    point: the 10 updates' transactions (each psql call counts its
    connection's start too: measured here as what one call adds to
    pg_stat_database); the heap pages those rows are on (counted from their
    ctids), one run of them, plus the visibility map's page that the
    updates clear (its own run)."""
    import time

    from storlab.db.managed import ManagedPostgres

    try:
        find_pg_bin()
    except DatabaseError as e:
        pytest.skip(str(e))
    monkeypatch.setattr(dbprofile, "WRITEBACK_SAMPLE_S", 0.5)
    # Autovacuum off: its workers' transactions count in pg_stat_database too.
    with ManagedPostgres(where / "pg", settings={"autovacuum": "off"}) as pg:
        pg.sql("CREATE EXTENSION IF NOT EXISTS pg_prewarm; "
               "CREATE TABLE t (id int PRIMARY KEY, v int, pad text) WITH (fillfactor = 50, autovacuum_enabled = off); "
               "INSERT INTO t SELECT i, 0, repeat('x', 400) FROM generate_series(1, 2000) i; VACUUM (FREEZE) t;")
        heap = int(pg.sql("SELECT count(DISTINCT (ctid::text::point)[0]) FROM t;").strip())
        q = "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database();"
        # What one call adds: the least of three pairs (a background
        # process's stats may land between any one pair).
        counts = [float(pg.sql(q)) for _ in range(4)]
        per_call = min(b - a for a, b in zip(counts, counts[1:]))

        def run() -> dict:
            for k in range(10):
                pg.sql(f"UPDATE t SET v = v + 1 WHERE id BETWEEN {200 * k + 1} AND {200 * (k + 1)};")
                time.sleep(0.3)
            return {}

        wb = dbprofile.writeback_run(pg, run, 1.0)
    assert 200 <= heap <= 250, heap  # 2,000 rows at about 9 a page
    assert wb is not None and len(wb["txns_per_unit"]) >= 2, wb
    assert per_call in (1.0, 2.0), per_call
    assert wb["txns_per_unit"][-1] == pytest.approx(10 * per_call, abs=0.5), (per_call, wb)
    assert heap <= wb["pages_per_unit"][-1] <= heap + 2, (heap, wb)
    assert 1 <= wb["runs_per_unit"][-1] <= 3, wb
    assert wb["pages_per_unit"] == sorted(wb["pages_per_unit"])
    assert (wb["checkpoint_timeout_s"], wb["max_wal_bytes"], wb["flush_after_bytes"]) == (300.0, 1024.0 ** 3, 262144.0)
    assert wb["completion_target"] == pytest.approx(0.9)


@pytest.mark.needs_postgres
def test_bench_import_records_a_profile_that_simulate_replays(storlab, where):
    """`storlab bench import` on a real cluster, 4 MiB of CSV. By hand, a row
    of the input is about 98 bytes (id ~5 digits, customer ~8, amount ~8,
    a 22-character time, a 20-80-letter note, 4 commas, a newline); its
    heap tuple about 116 (a 24-byte header, 8 + 4 + ~10 + 8 + 51 bytes of
    fields with alignment, a 4-byte line pointer): 1.2 table bytes an input
    byte. Each index entry is 16 bytes and a line pointer, the random one
    at about 70 % full: (20 + 28) / 98, about 0.5. Every row is WAL-logged
    at least once, so the WAL is at least the table."""
    try:
        find_pg_bin()
    except DatabaseError as e:
        pytest.skip(str(e))
    out = where / "imp.toml"
    r = storlab("bench", "import", "--dir", str(where / "rec"), "--size-mib", "4", "--profile-out", str(out))
    assert r.returncode == 0, r.stderr
    p = tomllib.loads(out.read_text())
    per = p["per_input_byte"]
    assert 0.9 <= per["table_bytes"] <= 1.5, per
    assert 0.3 <= per["index_bytes"] <= 0.8, per
    assert per["wal_bytes"] >= per["table_bytes"], per
    assert p["cpu_us_per_mib"] > 0
    assert p["provenance"]["command"] == f"storlab bench import --dir {where / 'rec'} --size-mib 4 --profile-out {out}"
    sc = where / "s.toml"
    sc.write_text(f'[workload.import]\nprofile = "{out}"\nsize_gib = 1\n\n[configs.gp3]\nhost = "aws/ec2/r5.large"\n'
                  '[[configs.gp3.pools]]\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n')
    r = storlab("simulate", str(sc), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["runtime_s"] > 0
    # The old entry point names the verb.
    old = subprocess.run([sys.executable, "-m", "storlab.db.import_profile", "--dir", str(where), "--out", str(out)],
                         capture_output=True, text=True, timeout=60)
    assert old.returncode == 2 and "storlab bench import" in old.stderr, old.stderr
