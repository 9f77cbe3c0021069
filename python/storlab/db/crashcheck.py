"""Crash trials on an emulated volume: a database server (PostgreSQL or
MariaDB, run by storlab) does TPC-C on a mounted `storlab emulate`; the
emulator — or the server — is killed with SIGKILL in the middle of the run;
the server then starts again on the same data (the same backing folder,
remounted) and must recover with every New-Order the client saw committed,
and no mount may be left behind. tests/db/test_emulated_crash.py runs one
trial of each kind, bench/crash_trials.py a hundred per engine.

The client's `bench db --commit-log` holds "w_id d_id o_id" of each
New-Order, written only after its COMMIT was acknowledged: every line is an
acknowledged commit (lines of commits acknowledged just before the kill may
be missing — a subset, so the check stays sound), and each must be in ORDERS
after recovery.

A trial works in a folder of its own under /var/tmp (a server running as
its own user must be able to enter it): `backing` (a copy of a loaded,
cleanly shut down server), `mnt`, the emulator's log and the commit log."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from storlab.db.managed import ManagedPostgres, _descendants, _wait_dead
from storlab.db.mariadb import ManagedMariadb

ENGINES = ("postgresql", "mariadb")

# One io2 Block Express volume: caps far above what a small machine reaches,
# so a trial spends its seconds on TPC-C, not on waiting, while every I/O is
# still paced (admission, a latency draw) by the emulator.
SCENARIO = """
title = "crash trials on an emulated io2 Block Express"
[configs.io2]
host = "aws/ec2/r5b.24xlarge"
[[configs.io2.pools]]
role = "data"
device = "aws/ebs/io2-block-express"
size_gib = 500
iops = 64000
"""

STORLAB = [sys.executable, "-m", "storlab.cli"]

# What each server writes to its log when it starts on data it did not shut
# down cleanly (PostgreSQL's xlog.c; MariaDB's InnoDB log0recv.cc).
_RECOVERY = {
    "postgresql": "database system was not properly shut down; automatic recovery in progress",
    "mariadb": "InnoDB: Starting crash recovery",
}

# The orders TPC-C loads are 1..3000 per district; later ones are the run's.
_RUN_ORDERS = "SELECT o_w_id, o_d_id, o_id FROM orders WHERE o_id > 3000"
# Orders of the run that lost their NEW_ORDER row without being delivered.
_UNFINISHED = ("SELECT count(*) FROM orders o LEFT JOIN new_order n ON (n.no_w_id, n.no_d_id, n.no_o_id) = "
               "(o.o_w_id, o.o_d_id, o.o_id) WHERE o.o_id > 3000 AND n.no_o_id IS NULL AND o.o_carrier_id IS NULL")


def mounted(path: Path) -> bool:
    """Whether anything is mounted at `path` (a stale FUSE mount too)."""
    want = str(Path(path).resolve())
    with open("/proc/self/mountinfo") as f:
        return any(line.split(" ")[4] == want for line in f)


def mounts_under(d: Path) -> list[str]:
    """Mount points at or under `d`."""
    top = str(Path(d).resolve())
    with open("/proc/self/mountinfo") as f:
        points = [line.split(" ")[4] for line in f]
    return [p for p in points if p == top or p.startswith(top + "/")]


def workdir(prefix: str = "storlab-crash-") -> Path:
    """A new folder under /var/tmp that a server running as its own user may
    enter (PostgreSQL refuses to run as root), with the scenario in it."""
    d = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    d.chmod(0o755)
    (d / "emu.toml").write_text(SCENARIO)
    return d


def clear(d: Path) -> None:
    """Unmounts whatever is left under `d` (a dead emulator's mount too),
    then removes `d`."""
    for m in mounts_under(d):
        subprocess.run([*STORLAB, "emulate", "--unmount", m], capture_output=True)
    shutil.rmtree(d, ignore_errors=True)


class Emulator:
    """`storlab emulate` of the trial's scenario in its own process: `d/backing`
    mounted on `d/mnt`, its output appended to `d/emulate.log`."""

    def __init__(self, d: Path, *extra: str):
        self.backing, self.mount, self.ready = d / "backing", d / "mnt", d / "ready.json"
        self.log_path = d / "emulate.log"
        self.mount.mkdir(exist_ok=True)
        self.ready.unlink(missing_ok=True)
        self.log = open(self.log_path, "a")
        self.p = subprocess.Popen([*STORLAB, "emulate", str(d / "emu.toml"), "--config", "io2", "--backing", str(self.backing),
                                   "--mount", str(self.mount), "--ready-file", str(self.ready), *extra],
                                  stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 60
        while not self.ready.exists():
            if self.p.poll() is not None:
                self.log.close()
                raise RuntimeError(f"the emulator exited {self.p.returncode}: {self.log_path.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("the emulator did not mount within 60 s")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: the mount stays behind, stale, as after a crash."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
            self.p.wait(timeout=30)
        self.log.close()

    def stop(self) -> None:
        """Ctrl-C: unmounts and exits."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()


class Server:
    """A server of `engine` storlab runs in `dir` (kept on stop), with what a
    crash trial asks of it: the `bench db` options that reach it, its
    processes, SQL, and whether its last start was a crash recovery."""

    def __init__(self, engine: str, dir: Path):
        if engine not in ENGINES:
            raise ValueError(f"engine {engine!r} — one of {', '.join(ENGINES)}")
        self.engine = engine
        self.m: ManagedPostgres | ManagedMariadb = (ManagedPostgres(dir, keep=True) if engine == "postgresql"
                                                    else ManagedMariadb(dir, keep=True))
        self._log_from = 0

    def start(self) -> None:
        log = self.m.log_file
        self._log_from = log.stat().st_size if log.exists() else 0
        self.m.start()

    def stop(self) -> None:
        self.m.stop()

    def bench_db(self) -> list[str]:
        if isinstance(self.m, ManagedPostgres):
            return ["--db", self.m.conninfo]
        assert isinstance(self.m, ManagedMariadb)
        return ["--db", "mysql", "--dsn", self.m.dsn]

    def pids(self) -> list[int]:
        """Every process of the server (PostgreSQL's postmaster and its
        children; mariadbd), found in /proc, so this works on a dead mount."""
        pid = self.m.server_pid
        if pid is None:
            return []
        return [pid, *_descendants(pid)] if isinstance(self.m, ManagedPostgres) else [pid]

    def rows(self, sql: str) -> list[list[str]]:
        if isinstance(self.m, ManagedPostgres):
            return [line.split("|") for line in self.m.sql(sql).splitlines()]
        assert isinstance(self.m, ManagedMariadb)
        return [line.split("\t") for line in self.m.sql(sql, "storlab").splitlines()]

    def recovered_from_crash(self) -> bool:
        """The log since the last start says it recovered from a crash."""
        with open(self.m.log_file, "rb") as f:
            f.seek(self._log_from)
            return _RECOVERY[self.engine] in f.read().decode(errors="replace")


def kill_server(server: Server) -> None:
    """SIGKILL to every process of the server, as a crash of the instance;
    returns once they are gone and reaped (a zombie postmaster would look
    alive to PostgreSQL's lock file check)."""
    pids = server.pids()
    if not pids:
        raise RuntimeError(f"no {server.engine} process to kill")
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if not _wait_dead(pids, 30):
        raise RuntimeError(f"{server.engine} processes {pids} outlived SIGKILL")
    # mariadbd is storlab's child: stop() reaps it (the data is kept).
    server.stop()
    deadline = time.monotonic() + 30
    while any(os.path.exists(f"/proc/{p}") for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)


def load_template(d: Path, engine: str) -> Path:
    """`d/template`: a server of `engine` holding one loaded TPC-C warehouse,
    shut down cleanly; each trial adopts a copy as its backing folder. The
    load runs on the plain disk (the crash, not the load, is under test)."""
    t = d / "template"
    s = Server(engine, t / "db")
    s.start()
    try:
        r = subprocess.run([*STORLAB, "bench", "db", "--workload", "tpcc", *s.bench_db(), "--warehouses", "1", "--vus", "1",
                            "--rampup", "0", "--duration", "1", "--json"], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"loading TPC-C on {engine} failed: {r.stderr[-2000:]}")
    finally:
        s.stop()
    return t


@dataclass
class Bench:
    """How `bench db` ended after the kill."""

    returncode: int
    stdout: str
    stderr: str


def run_until_killed(d: Path, server: Server, kill: Callable[[], None], *, orders: int = 30, seconds: float = 3.0) -> tuple[Path, Bench]:
    """Runs TPC-C with 3 users and a commit log (`d/commits.txt`) on the
    loaded warehouse; once `orders` New-Orders are logged and the first is
    `seconds` old, calls kill(); returns the log and how bench db ended."""
    log = d / "commits.txt"
    bench = subprocess.Popen([*STORLAB, "bench", "db", "--workload", "tpcc", *server.bench_db(), "--warehouses", "1",
                              "--vus", "3", "--rampup", "0", "--duration", "120", "--commit-log", str(log), "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        first = None
        while True:
            if bench.poll() is not None:
                raise RuntimeError(f"bench db ended before the kill: {bench.stderr.read()[-2000:] if bench.stderr else ''}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {orders} acknowledged New-Orders within 180 s")
            n = log.read_text().count("\n") if log.exists() else 0
            if n > 0 and first is None:
                first = time.monotonic()
            if n >= orders and first is not None and time.monotonic() - first >= seconds:
                break
            time.sleep(0.1)
        kill()
        # Every user loses its connection; bench db ends on its own.
        out, err = bench.communicate(timeout=120)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.communicate()
    return log, Bench(bench.returncode, out, err)


@dataclass
class Recovery:
    """What the server held after recovery, against the commit log."""

    recovered: bool
    acknowledged: int
    missing: list[tuple[int, ...]]
    unfinished: int


def check_recovered(server: Server, log: Path) -> Recovery:
    """Starts the kept server again on the same data (crash recovery) and
    looks up every logged key; stops it after."""
    server.start()
    try:
        logged = {tuple(int(x) for x in line.split()) for line in log.read_text().splitlines()}
        stored = {tuple(int(x) for x in row) for row in server.rows(_RUN_ORDERS)}
        unfinished = int(server.rows(_UNFINISHED)[0][0])
        return Recovery(server.recovered_from_crash(), len(logged), sorted(logged - stored), unfinished)
    finally:
        server.stop()


@dataclass
class Trial:
    """One emulator kill: how bench db ended, what recovery found, and the
    mounts left under the trial's folder when it was done."""

    engine: str
    bench: Bench
    recovery: Recovery
    mounts_left: int
    seconds: float


def emulator_kill_trial(template: Path, engine: str, *, seconds: float = 3.0) -> Trial:
    """The emulator under a server running TPC-C gets SIGKILL; what is left
    of the server dies as the instance would; `storlab emulate --unmount`
    clears the dead mount; a new emulator mounts the same backing folder;
    the server recovers; every acknowledged New-Order is looked up."""
    t0 = time.monotonic()
    d = workdir()
    emu: Emulator | None = None
    try:
        subprocess.run(["cp", "-a", str(template), str(d / "backing")], check=True)
        emu = Emulator(d, "--adopt-backing")
        server = Server(engine, d / "mnt" / "db")
        server.start()

        def kill_emulator() -> None:
            assert emu is not None
            emu.kill()
            # The volume is gone under the server: it cannot go on (a failed
            # log write is fatal to both engines); what is left of it dies
            # as the instance would.
            time.sleep(1)
            kill_server(server)

        log, bench = run_until_killed(d, server, kill_emulator, seconds=seconds)
        r = subprocess.run([*STORLAB, "emulate", "--unmount", str(d / "mnt")], capture_output=True, text=True)
        if r.returncode != 0 or mounted(d / "mnt"):
            raise RuntimeError(f"emulate --unmount {d / 'mnt'} failed: {r.stderr.strip()}")
        # The same backing folder, mounted again by a new emulator.
        emu = Emulator(d)
        recovery = check_recovered(server, log)
        emu.stop()
        emu = None
        mounts_left = len(mounts_under(d))
    finally:
        if emu is not None:
            emu.stop()
        clear(d)
    return Trial(engine, bench, recovery, mounts_left, time.monotonic() - t0)


def _processes_naming(d: Path) -> list[int]:
    """Live processes whose command line names a path under `d` (a server's
    data folder, an emulator's mount), from /proc."""
    top = str(Path(d).resolve())
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if top in cmd and state != "Z":
            out.append(int(name))
    return out


@dataclass
class BenchEmulateTrial:
    """One SIGKILL of the emulator `bench db --emulate` started: how bench
    db ended, the acknowledged New-Orders it logged, and what it left
    behind under its --dir (mounts, processes, files)."""

    engine: str
    bench: Bench
    acknowledged: int
    mounts_left: int
    processes_left: int
    files_left: list[str]
    seconds: float


def bench_emulate_kill_trial(engine: str, *, seconds: float = 3.0, orders: int = 30) -> BenchEmulateTrial:
    """`bench db --db managed-ENGINE --emulate` loads one warehouse onto an
    emulated volume it mounts under --dir and runs TPC-C with a commit log;
    once `orders` New-Orders are acknowledged and the first is `seconds`
    old, its emulator gets SIGKILL. bench db must end on its own, name the
    lost volume and leave nothing mounted, running or written under --dir
    (the volume is the run's scratch: bench db removes it after every run,
    so its commits are not looked up — `emulator_kill_trial` does that on a
    kept backing folder)."""
    t0 = time.monotonic()
    d = workdir("storlab-crash-bench-")
    run_dir, log = d / "run", d / "commits.txt"
    db = "managed-postgres" if engine == "postgresql" else "managed-mariadb"
    bench = subprocess.Popen([*STORLAB, "bench", "db", "--workload", "tpcc", "--db", db, "--dir", str(run_dir),
                              "--emulate", f"{d / 'emu.toml'}:io2", "--warehouses", "1", "--vus", "3", "--rampup", "0",
                              "--duration", "300", "--commit-log", str(log), "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600
        first = None
        while True:
            if bench.poll() is not None:
                raise RuntimeError(f"bench db ended before the kill: {bench.stderr.read()[-2000:] if bench.stderr else ''}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {orders} acknowledged New-Orders within 600 s")
            n = log.read_text().count("\n") if log.exists() else 0
            if n > 0 and first is None:
                first = time.monotonic()
            if n >= orders and first is not None and time.monotonic() - first >= seconds:
                break
            time.sleep(0.1)
        emulators = [p for p in _descendants(bench.pid)
                     if b"emulate" in Path(f"/proc/{p}/cmdline").read_bytes() and b"--ready-file" in Path(f"/proc/{p}/cmdline").read_bytes()]
        if not emulators:
            raise RuntimeError("bench db's emulator was not found among its processes")
        for p in emulators:
            os.kill(p, signal.SIGKILL)
        out, err = bench.communicate(timeout=300)
        acknowledged = len(log.read_text().splitlines())
        time.sleep(0.5)
        left = sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob("*")) if run_dir.exists() else []
        return BenchEmulateTrial(engine, Bench(bench.returncode, out, err), acknowledged, len(mounts_under(d)),
                                 len(_processes_naming(run_dir)), left, time.monotonic() - t0)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.communicate()
        for p in _processes_naming(d):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        clear(d)
