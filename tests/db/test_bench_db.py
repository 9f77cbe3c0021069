"""`storlab bench db` end to end on real databases: TPC-C's consistency
conditions after a run, NOPM against the database's own count, the insert
storm's rows and commit cadence, a user-defined TPC-B-like workload whose
balances must add up, sweeps, and bad input. Expected values come from the
TPC-C and TPC-B rules or from the options given, never from a previous run."""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from storlab.db.managed import ManagedPostgres, find_pg_bin
from storlab.errors import DatabaseError

ROOT = Path(__file__).resolve().parent.parent.parent
TPCB = ROOT / "examples" / "db" / "tpcb-like.toml"

# TPC-C consistency conditions 1-4 (clause 3.3.2.1-3.3.2.4), written here
# independently of the driver's own check: each query lists violators.
CONDITIONS = {
    1: "SELECT w_id FROM warehouse w WHERE abs(w_ytd - (SELECT sum(d_ytd) FROM district WHERE d_w_id = w_id)) > 0.005",
    2: "SELECT d_w_id, d_id FROM district WHERE d_next_o_id - 1 <> (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id)"
       " OR d_next_o_id - 1 <> (SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id)",
    3: "SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)",
    4: "SELECT o_w_id, o_d_id FROM orders GROUP BY o_w_id, o_d_id"
       " HAVING sum(o_ol_cnt) <> (SELECT count(*) FROM order_line WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id)",
}


