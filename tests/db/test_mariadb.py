"""MySQL and MariaDB: the managed MariaDB server's lifecycle (nothing left
running or on disk, also after SIGTERM), settings in force and in the
record, the insert storm with --rows-per-user, a workload file in MySQL's
dialect, TPC-C with HammerDB's procedures (NOPM against the New-Orders the
client saw commit, TPM from Com_commit + Com_rollback), a server reached by
DSN with a password that appears nowhere, and bad input. Expected values
come from the options given and the TPC-C rules, never from a previous run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from storlab.db.mariadb import BASE, ManagedMariadb, find_bins, free_port
from storlab.errors import DatabaseError

pytestmark = pytest.mark.needs_mariadb

# The PATH the tests were started with, given to every run: mariadbd sits in
# /usr/sbin, found through PATH.
PATH = {"PATH": os.environ.get("PATH", os.defpath)}


@pytest.fixture(scope="module", autouse=True)
def _bins():
    try:
        find_bins()
    except DatabaseError as e:
        pytest.skip(str(e))


@pytest.fixture
def where():
    d = Path(tempfile.mkdtemp(prefix="storlab-test-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    """One managed server for the tests that reach MariaDB by DSN."""
    d = Path(tempfile.mkdtemp(prefix="storlab-test-"))
    m = ManagedMariadb(d / "srv", max_connections=50)
    m.start()
    try:
        yield m
    finally:
        m.stop()
        shutil.rmtree(d, ignore_errors=True)


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def no_server_on(d: Path) -> bool:
    return str(d) not in subprocess.run(["pgrep", "-af", "mariadbd"], capture_output=True, text=True).stdout


def bench(storlab, *args: str, env: dict | None = None) -> dict:
    r = storlab("bench", "db", *args, "--json", env={**PATH, **(env or {})})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def fails(storlab, *args: str, env: dict | None = None) -> str:
    r = storlab("bench", "db", *args, env={**PATH, **(env or {})})
    assert r.returncode == 1, (r.stdout, r.stderr)
    err = r.stderr.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ")
    return err


def fresh_db(server: ManagedMariadb, name: str) -> str:
    """A database of its own on the shared server, and its DSN."""
    server.sql(f"DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}")
    return f"mysql://root@127.0.0.1:{server.port}/{name}"


def test_lifecycle_in_a_new_dir_leaves_nothing(where):
    d = where / "run"  # missing: storlab creates it, so it removes it too
    m = ManagedMariadb(d)
    m.start()
    try:
        pid = m.server_pid
        assert pid is not None and alive(pid)
        assert m.sql("SELECT @@datadir").strip().rstrip("/") == str(d / BASE / "data")
        assert m.sql("SELECT @@bind_address, @@port").split() == ["127.0.0.1", str(m.port)]
        assert "storlab" in m.sql("SHOW DATABASES").split()
        assert m.dsn == f"mysql://root@127.0.0.1:{m.port}/storlab"
    finally:
        m.stop()
    assert not alive(pid)
    assert not d.exists()
    assert list(where.iterdir()) == []


def test_keep_then_reuse(where):
    d = where / "kept"
    m = ManagedMariadb(d, keep=True)
    m.start()
    m.sql("CREATE TABLE storlab.t (x int); INSERT INTO storlab.t VALUES (7)")
    m.stop()
    assert (d / BASE / "data").is_dir()
    again = ManagedMariadb(d)
    again.start()
    try:
        assert again.sql("SELECT x FROM storlab.t").strip() == "7"
    finally:
        again.stop()
    # The second run found DIR there: it removes its server, not DIR.
    assert d.is_dir() and not (d / BASE).exists()


def test_a_port_taken_before_the_server_binds_it_gets_another(where, monkeypatch):
    import socket

    import storlab.db.mariadb as mariadb

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        picks = iter([busy, free_port()])
        monkeypatch.setattr(mariadb, "free_port", lambda: next(picks))
        m = ManagedMariadb(where / "port")
        m.start()
        try:
            assert m.port != busy
            assert m.sql("SELECT @@port").strip() == str(m.port)
        finally:
            m.stop()
    assert not (where / "port").exists()


def test_foreign_folder_is_refused_and_untouched(where):
    (where / BASE).mkdir()
    (where / BASE / "mine.txt").write_text("user data")
    with pytest.raises(DatabaseError, match="not a server storlab made"):
        ManagedMariadb(where).start()
    assert (where / BASE / "mine.txt").read_text() == "user data"


def test_settings_in_force_and_the_insert_storm_with_rows_per_user(storlab, where):
    d = where / "ins"
    rec = bench(storlab, "--workload", "insert", "--db", "managed-mariadb", "--dir", str(d), "--vus", "3",
                "--rows-per-user", "300", "--commit-every", "50",
                "--setting", "innodb_buffer_pool_size=64M", "--setting", "innodb_flush_log_at_trx_commit=2",
                "--setting", "log_bin=ON", "--setting", "sync_binlog=0", "--setting", "innodb_io_capacity=500")
    (run,) = rec["runs"]
    s = run["server"]["settings"]
    # 64M = 64 x 1024 x 1024 bytes.
    assert s["innodb_buffer_pool_size"] == str(64 * 1024 * 1024)
    assert s["innodb_flush_log_at_trx_commit"] == "2"
    assert s["log_bin"] == "ON" and s["sync_binlog"] == "0"
    assert s["innodb_io_capacity"] == "500"
    assert run["server"]["version"].startswith("MariaDB ")
    # 3 users x 300 rows, 50 rows a commit: 900 rows in 18 commits.
    assert run["rows"] == 900
    assert run["txn"]["insert"]["commits"] == 18
    assert sum(run["per_second"]["rows"]) == 900
    # Each user's finish, from the window's start: three of them, the last
    # one when the last commit landed (the window ends with the last user).
    fin = run["vu_finish_s"]
    assert len(fin) == 3 and all(f is not None and 0 < f <= run["duration_s"] + 0.01 for f in fin), fin
    assert abs(max(fin) - run["last_commit_s"]) < 0.05, (fin, run["last_commit_s"])
    # The engine saw the 18 COMMITs (Com_commit), none lost.
    assert run["tpm_source"] == "engine" and run["errors"] == 0
    assert 0.95 <= run["engine_to_client_ratio"] <= 1.05, run
    assert not d.exists() and no_server_on(d)


def test_a_setting_the_server_rejects_is_one_line_and_leaves_nothing(storlab, where):
    d = where / "bad"
    err = fails(storlab, "--workload", "insert", "--db", "managed-mariadb", "--dir", str(d), "--rows", "10",
                "--setting", "innodb_no_such_thing=1")
    assert "innodb_no_such_thing" in err or "unknown" in err.lower(), err
    assert not d.exists() and no_server_on(d)


def test_a_setting_storlab_owns_is_refused(storlab, where):
    err = fails(storlab, "--workload", "insert", "--db", "managed-mariadb", "--dir", str(where / "p"),
                "--setting", "port=3306")
    assert "managed by storlab" in err


def test_mariadbd_missing_from_path_is_one_line(storlab, where):
    # Debian's mariadbd lives in /usr/sbin: a PATH without it finds none.
    env = {"PATH": "/usr/bin:/bin"}
    err = fails(storlab, "--workload", "insert", "--db", "managed-mariadb", "--dir", str(where / "m"), env=env)
    assert "mariadbd" in err and "mariadb-server" in err
    assert not (where / "m").exists()


def test_sigterm_mid_run_stops_the_server_and_removes_it(where):
    d = where / "sig"
    p = subprocess.Popen([sys.executable, "-m", "storlab.cli", "bench", "db", "--workload", "insert", "--db",
                          "managed-mariadb", "--dir", str(d), "--vus", "2", "--rows", "10000000", "--commit-every", "10",
                          "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until the storm runs (its table exists), then kill.
    deadline = time.time() + 120
    while time.time() < deadline and not list(d.glob(f"{BASE}/data/storlab/storlab_insert.ibd")):
        time.sleep(0.2)
    time.sleep(2)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 143, err
    rec = json.loads(out)
    assert rec["interrupted"] is True and rec["results"][0]["rows"] > 0
    assert not d.exists() and no_server_on(d)
    assert "Traceback" not in err


# A TPC-B-like workload in MySQL's dialect (integer division is DIV).
TPCB_MYSQL = """
name = "tpcb-mysql"
scale = 1
tables = ["acc", "tel", "hist"]
schema = [
  "CREATE TABLE acc (aid int PRIMARY KEY, bal int NOT NULL) ENGINE = InnoDB",
  "CREATE TABLE tel (tid int PRIMARY KEY, bal int NOT NULL) ENGINE = InnoDB",
  "CREATE TABLE hist (aid int, tid int, delta int, mtime datetime) ENGINE = InnoDB",
]
[[load]]
sql = "INSERT INTO acc VALUES (:aid, 0)"
rows = "1000 * scale"
params = { aid = { sequence = 1 } }
[[load]]
sql = "INSERT INTO tel VALUES (:tid, 0)"
rows = "10 * scale"
params = { tid = { sequence = 1 } }
[params]
aid = { uniform = [1, "1000 * scale"] }
delta = { uniform = [-5000, 5000] }
[[transaction]]
name = "tpcb"
statements = [
  "UPDATE acc SET bal = bal + :delta WHERE aid = :aid",
  "UPDATE tel SET bal = bal + :delta WHERE tid = (:aid - 1) DIV 100 + 1",
  "INSERT INTO hist VALUES (:aid, (:aid - 1) DIV 100 + 1, :delta, now())",
]
"""


def test_a_workload_file_in_mysql_dialect_by_dsn(storlab, server, where):
    dsn = fresh_db(server, "wl")
    f = where / "tpcb.toml"
    f.write_text(TPCB_MYSQL)
    rec = bench(storlab, "--workload", str(f), "--db", "mysql", "--dsn", dsn, "--vus", "2", "--rampup", "0",
                "--duration", "3")
    (run,) = rec["runs"]
    commits = run["txn"]["tpcb"]["commits"]
    assert commits > 0 and run["errors"] == 0
    # Every committed transaction logged one row, and the same delta went to
    # an account and to its teller: the sums agree and match the history.
    rows, acc, tel, hist = server.sql("SELECT (SELECT count(*) FROM hist), (SELECT sum(bal) FROM acc), "
                                      "(SELECT sum(bal) FROM tel), (SELECT coalesce(sum(delta), 0) FROM hist)", "wl").split()
    assert int(rows) >= commits
    assert acc == tel == hist
    # Teller of account 1000 is (1000 - 1) DIV 100 + 1 = 10: every teller row was hit only by its accounts.
    assert server.sql("SELECT count(*) FROM hist WHERE tid <> (aid - 1) DIV 100 + 1", "wl").strip() == "0"


def test_tpcc_the_hammerdb_way_nopm_matches_the_new_orders(storlab, server):
    dsn = fresh_db(server, "tpcc")
    rec = bench(storlab, "--workload", "tpcc", "--db", "mysql", "--dsn", dsn, "--warehouses", "1", "--vus", "2",
                "--rampup", "2", "--duration", "20", "--check")
    (run,) = rec["runs"]
    assert run["nopm"] > 0
    no = run["txn"]["new_order"]
    # NOPM counts the districts' next order ids; each committed New-Order
    # takes exactly one. The client's own count in the same window agrees,
    # up to the New-Orders that end while a snapshot is being taken at
    # either edge of the window (a few milliseconds of 2 busy users).
    window_min = run["duration_s"] / 60
    assert abs(run["nopm"] * window_min - no["commits"]) <= 4 + 0.02 * no["commits"], (run["nopm"], no)
    # About 1 % of New-Orders roll back (clause 2.4.2.3), intended, not errors.
    assert no["rollbacks"] <= max(5, no["commits"] * 0.05)
    assert run["errors"] == 0, run["error_messages"]
    # TPM from Com_commit + Com_rollback: one COMMIT or ROLLBACK per CALL.
    assert run["tpm_source"] == "engine"
    assert 0.9 <= run["engine_to_client_ratio"] <= 1.1, run
    assert run["hammerdb"] == f"System achieved {int(run['nopm'])} NOPM from {int(run['tpm'])} MariaDB TPM"
    assert all(c["ok"] for c in run["consistency"].values()), run["consistency"]
    # Every type ran (HammerDB's mix: 10/23 New-Order and Payment, 1/23 each other).
    assert all(run["txn"][k]["commits"] > 0 for k in ("new_order", "payment"))


def test_a_password_by_mysql_pwd_appears_nowhere(storlab, server, where):
    secret = "Pw-7f3a9c-secret"
    dsn = fresh_db(server, "pw")
    server.sql(f"DROP USER IF EXISTS 'bench'@'127.0.0.1'; CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '{secret}'; "
               "GRANT ALL ON pw.* TO 'bench'@'127.0.0.1'")
    url = dsn.replace("root@", "bench@")
    r = storlab("bench", "db", "--workload", "insert", "--db", "mysql", "--dsn", url, "--vus", "2", "--rows", "100",
                "--commit-every", "20", "--json", env={**PATH, "MYSQL_PWD": secret})
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["results"][0]["rows"] == 200
    assert secret not in r.stdout and secret not in r.stderr
    report = where / "r.json"
    report.write_text(r.stdout)
    assert secret not in report.read_text()
    # The wrong password: one line naming the fix, and still no password.
    err = fails(storlab, "--workload", "insert", "--db", "mysql", "--dsn", url, "--rows", "10",
                env={"MYSQL_PWD": "wrong-" + secret})
    assert "MYSQL_PWD" in err and secret not in err


def test_the_password_from_my_cnf(storlab, server, where):
    secret = "Cnf-91b2-secret"
    dsn = fresh_db(server, "cnf")
    server.sql(f"DROP USER IF EXISTS 'cnf'@'127.0.0.1'; CREATE USER 'cnf'@'127.0.0.1' IDENTIFIED BY '{secret}'; "
               "GRANT ALL ON cnf.* TO 'cnf'@'127.0.0.1'")
    (where / ".my.cnf").write_text(f"[mysqld]\npassword=not-this\n[client]\npassword=\"{secret}\"\n")
    begins = lambda: int(server.sql("SHOW GLOBAL STATUS LIKE 'Com_begin'").split()[1])  # noqa: E731
    begun = begins()
    r = storlab("bench", "db", "--workload", "insert", "--db", "mysql", "--dsn", dsn.replace("root@", "cnf@"),
                "--rows", "10", "--commit-every", "1", "--json", env={**PATH, "HOME": str(where)})
    assert r.returncode == 0, r.stderr
    (run,) = json.loads(r.stdout)["runs"]
    assert run["rows"] == 10
    # Ten one-row transactions, each one INSERT in autocommit as sysbench
    # sends it: no BEGIN reached the server, and MySQL counts no Com_commit
    # for them, so the TPM is the client's ten commits.
    assert run["txn"]["insert"]["commits"] == 10
    assert begins() == begun
    assert run["tpm_source"] == "client", run
    assert any("autocommit" in n for n in run["io_profile"]["notes"]), run["io_profile"]
    assert secret not in r.stdout + r.stderr


def test_a_table_storlab_did_not_create_is_left_alone(storlab, server):
    dsn = fresh_db(server, "theirs")
    server.sql("CREATE TABLE storlab_insert (id int); INSERT INTO storlab_insert VALUES (42)", "theirs")
    err = fails(storlab, "--workload", "insert", "--db", "mysql", "--dsn", dsn, "--rows", "10")
    assert "did not create" in err
    assert server.sql("SELECT id FROM storlab_insert", "theirs").strip() == "42"


def test_an_unreachable_server_is_one_line(storlab):
    port = free_port()  # nobody listens there
    err = fails(storlab, "--workload", "insert", "--db", "mysql", "--dsn", f"mysql://root@127.0.0.1:{port}/x", "--rows", "10")
    assert f"127.0.0.1:{port}" in err and "check that the server is running" in err


def test_dsn_without_db_mysql_and_db_mysql_without_dsn(storlab):
    assert "--dsn" in fails(storlab, "--workload", "insert", "--db", "mysql", "--rows", "10")
    assert "--dsn" in fails(storlab, "--workload", "insert", "--db", "sqlite", "--dir", "/tmp/x",
                            "--dsn", "mysql://root@127.0.0.1:1/x")
    assert "mysql://" in fails(storlab, "--workload", "insert", "--db", "mysql", "--dsn", "postgres://a@b/c")


def test_a_sweep_runs_each_count_with_its_own_rows(storlab, server):
    dsn = fresh_db(server, "sweep")
    rec = bench(storlab, "--workload", "insert", "--db", "mysql", "--dsn", dsn, "--vus", "1,2,4",
                "--rows-per-user", "50", "--commit-every", "10")
    # Each count starts from an empty table: 50 rows a user.
    assert [(r["vus"], r["rows"]) for r in rec["results"]] == [(1, 50), (2, 100), (4, 200)]
    assert [r["txn"]["insert"]["commits"] for r in rec["runs"]] == [5, 10, 20]
    assert rec["tipping_point"] and rec["tipping_point"][0]["vus"] in (1, 2, 4)


def test_the_table_says_when_the_users_were_done(storlab, server):
    dsn = fresh_db(server, "done")
    r = storlab("bench", "db", "--workload", "insert", "--db", "mysql", "--dsn", dsn, "--vus", "2",
                "--rows-per-user", "20", "--commit-every", "5", env=PATH)
    assert r.returncode == 0, r.stderr
    assert "2 VUs: 2 of 2 users done, the first after " in r.stdout, r.stdout
