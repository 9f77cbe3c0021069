"""Crash safety on an emulated volume: PostgreSQL runs TPC-C on a mounted
emulator; either the server or the emulator is killed with SIGKILL in the
middle of the run; the server is then started again on the same data (on
the same backing folder, remounted) and must recover with every New-Order
the client saw committed.

The client's `--commit-log` holds "w_id d_id o_id" of each New-Order,
written only after its COMMIT was acknowledged: every line is an
acknowledged commit (lines of commits acknowledged just before the kill may
be missing — a subset, so the check stays sound), and each must be in
ORDERS after recovery."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from storlab.db import managed
from storlab.db.managed import ManagedPostgres, find_pg_bin
from storlab.errors import DatabaseError

pytestmark = [pytest.mark.needs_fuse, pytest.mark.needs_postgres]

# One io2 Block Express volume: caps far above what this machine reaches,
# so loading a warehouse takes seconds, while every I/O is still paced
# (admission, a latency draw) by the emulator.
SCENARIO = """
title = "PostgreSQL crash tests on an emulated io2 Block Express"
[configs.io2]
host = "aws/ec2/r5b.24xlarge"
[[configs.io2.pools]]
role = "data"
device = "aws/ebs/io2-block-express"
size_gib = 500
iops = 64000
"""


def _mounted(path: Path) -> bool:
    want = str(path.resolve())
    with open("/proc/self/mountinfo") as f:
        return any(line.split(" ")[4] == want for line in f)


class Emulator:
    def __init__(self, d: Path, scenario: Path, *extra: str):
        self.backing, self.mount, self.ready = d / "backing", d / "mnt", d / "ready.json"
        self.mount.mkdir(exist_ok=True)
        self.ready.unlink(missing_ok=True)
        self.log = open(d / "emulate.log", "a")
        self.p = subprocess.Popen([sys.executable, "-m", "storlab.cli", "emulate", str(scenario), "--config", "io2",
                                   "--backing", str(self.backing), "--mount", str(self.mount), "--ready-file", str(self.ready), *extra],
                                  stdout=self.log, stderr=self.log)
        deadline = time.time() + 60
        while not self.ready.exists():
            assert self.p.poll() is None, (d / "emulate.log").read_text()
            assert time.time() < deadline, "the emulator did not mount within 60 s"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            self.p.wait(timeout=60)
        self.log.close()


def _tmp() -> Path:
    # PostgreSQL runs as its own user when the tests run as root: a folder it may enter.
    d = Path(tempfile.mkdtemp(prefix="storlab-crash-", dir="/var/tmp"))
    d.chmod(0o755)
    (d / "emu.toml").write_text(SCENARIO)
    return d


def _clear(d: Path) -> None:
    with open("/proc/self/mountinfo") as f:
        if str(d) in f.read():
            subprocess.run([sys.executable, "-m", "storlab.cli", "emulate", "--unmount", str(d / "mnt")], capture_output=True)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def loaded():
    """A folder holding a cluster with one TPC-C warehouse, shut down
    cleanly; each test adopts a copy as the emulator's backing folder. The
    load runs on the plain disk (the crash, not the load, is under test)."""
    try:
        find_pg_bin()
    except DatabaseError as e:
        pytest.skip(str(e))
    d = _tmp()
    try:
        with ManagedPostgres(d / "template" / "db", keep=True) as pg:
            r = subprocess.run([sys.executable, "-m", "storlab.cli", "bench", "db", "--workload", "tpcc", "--db", pg.conninfo,
                                "--warehouses", "1", "--vus", "1", "--rampup", "0", "--duration", "1", "--json"],
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr
        yield d / "template"
    finally:
        _clear(d)


@pytest.fixture
def where(loaded):
    d = _tmp()
    subprocess.run(["cp", "-a", str(loaded), str(d / "backing")], check=True)
    yield d
    _clear(d)


def _kill_server(pg: ManagedPostgres, postmaster: int) -> None:
    """SIGKILL to the postmaster and every process it started (found in
    /proc, so this works on a dead mount too), as a crash of the server."""
    pids = [postmaster, *managed._descendants(postmaster)]
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert managed._wait_dead(pids, 30), f"PostgreSQL processes {pids} outlived SIGKILL"
    # PostgreSQL's lock file check takes a zombie for a live postmaster:
    # wait until init has reaped it.
    deadline = time.time() + 30
    while os.path.exists(f"/proc/{postmaster}") and time.time() < deadline:
        time.sleep(0.05)


def _run_until_killed(d: Path, pg: ManagedPostgres, kill) -> Path:
    """Runs TPC-C with 3 users and a commit log on the loaded warehouse;
    once 30 New-Orders are logged and the run is at least 3 s old, calls
    kill()."""
    log = d / "commits.txt"
    bench = subprocess.Popen([sys.executable, "-m", "storlab.cli", "bench", "db", "--workload", "tpcc", "--db", pg.conninfo,
                              "--warehouses", "1", "--vus", "3", "--rampup", "0", "--duration", "120",
                              "--commit-log", str(log), "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 180
        started = None
        while True:
            assert bench.poll() is None, f"bench db ended before the kill: {bench.stderr.read()[-2000:]}"
            assert time.time() < deadline, "no 30 committed New-Orders within 180 s"
            n = log.read_text().count("\n") if log.exists() else 0
            if n > 0 and started is None:
                started = time.time()
            if n >= 30 and started is not None and time.time() - started >= 3:
                break
            time.sleep(0.1)
        kill()
        # Every user loses its connection; bench db ends on its own.
        bench.communicate(timeout=60)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.communicate()
    return log


def _check_recovered(d: Path, log: Path) -> None:
    """Starts the kept cluster again (crash recovery) and looks up every logged key."""
    pg = ManagedPostgres(d / "mnt" / "db", keep=False)
    pg.start()  # pg_ctl start on the same data directory: WAL replay
    try:
        assert "database system was not properly shut down; automatic recovery in progress" in pg.log_file.read_text()
        logged = {tuple(int(x) for x in line.split()) for line in log.read_text().splitlines()}
        # Some orders were logged (else the check below would prove nothing).
        assert len(logged) >= 30
        stored = {tuple(int(x) for x in line.split("|"))
                  for line in pg.sql("SELECT o_w_id, o_d_id, o_id FROM orders WHERE o_id > 3000").splitlines()}
        missing = logged - stored
        assert not missing, f"{len(missing)} of {len(logged)} acknowledged New-Orders lost, e.g. {sorted(missing)[:5]}"
        # And each logged order still has its NEW_ORDER row or was delivered.
        assert pg.sql("SELECT count(*) FROM orders o LEFT JOIN new_order n ON (n.no_w_id, n.no_d_id, n.no_o_id) = "
                      "(o.o_w_id, o.o_d_id, o.o_id) WHERE o.o_id > 3000 AND n.no_o_id IS NULL AND o.o_carrier_id IS NULL").strip() == "0"
    finally:
        pg.stop()


def test_postgres_killed_mid_tpcc_recovers_every_committed_new_order(where):
    d = where
    emu = Emulator(d, d / "emu.toml", "--adopt-backing")
    try:
        pg = ManagedPostgres(d / "mnt" / "db", keep=True)
        pg.start()
        postmaster = pg.server_pid
        assert postmaster is not None
        log = _run_until_killed(d, pg, lambda: _kill_server(pg, postmaster))
        _check_recovered(d, log)
    finally:
        emu.stop()
    assert not _mounted(d / "mnt")


def test_emulator_killed_mid_tpcc_then_remounted_loses_no_committed_new_order(where):
    d = where
    emu = Emulator(d, d / "emu.toml", "--adopt-backing")
    try:
        pg = ManagedPostgres(d / "mnt" / "db", keep=True)
        pg.start()
        postmaster = pg.server_pid
        assert postmaster is not None

        def kill_emulator() -> None:
            emu.p.send_signal(signal.SIGKILL)
            emu.p.wait(timeout=30)
            # The volume is gone under the server: it cannot go on (a
            # failed WAL write is a PANIC); what is left of it dies as the
            # instance would.
            time.sleep(1)
            _kill_server(pg, postmaster)

        log = _run_until_killed(d, pg, kill_emulator)
        emu.stop()
        r = subprocess.run([sys.executable, "-m", "storlab.cli", "emulate", "--unmount", str(d / "mnt")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert not _mounted(d / "mnt")
        # The same backing folder, mounted again by a new emulator.
        emu = Emulator(d, d / "emu.toml")
        _check_recovered(d, log)
    finally:
        emu.stop()
    assert not _mounted(d / "mnt")