def bench(storlab, *args: str, env: dict | None = None) -> dict:
    r = storlab("bench", "db", *args, "--json", env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def fails(storlab, *args: str, env: dict | None = None) -> str:
    r = storlab("bench", "db", *args, env=env)
    assert r.returncode == 1, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ")
    return err


@pytest.fixture
def where():
    """A folder the PostgreSQL server user can enter (pytest's tmp_path sits
    under a 0700 folder of root's)."""
    d = Path(tempfile.mkdtemp(prefix="storlab-test-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    """One managed cluster for the module's PostgreSQL tests."""
    try:
        find_pg_bin()
    except DatabaseError as e:
        pytest.skip(str(e))
    d = Path(tempfile.mkdtemp(prefix="storlab-test-"))
    d.chmod(0o755)
    pg = ManagedPostgres(d / "db", max_connections=60)
    pg.start()
    yield pg
    pg.stop()
    shutil.rmtree(d, ignore_errors=True)


def psql(pg: ManagedPostgres, sql: str) -> list[list[str]]:
    r = subprocess.run([str(find_pg_bin() / "psql"), "-X", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", pg.conninfo, "-c", sql],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.splitlines()]


def check_tpcc_result(rec: dict, vus: int) -> dict:
    assert rec["engine"] == "measure"
    (res,) = rec["results"]
    (run,) = rec["runs"]
    assert res["vus"] == vus and run["vus"] == vus
    txn = res["txn"]
    total = sum(t["commits"] + t["rollbacks"] + t["errors"] for t in txn.values())
    assert total > 200, txn
    # HammerDB's mix: 10/23 New-Order, 10/23 Payment, 1/23 each of the others.
    share = (txn["new_order"]["commits"] + txn["new_order"]["rollbacks"]) / total
    assert abs(share - 10 / 23) < 0.06, share
    # NOPM counts committed New-Orders only: the client's own count of them in
    # the window matches Δd_next_o_id up to the transactions in flight at the
    # two edges (at most one per VU at each), those that commit while each
    # edge's snapshot query runs (the users do not stop for it; 1 % of the
    # count allowed for them, where a loaded machine slows that query) and
    # NOPM's rounding to a whole number (half a New-Order a minute).
    minutes = run["duration_s"] / 60
    new_orders = txn["new_order"]["commits"]
    assert abs(new_orders - run["nopm"] * minutes) <= 2 * vus + 1 + 0.01 * new_orders + 0.5 * minutes
    assert run["hammerdb"] == f"System achieved {int(run['nopm'])} NOPM from {int(run['tpm'])} {'PostgreSQL' if run['db'] == 'postgres' else 'SQLite'} TPM"
    pay = txn["payment"]
    # Percentiles of one histogram are ordered, and a mean lies between the
    # median's floor (0) and the largest latency.
    assert 0 < pay["lat_p50_us"] <= pay["lat_p90_us"] <= pay["lat_p99_us"] <= pay["lat_max_us"] * 1.01
    assert 0 < pay["lat_mean_us"] <= pay["lat_max_us"]
    assert all(v["ok"] for v in res["consistency"].values()), res["consistency"]
    return run


def test_tpcc_on_sqlite_keeps_the_consistency_conditions(storlab, where):
    d = where / "lite"
    rec = bench(storlab, "--workload", "tpcc", "--db", "sqlite", "--dir", str(d), "--warehouses", "1", "--vus", "2",
                "--rampup", "1", "--duration", "6", "--check", "--keep")
    run = check_tpcc_result(rec, 2)
    db = sqlite3.connect(d / "storlab.sqlite")
    for n, sql in CONDITIONS.items():
        assert db.execute(sql).fetchall() == [], f"condition {n}"
    # Every committed New-Order since the load moved d_next_o_id on from 3001
    # in each of the 10 districts, so there are that many orders more than
    # the 30,000 loaded.
    grown = db.execute("SELECT sum(d_next_o_id) - 10 * 3001 FROM district").fetchone()[0]
    assert grown >= run["txn"]["new_order"]["commits"]
    assert db.execute("SELECT count(*) FROM orders").fetchone()[0] == 30_000 + grown
    # The counting VFS saw the WAL synced at least once per write commit
    # (synchronous = FULL).
    io = run["io_profile"]
    assert io["totals"]["wal_syncs"] >= run["txn"]["new_order"]["commits"] + run["txn"]["payment"]["commits"]
    assert io["per_txn"]["wal_bytes"] > 4096 * 0.5


def test_sqlite_file_is_removed_unless_kept(storlab, where):
    d = where / "gone"
    bench(storlab, "--workload", "insert", "--db", "sqlite", "--dir", str(d), "--vus", "1", "--rows", "10", "--commit-every", "5")
    assert not d.exists()


@pytest.mark.needs_postgres
def test_tpcc_on_postgres_keeps_the_consistency_conditions_and_tpm_agrees(storlab, server):
    rec = bench(storlab, "--workload", "tpcc", "--db", server.conninfo, "--warehouses", "2", "--vus", "3",
                "--rampup", "2", "--duration", "12", "--check")
    run = check_tpcc_result(rec, 3)
    for n, sql in CONDITIONS.items():
        assert psql(server, sql) == [], f"condition {n}"
    # The engine's commit+rollback count (read after the workers left) and
    # the client's own count of the same window agree; the start edge can
    # hold up to ~1 s of unflushed statistics per busy backend.
    assert 0.9 < run["engine_to_client_ratio"] < 1.12, run
    assert run["io_profile"]["per_txn"]["wal_bytes"] > 0
    assert 0.5 < run["io_profile"]["buffer_cache_hit_ratio"] <= 1
    # Server-side functions: the client does little per transaction.
    assert run["client_cpu_us_per_txn"] < 2000


@pytest.mark.needs_postgres
def test_insert_storm_rows_and_commit_cadence_on_postgres(storlab, server):
    vus, rows, every = 3, 1050, 100
    rec = bench(storlab, "--workload", "insert", "--db", server.conninfo, "--vus", str(vus), "--rows", str(rows),
                "--commit-every", str(every))
    (res,) = rec["results"]
    assert int(psql(server, "SELECT count(*) FROM storlab_insert")[0][0]) == vus * rows
    assert res["rows"] == vus * rows
    # 1050 rows in batches of 100: 11 commits per VU, the last of 50 rows.
    assert res["commits"] == vus * math.ceil(rows / every)
    keys = psql(server, "SELECT min(length(id)), max(length(id)), count(DISTINCT id) FROM storlab_insert")[0]
    assert keys == ["32", "32", str(vus * rows)]
    idx = {r[0] for r in psql(server, "SELECT indexname FROM pg_indexes WHERE tablename = 'storlab_insert'")}
    assert len(idx) == 5, idx  # the key and four secondary indexes
    assert 0 < res["last_commit_s"] <= rec["runs"][0]["duration_s"] + 0.01


def test_insert_storm_on_sqlite(storlab, where):
    d = where / "ins"
    rec = bench(storlab, "--workload", "insert", "--db", "sqlite", "--dir", str(d), "--vus", "2", "--rows", "230",
                "--commit-every", "50", "--keep")
    (res,) = rec["results"]
    db = sqlite3.connect(d / "storlab.sqlite")
    assert db.execute("SELECT count(*) FROM storlab_insert").fetchone()[0] == 460
    assert res["commits"] == 2 * 5  # 230 rows by 50: 4 full batches and one of 30, per VU
    # Each commit syncs the WAL once with synchronous = FULL.
    assert rec["runs"][0]["io_profile"]["totals"]["wal_syncs"] >= res["commits"]


def test_insert_storm_leaves_a_users_table_of_its_name_alone_on_sqlite(storlab, where):
    """A `storlab_insert` that storlab did not create is the user's: the storm
    refuses to run rather than drop it, and the table keeps its rows."""
    d = where / "mine"
    d.mkdir()
    db = sqlite3.connect(d / "storlab.sqlite")
    db.execute("CREATE TABLE storlab_insert (precious text)")
    db.execute("INSERT INTO storlab_insert VALUES ('keep me')")
    db.commit()
    db.close()
    err = fails(storlab, "--workload", "insert", "--db", "sqlite", "--dir", str(d), "--vus", "1", "--rows", "5", "--keep")
    assert "storlab_insert" in err and "did not create" in err
    db = sqlite3.connect(d / "storlab.sqlite")
    assert db.execute("SELECT precious FROM storlab_insert").fetchall() == [("keep me",)]


@pytest.mark.needs_postgres
def test_insert_storm_leaves_a_users_table_of_its_name_alone_on_postgres(storlab, server):
    psql(server, "DROP TABLE IF EXISTS storlab_insert; CREATE TABLE storlab_insert (precious text); INSERT INTO storlab_insert VALUES ('keep me')")
    try:
        err = fails(storlab, "--workload", "insert", "--db", server.conninfo, "--vus", "1", "--rows", "5")
        assert "storlab_insert" in err and "did not create" in err
        assert psql(server, "SELECT precious FROM storlab_insert") == [["keep me"]]
    finally:
        psql(server, "DROP TABLE storlab_insert")
    # Its own table, from an earlier storm, is recreated: 5 rows, not 10.
    for _ in range(2):
        bench(storlab, "--workload", "insert", "--db", server.conninfo, "--vus", "1", "--rows", "5", "--commit-every", "5")
    assert psql(server, "SELECT count(*) FROM storlab_insert") == [["5"]]


def tpcb_balances_add_up(rows: list) -> None:
    # TPC-B's consistency: every transaction adds the same delta to one
    # account, its teller and its branch, and logs it once in history.
    accounts, tellers, branches, history, n = (int(float(x)) for x in rows[0])
    assert accounts == tellers == branches == history
    assert n > 0


def test_tpcb_like_workload_file_on_sqlite(storlab, where):
    d = where / "tpcb"
    rec = bench(storlab, "--workload", str(TPCB), "--db", "sqlite", "--dir", str(d), "--vus", "2", "--duration", "3",
                "--rampup", "0", "--keep")
    (res,) = rec["results"]
    assert res["txn"]["tpcb"]["commits"] > 50
    db = sqlite3.connect(d / "storlab.sqlite")
    assert db.execute("SELECT count(*) FROM pgbench_accounts").fetchone()[0] == 100_000
    assert db.execute("SELECT count(*) FROM pgbench_tellers").fetchone()[0] == 10
    tpcb_balances_add_up(db.execute(
        "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers),"
        " (SELECT sum(bbalance) FROM pgbench_branches), (SELECT coalesce(sum(delta), 0) FROM pgbench_history),"
        " (SELECT count(*) FROM pgbench_history)").fetchall())
    assert db.execute("SELECT count(*) FROM pgbench_history").fetchone()[0] >= res["txn"]["tpcb"]["commits"]


@pytest.mark.needs_postgres
def test_tpcb_like_workload_file_on_postgres_at_scale_2(storlab, server):
    rec = bench(storlab, "--workload", str(TPCB), "--db", server.conninfo, "--scale", "2", "--vus", "4", "--duration", "3",
                "--rampup", "0")
    assert rec["results"][0]["txn"]["tpcb"]["errors"] == 0
    assert psql(server, "SELECT count(*), max(bid) FROM pgbench_accounts") == [["200000", "2"]]
    # The fresh load was vacuumed and analysed, as pgbench -i leaves it.
    assert psql(server, "SELECT relname, last_vacuum IS NOT NULL, last_analyze IS NOT NULL FROM pg_stat_user_tables"
                        " WHERE relname = 'pgbench_accounts'") == [["pgbench_accounts", "t", "t"]]
    tpcb_balances_add_up(psql(server,
        "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers),"
        " (SELECT sum(bbalance) FROM pgbench_branches), (SELECT coalesce(sum(delta), 0) FROM pgbench_history),"
        " (SELECT count(*) FROM pgbench_history)"))


TPCE = ROOT / "examples" / "db" / "tpce-like.toml"
# TPC-E's mix (clause 6.2.1), as the file's weights in thousandths.
TPCE_MIX = {"trade_status": 190, "market_watch": 180, "security_detail": 140, "customer_position": 130, "trade_order": 101,
            "trade_result": 100, "trade_lookup": 80, "broker_volume": 49, "trade_update": 20, "market_feed": 10}


def test_tpce_like_reports_tpse_and_keeps_its_books(storlab, where):
    d = where / "tpce"
    rec = bench(storlab, "--workload", str(TPCE), "--db", "sqlite", "--dir", str(d), "--vus", "2", "--duration", "4",
                "--rampup", "0", "--keep")
    (res,) = rec["results"]
    (run,) = rec["runs"]
    txn = res["txn"]
    assert sum(t["errors"] for t in txn.values()) == 0, {k: t["errors"] for k, t in txn.items()}
    # tpsE: Trade-Result's commits a second over the window.
    assert res["headline_name"] == "tpsE"
    assert res["headline"] == pytest.approx(txn["trade_result"]["commits"] / run["duration_s"], rel=0.01)
    # The mix: each type's share of the commits within 4 points of TPC-E's.
    total = sum(t["commits"] for t in txn.values())
    assert total > 500
    for name, w in TPCE_MIX.items():
        assert txn[name]["commits"] / total == pytest.approx(w / 1000, abs=0.04), name
    db = sqlite3.connect(d / "storlab.sqlite")
    one = lambda q: db.execute(q).fetchone()[0]  # noqa: E731
    # The load: TPC-E's per-1,000-customer ratios at scale 1.
    assert [one(f"SELECT count(*) FROM {t}") for t in ("customer", "customer_account", "broker", "security")] == [1000, 5000, 10, 685]
    assert one("SELECT count(DISTINCT ca_c_id) FROM customer_account") == 1000
    # Trade-Order numbers its trades on after the 101,000 loaded ones (1,000
    # of them pending); Trade-Result completes from the first pending one,
    # so the pending stay about 1,000 (orders and results 101 : 100).
    assert one("SELECT min(t_id) FROM trade WHERE t_id > 101000") == 101001
    assert 900 <= one("SELECT count(*) FROM trade WHERE t_st_id = 'PNDG'") <= 1100
    assert one("SELECT min(t_id) FROM trade WHERE t_st_id = 'CMPT' AND t_id > 100000") == 100001
    # Each completed new trade got one holding, settlement and cash row, and
    # its broker one trade more.
    completed = one("SELECT count(*) FROM trade WHERE t_id > 100000 AND t_st_id = 'CMPT'")
    assert completed > 0
    assert one("SELECT count(*) FROM cash_transaction") == completed
    assert one("SELECT count(*) FROM settlement WHERE se_t_id > 100000") == completed
    assert one("SELECT sum(b_num_trades) FROM broker") == completed
    db.close()
    # A second run on the kept database goes on after the highest trade id:
    # no id is placed twice.
    top = sqlite3.connect(d / "storlab.sqlite").execute("SELECT max(t_id) FROM trade").fetchone()[0]
    again = bench(storlab, "--workload", str(TPCE), "--db", "sqlite", "--dir", str(d), "--vus", "2", "--duration", "2",
                  "--rampup", "0", "--keep")
    assert again["results"][0]["txn"]["trade_order"]["commits"] > 0
    db = sqlite3.connect(d / "storlab.sqlite")
    assert db.execute("SELECT count(*) - count(DISTINCT t_id) FROM trade").fetchone()[0] == 0
    assert db.execute("SELECT min(t_id) FROM trade WHERE t_id > ?", (top,)).fetchone()[0] == top + 1


def test_sweep_with_repeats_reports_mean_and_spread(storlab, where):
    rec = bench(storlab, "--workload", str(TPCB), "--db", "sqlite", "--dir", str(where / "sw"), "--vus", "1,2",
                "--repeat", "2", "--duration", "1.5", "--rampup", "0")
    assert [s["vus"] for s in rec["steps"]] == [1, 2]
    # A list of counts runs in rounds: 1, 2, then 1, 2 again, each run
    # starting after the one before it.
    assert [(r["vus"], r["repeat"]) for r in rec["runs"]] == [(1, 1), (2, 1), (1, 2), (2, 2)]
    starts = [r["started_unix_s"] for r in rec["runs"]]
    assert starts == sorted(starts)
    for s in rec["steps"]:
        mine = [r["tpm_client"] for r in rec["runs"] if r["vus"] == s["vus"]]
        assert s["repeats"] == 2
        assert s["tpm_client"] == pytest.approx(sum(mine) / 2, abs=0.1)
        assert s["tpm_client_min"] == min(mine) and s["tpm_client_max"] == max(mine)


@pytest.mark.needs_postgres
def test_managed_postgres_through_the_cli_leaves_nothing(storlab, where):
    d = where / "managed"
    rec = bench(storlab, "--workload", "insert", "--db", "managed-postgres", "--dir", str(d), "--vus", "2", "--rows", "20",
                "--commit-every", "10")
    assert rec["results"][0]["rows"] == 40
    # A managed cluster times its WAL syncs (track_wal_io_timing): the mean
    # is pg_stat_wal's total sync time (ms) over its sync count, in µs.
    io = rec["results"][0]["io_profile"]
    t = io["totals"]
    # 2 VUs × 2 commits of 10 rows: 4 commits, and one sync serves at most
    # one commit of each user in flight (group commit), so at least 2 syncs.
    assert t["wal_sync"] >= 2 and t["wal_sync_time"] > 0
    assert io["wal_sync_us"] == pytest.approx(t["wal_sync_time"] * 1000 / t["wal_sync"])
    assert not d.exists()
    out = subprocess.run(["pgrep", "-af", str(d)], capture_output=True, text=True).stdout
    assert str(d) not in out
    bench(storlab, "--workload", "insert", "--db", "managed-postgres", "--dir", str(d), "--vus", "1", "--rows", "5", "--keep")
    assert (d / "storlab-pg" / "data" / "PG_VERSION").exists()
    assert str(d) not in subprocess.run(["pgrep", "-af", str(d)], capture_output=True, text=True).stdout


@pytest.mark.needs_postgres
def test_setting_reaches_the_managed_server_and_its_record(storlab, where):
    d = where / "set"
    rec = bench(storlab, "--workload", "insert", "--db", "managed-postgres", "--dir", str(d), "--vus", "1", "--rows", "10",
                "--setting", "shared_buffers=20MB", "--setting", "checkpoint_timeout = 15min")
    settings = rec["runs"][0]["server"]["settings"]
    # PostgreSQL shows 20MB as 20MB (2,560 pages of 8 kB); its default is 128MB.
    assert settings["shared_buffers"] == "20MB"
    assert settings["checkpoint_timeout"] == "15min"
    assert not d.exists()
    # A misspelt name stops the server's start with PostgreSQL's own words.
    err = fails(storlab, "--workload", "insert", "--db", "managed-postgres", "--dir", str(d), "--rows", "5",
                "--setting", "shared_bufers=20MB")
    assert 'unrecognized configuration parameter "shared_bufers"' in err
    assert not d.exists()
    assert "give NAME=VALUE" in fails(storlab, "--db", "managed-postgres", "--dir", str(d), "--setting", "shared_buffers")
    assert "managed by storlab" in fails(storlab, "--db", "managed-postgres", "--dir", str(d), "--setting", "port=5433")
    assert "--db managed-postgres" in fails(storlab, "--db", "sqlite", "--dir", str(where), "--setting", "a=b")


def test_bad_input_gets_one_clear_line(storlab, where, tmp_path):
    assert "not a duration" in fails(storlab, "--dir", str(where), "--duration", "abc")
    assert "--vus" in fails(storlab, "--dir", str(where), "--vus", "0")
    assert "--warehouses 0" in fails(storlab, "--dir", str(where), "--warehouses", "0")
    assert "needs --dir" in fails(storlab, "--db", "sqlite")
    assert "--db 'oracle'" in fails(storlab, "--db", "oracle", "--dir", str(where))
    # SQLite's New-Order does not report its order id: no commit log there.
    assert "--commit-log" in fails(storlab, "--db", "sqlite", "--dir", str(where), "--commit-log", str(tmp_path / "c.txt"))
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\ntables = ["t"\n')
    err = fails(storlab, "--workload", str(bad), "--db", "sqlite", "--dir", str(where))
    assert "bad.toml:" in err
    gen = tmp_path / "gen.toml"
    gen.write_text('name = "x"\ntables = ["t"]\n[params]\na = { unifrom = [1, 2] }\n[[transaction]]\nstatements = ["SELECT :a"]\n')
    err = fails(storlab, "--workload", str(gen), "--db", "sqlite", "--dir", str(where))
    assert "gen.toml" in err and "params.a" in err and "did you mean 'uniform'" in err


def test_wrong_dsn_and_unreachable_server(storlab):
    err = fails(storlab, "--db", "postgres://bob:s3cretpw@127.0.0.1:notaport/x")
    assert "cannot parse" in err and "s3cretpw" not in err
    err = fails(storlab, "--db", "postgres://bob:s3cretpw@127.0.0.1:1/x", "--duration", "1")
    assert "cannot connect to postgres bob@127.0.0.1:1/x" in err and "s3cretpw" not in err


@pytest.mark.needs_postgres
def test_tls_required_is_refused_with_the_way_out(storlab, server):
    err = fails(storlab, "--workload", "insert", "--db", server.conninfo + " sslmode=require", "--rows", "1")
    assert "TLS" in err and "sslmode=prefer" in err


@pytest.mark.needs_postgres
def test_missing_postgres_binaries(storlab, where, tmp_path):
    err = fails(storlab, "--db", "managed-postgres", "--dir", str(where / "m"), env={"STORLAB_PG_BIN": str(tmp_path)})
    assert "STORLAB_PG_BIN" in err
    assert not (where / "m").exists()


@pytest.mark.needs_postgres
def test_password_from_environment_never_reaches_the_record(storlab, server):
    secret = "pw-9f3b1c"
    r = storlab("bench", "db", "--workload", "insert", "--db", server.conninfo, "--vus", "1", "--rows", "5", "--json",
                env={"PGPASSWORD": secret})
    assert r.returncode == 0, r.stderr
    assert secret not in r.stdout and secret not in r.stderr


@pytest.mark.needs_postgres
@pytest.mark.parametrize("method", ["scram-sha-256", "md5", "password"])
def test_password_authentication_methods(storlab, server, method):
    """The virtual users log in on their own connections: each of the
    server's password methods must let them in with PGPASSWORD, and only
    with it."""
    role, secret = f"storlab_{method.replace('-', '_')}", f"pw-{method}-7c1e"
    encryption = "md5" if method == "md5" else "scram-sha-256"
    psql(server, f"SET password_encryption = '{encryption}'; DROP ROLE IF EXISTS {role};"
                 f" CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{secret}'")
    hba = server.data_dir / "pg_hba.conf"
    hba.write_text(f"local all {role} {method}\n" + hba.read_text())
    psql(server, "SELECT pg_reload_conf()")
    dsn = f"{server.conninfo.replace('user=postgres', '')} user={role}"
    psql(server, "DROP TABLE IF EXISTS storlab_insert")
    r = storlab("bench", "db", "--workload", "insert", "--db", dsn, "--vus", "2", "--rows", "30", "--commit-every", "10",
                "--json", env={"PGPASSWORD": secret})
    assert r.returncode == 0, r.stderr
    assert secret not in r.stdout and secret not in r.stderr
    assert json.loads(r.stdout)["results"][0]["txn"]["insert"]["rows"] == 60
    assert psql(server, "SELECT count(*) FROM storlab_insert") == [["60"]]
    err = fails(storlab, "--workload", "insert", "--db", dsn, "--vus", "1", "--rows", "1", env={"PGPASSWORD": "wrong"})
    assert "password authentication failed" in err and "PGPASSWORD" in err and "wrong" not in err


@pytest.mark.needs_postgres
def test_failed_statement_rolls_its_transaction_back_and_the_user_goes_on(storlab, server, where):
    """A transaction whose second statement fails (1 / 0 when x = 1) is
    counted as an error, rolled back (its insert must not survive) and the
    user carries on with the next."""
    wl = where / "div.toml"
    wl.write_text("""name = "div"
tables = ["storlab_div"]
schema = ["CREATE TABLE storlab_div (x int)"]
[params]
x = { uniform = [1, 2] }
[[transaction]]
name = "t"
statements = ["INSERT INTO storlab_div VALUES (:x)", "SELECT 1 / (:x - 1)"]
""")
    psql(server, "DROP TABLE IF EXISTS storlab_div")
    rec = bench(storlab, "--workload", str(wl), "--db", server.conninfo, "--vus", "2", "--duration", "2", "--rampup", "0")
    t = rec["results"][0]["txn"]["t"]
    n = t["commits"] + t["errors"]
    assert n > 100
    # x is 1 or 2 with even odds: the errors are a binomial half of n.
    assert abs(t["errors"] - n / 2) < 4 * math.sqrt(n / 4)
    assert any("division by zero" in m for m in rec["runs"][0]["error_messages"])
    assert psql(server, "SELECT count(*) FILTER (WHERE x = 1), count(*) FILTER (WHERE x = 2) >= %d FROM storlab_div"
                % t["commits"]) == [["0", "t"]]


def interrupt_after(args: list[str], seconds: float, sig: int | None = None) -> tuple[int, dict, str]:
    """Interrupts a run after `seconds`: long enough on a busy 2-core machine
    for the load (or initdb) to be over, so the interrupt lands in a window."""
    import signal
    import sys
    import time

    p = subprocess.Popen([sys.executable, "-m", "storlab.cli", "bench", "db", *args, "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(seconds)
    p.send_signal(sig or signal.SIGINT)
    out, err = p.communicate(timeout=120)
    return p.returncode, json.loads(out), err


def test_ctrl_c_keeps_what_was_measured_and_cleans_up(where):
    d = where / "int"
    code, rec, err = interrupt_after(["--workload", "tpcc", "--db", "sqlite", "--dir", str(d), "--vus", "2",
                                      "--rampup", "1", "--duration", "60"], 15)
    assert code == 130, err
    assert rec["interrupted"] is True
    (run,) = rec["runs"]
    # The window closed at the interrupt, well before its 60 s.
    assert 0.5 < run["duration_s"] < 30
    assert run["transactions"] > 0 and run["nopm"] > 0
    assert not d.exists()
    assert "Traceback" not in err


# (database, rows each VU would insert, seconds before the signal: the
# managed cluster's initdb and start take longer than a SQLite file).
SIGNAL_CASES = [
    pytest.param("sqlite", 100_000_000, 4, sig, code, id=f"sqlite-{sig}")
    for sig, code in (("SIGTERM", 143), ("SIGHUP", 129))
] + [
    pytest.param("managed-postgres", 1_000_000, 15, sig, code, id=f"managed-postgres-{sig}",
                 marks=pytest.mark.needs_postgres)
    for sig, code in (("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129))
]


@pytest.mark.parametrize("db,rows,after_s,signame,want", SIGNAL_CASES)
def test_ctrl_c_kill_or_hangup_keeps_what_was_measured_and_leaves_nothing(where, db, rows, after_s, signame, want):
    """Closing the terminal (SIGHUP) or kill (SIGTERM) mid-run is Ctrl-C's
    case: what was measured is printed, the SQLite file (and its -wal/-shm)
    or the managed cluster goes, no server is left running, and the exit
    code is 128 + the signal's number (2, 15, 1)."""
    import signal

    d = where / "sig"
    code, rec, err = interrupt_after(["--workload", "insert", "--db", db, "--dir", str(d), "--vus", "2",
                                      "--rows", str(rows), "--commit-every", "10"], after_s, getattr(signal, signame))
    assert code == want, err
    assert rec["interrupted"] is True and rec["results"][0]["rows"] > 0
    assert not d.exists()
    assert "Traceback" not in err
    assert str(d) not in subprocess.run(["pgrep", "-af", str(d)], capture_output=True, text=True).stdout


def test_keying_and_thinking_times_pace_the_users(storlab, where):
    # With clause 5.2.5.7's times a user waits at least 2 s of keying before
    # every transaction, so 2 users can finish at most 2 x ceil(4 / 2) = 4
    # in a 4-second window (and none without sleeping).
    rec = bench(storlab, "--workload", "tpcc", "--db", "sqlite", "--dir", str(where / "kt"), "--vus", "2",
                "--rampup", "0", "--duration", "4", "--key-and-think")
    assert rec["runs"][0]["key_and_think"] is True
    assert rec["runs"][0]["transactions"] <= 4
    # The same users unpaced finish far more in the same window, so the bound
    # above is the pacing's doing, not a driver that ran nothing.
    free = bench(storlab, "--workload", "tpcc", "--db", "sqlite", "--dir", str(where / "kt"), "--vus", "2",
                 "--rampup", "0", "--duration", "4")
    assert free["runs"][0]["transactions"] >= 40, free["runs"][0]["transactions"]


def test_all_warehouses_spreads_one_user_over_every_warehouse(storlab, where):
    d = where / "aw"
    # One user whose home would be warehouse 1: with --all-warehouses its
    # New-Orders land in both warehouses.
    bench(storlab, "--workload", "tpcc", "--db", "sqlite", "--dir", str(d), "--warehouses", "2", "--vus", "1",
          "--rampup", "0", "--duration", "4", "--all-warehouses", "--keep")
    db = sqlite3.connect(d / "storlab.sqlite")
    grown = dict(db.execute("SELECT d_w_id, sum(d_next_o_id) - 10 * 3001 FROM district GROUP BY d_w_id").fetchall())
    assert grown[1] > 0 and grown[2] > 0, grown


SYSBENCH = ROOT / "examples" / "db"


def test_sysbench_files_keep_sysbenchs_table(storlab, where):
    """sysbench's oltp_* transactions on its sbtest1 (10,000 rows at scale 1,
    sysbench --table-size): the read-only one changes nothing; the
    read-write one deletes a row and inserts it again under the same id in
    every transaction, so the ids stay exactly 1..10,000, with c and pad of
    sysbench's lengths (oltp_common.lua)."""
    d = where / "sb"
    rec = bench(storlab, "--workload", str(SYSBENCH / "sysbench-read-only.toml"), "--db", "sqlite", "--dir", str(d),
                "--vus", "1", "--duration", "2", "--rampup", "0", "--keep")
    ro = rec["results"][0]["txn"]["read_only"]
    assert ro["errors"] == 0 and ro["commits"] > 20
    db = sqlite3.connect(d / "storlab.sqlite")
    before = db.execute("SELECT count(*), sum(k), min(id), max(id) FROM sbtest1").fetchone()
    db.close()
    assert (before[0], before[2], before[3]) == (10_000, 1, 10_000)
    again = bench(storlab, "--workload", str(SYSBENCH / "sysbench-read-only.toml"), "--db", "sqlite", "--dir", str(d),
                  "--vus", "1", "--duration", "1", "--rampup", "0", "--keep")
    assert again["results"][0]["txn"]["read_only"]["commits"] > 0
    db = sqlite3.connect(d / "storlab.sqlite")
    assert db.execute("SELECT count(*), sum(k), min(id), max(id) FROM sbtest1").fetchone() == before
    db.close()
    rw = bench(storlab, "--workload", str(SYSBENCH / "sysbench-read-write.toml"), "--db", "sqlite", "--dir", str(d),
               "--vus", "1", "--duration", "2", "--rampup", "0", "--keep")["results"][0]["txn"]["read_write"]
    assert rw["errors"] == 0 and rw["commits"] > 20
    db = sqlite3.connect(d / "storlab.sqlite")
    assert db.execute("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM sbtest1").fetchone() == (10_000, 10_000, 1, 10_000)
    # The rows inserted again carry sysbench's lengths: c 119, pad 59 characters.
    assert db.execute("SELECT max(length(c)), min(length(c)), max(length(pad)) FROM sbtest1").fetchone() == (119, 119, 59)
    db.close()
