"""Crash safety on an emulated volume (storlab.db.crashcheck): a server runs
TPC-C on a mounted emulator; either the server or the emulator is killed
with SIGKILL in the middle of the run; the server is then started again on
the same data (on the same backing folder, remounted) and must recover with
every New-Order the client saw committed. When the emulator dies, `bench
db` must say that the database's volume went away and keep what it had
measured. bench/crash_trials.py runs a hundred emulator kills per engine, and with
--kind bench-emulate kills of the emulator bench db --emulate mounted."""

from __future__ import annotations

import json
import subprocess

import pytest

from storlab.db import crashcheck
from storlab.db.crashcheck import Emulator, Server
from storlab.db.managed import find_pg_bin
from storlab.db.mariadb import find_bins
from storlab.errors import DatabaseError

pytestmark = pytest.mark.needs_fuse


def _template(engine: str):
    try:
        find_pg_bin() if engine == "postgresql" else find_bins()
    except DatabaseError as e:
        pytest.skip(str(e))
    d = crashcheck.workdir()
    try:
        yield crashcheck.load_template(d, engine)
    finally:
        crashcheck.clear(d)


@pytest.fixture(scope="module")
def postgres_loaded():
    """A cluster with one TPC-C warehouse, shut down cleanly."""
    yield from _template("postgresql")


@pytest.fixture(scope="module")
def mariadb_loaded():
    """A MariaDB server with one TPC-C warehouse, shut down cleanly."""
    yield from _template("mariadb")


def _check_emulator_kill(trial: crashcheck.Trial) -> None:
    r = trial.recovery
    assert r.recovered, f"{trial.engine} did not start with a crash recovery"
    # Some orders were logged (else the check below would prove nothing).
    assert r.acknowledged >= 30, r
    assert not r.missing, f"{len(r.missing)} of {r.acknowledged} acknowledged New-Orders lost, e.g. {r.missing[:5]}"
    # And each logged order still has its NEW_ORDER row or was delivered.
    assert r.unfinished == 0, r
    assert trial.mounts_left == 0
    # bench db said why it ended, in one line, and kept what it measured.
    b = trial.bench
    assert b.returncode == 1, b.stderr
    line = b.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line, line
    assert line.startswith("bench db: the database's volume went away: "), line
    assert "Transport endpoint is not connected (its emulator ended?)" in line, line
    assert "/mnt/db/" in line, line
    rec = json.loads(b.stdout)
    assert rec["interrupted"] and rec["warnings"][-1] in line, rec["warnings"]
    run = rec["runs"][0]
    assert run["server_lost"] and run["lost_connection"], run
    # The 3 s and 30 orders waited for before the kill are in the record.
    assert run["duration_s"] >= 3.0 and f"kept the {run['duration_s']:.1f} s measured before it" in line, (run["duration_s"], line)
    assert run["txn"]["new_order"]["commits"] >= 30, run["txn"]["new_order"]


@pytest.mark.needs_postgres
def test_postgres_killed_mid_tpcc_recovers_every_committed_new_order(postgres_loaded):
    d = crashcheck.workdir()
    emu = None
    try:
        subprocess.run(["cp", "-a", str(postgres_loaded), str(d / "backing")], check=True)
        emu = Emulator(d, "--adopt-backing")
        server = Server("postgresql", d / "mnt" / "db")
        server.start()
        log, bench = crashcheck.run_until_killed(d, server, lambda: crashcheck.kill_server(server))
        # The server died, its volume did not: bench db says so.
        assert bench.returncode == 1, bench.stderr
        assert bench.stderr.startswith("bench db: the database server went away during the run ("), bench.stderr
        assert "volume" not in bench.stderr, bench.stderr
        r = crashcheck.check_recovered(server, log)
        emu.stop()
        assert r.recovered and r.acknowledged >= 30, r
        assert not r.missing, f"{len(r.missing)} of {r.acknowledged} acknowledged New-Orders lost, e.g. {r.missing[:5]}"
        assert r.unfinished == 0, r
        assert not crashcheck.mounts_under(d)
    finally:
        if emu is not None:
            emu.stop()
        crashcheck.clear(d)


@pytest.mark.needs_postgres
def test_postgres_emulator_killed_mid_tpcc_then_remounted_loses_no_committed_new_order(postgres_loaded):
    _check_emulator_kill(crashcheck.emulator_kill_trial(postgres_loaded, "postgresql"))


@pytest.mark.needs_mariadb
def test_mariadb_emulator_killed_mid_tpcc_then_remounted_loses_no_committed_new_order(mariadb_loaded):
    _check_emulator_kill(crashcheck.emulator_kill_trial(mariadb_loaded, "mariadb"))


@pytest.mark.needs_mariadb
def test_bench_db_emulate_ends_cleanly_when_its_emulator_is_killed():
    # bench db --emulate mounted the volume itself: once its emulator is
    # gone it must end on its own (exit 1, naming the volume), print what it
    # measured and leave nothing mounted, running or written under --dir.
    try:
        find_bins()
    except DatabaseError as e:
        pytest.skip(str(e))
    t = crashcheck.bench_emulate_kill_trial("mariadb", seconds=1.0)
    assert t.acknowledged >= 30
    assert t.bench.returncode == 1 and "the database's volume went away" in t.bench.stderr, t.bench.stderr[-1000:]
    assert json.loads(t.bench.stdout)["results"], t.bench.stdout[-500:]
    assert (t.mounts_left, t.processes_left, t.files_left) == (0, 0, []), t
