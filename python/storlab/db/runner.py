"""`storlab bench db`: the orchestration around the Rust driver
(crates/storlab-db) — the database's lifecycle (an embedded SQLite file, a
server given by DSN, or a PostgreSQL cluster or MariaDB server storlab runs
itself), the load,
virtual-user sweeps with repeats, the tipping point, and the run record.

One timed run is HammerDB's: rampup → snapshot → duration → snapshot → stop.
Sweeps are HammerDB's autopilot: one timed run per virtual-user count."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from storlab import _native, cpuprobe, cpuref
from storlab.db import myprofile, profile as dbprofile
from storlab.db.managed import ManagedPostgres
from storlab.db.mariadb import ManagedMariadb
from storlab.errors import DatabaseError, DatabaseGone, ScenarioError, StorlabError
from storlab.host import finish_record, host_info
from storlab.units import parse_duration

SQLITE_FILE = "storlab.sqlite"
_SQLITE_SIDE = ("-wal", "-shm", "-journal")


def parse_vus(text: str, max_vus: int) -> _native.DbSweep:
    """`--vus 8`, `--vus 256,362,512` or `--vus auto` (√2 steps up to
    --max-vus, stopping early past the tipping point): the sweep, the same
    one the simulator runs."""
    t = str(text).strip().lower()
    if t == "auto":
        return _native.DbSweep.auto(max_vus)
    try:
        vus = [int(x) for x in t.split(",")]
    except ValueError:
        raise StorlabError(f"--vus '{text}' — give a count (8), a list (256,362,512) or auto") from None
    if not vus or any(v < 1 for v in vus):
        raise StorlabError(f"--vus '{text}' — every count must be at least 1")
    if any(v > _VUS_MAX for v in vus):
        raise StorlabError(f"--vus '{text}' — a count is at most {_VUS_MAX:,} — nearest valid value {_VUS_MAX}")
    return _native.DbSweep.listed(vus)


# The most virtual users a count may ask for (a 32-bit count, as every
# count storlab takes).
_VUS_MAX = 4_294_967_295


# A run's figures that are the profile recorder's, not the record's.
_RECORDER_ONLY = ("host_cpu", "client_wait", "program_times")


def _plain(run: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in run.items() if k not in _RECORDER_ONLY}


def volume_gone(data_dir: str | os.PathLike | None) -> str | None:
    """Why a database's data directory is no longer there — the file system
    under it went away (a FUSE mount whose emulator died answers "Transport
    endpoint is not connected"), or the folder itself is gone — or None
    while it is there or cannot be told. The folder is listed, not stat'ed:
    a stat may be answered from the kernel's cache, a listing asks the file
    system. A folder closed to this user is judged by its parent."""
    if not data_dir:
        return None
    path = Path(data_dir)
    for p in [path, *path.parents]:
        try:
            os.listdir(p)
            return None
        except OSError as e:
            if e.errno == errno.ENOTCONN:
                return f"{path}: {e.strerror} (its emulator ended?)"
            if e.errno in (errno.ENOENT, errno.ENOTDIR):
                return f"{path}: the folder is gone"
            if e.errno in (errno.EIO, errno.ESTALE, errno.ENODEV, errno.ENXIO):
                return f"{path}: {e.strerror}"
            if e.errno not in (errno.EACCES, errno.EPERM):
                return None
    return None


def _check_writable(folder: Path, dir: str) -> None:
    """Creates and removes a file in `folder` (what SQLite will do), so a
    folder without permission — or on a read-only file system, which stops
    root too — is a one-line error before anything runs."""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".storlab-check-")
    except OSError as e:
        raise StorlabError(f"--dir {dir}: cannot create files in {folder} ({e.strerror}) — give a folder you can write to") from None
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)


def parse_settings(settings: list[str] | dict[str, str] | None, db: str) -> dict[str, str]:
    """`--setting NAME=VALUE` (repeatable) as a dict, for the server
    storlab runs (`--db managed-postgres` or `managed-mariadb`), which checks
    the names."""
    if not settings:
        return {}
    if isinstance(settings, dict):
        pairs = list(settings.items())
    else:
        pairs = []
        for s in settings:
            name, eq, value = s.partition("=")
            if not eq or not name.strip() or not value.strip():
                raise StorlabError(f"--setting '{s}' — give NAME=VALUE, e.g. shared_buffers=4GB")
            pairs.append((name.strip(), value.strip()))
    if db not in ("managed-postgres", "managed-mariadb"):
        raise StorlabError(f"--setting {pairs[0][0]}={pairs[0][1]}: server settings are for the server storlab runs "
                           "(--db managed-postgres or managed-mariadb) — set them on your own server, or leave --setting out")
    return dict(pairs)


class _Database:
    """Where the workload runs, and what to clean up afterwards."""

    def __init__(self, db: str, dir: str | None, keep: bool, max_connections: int,
                 settings: dict[str, str] | None = None, wal_dir: str | os.PathLike | None = None,
                 dsn: str | None = None):
        self.keep = keep
        self.managed = None
        # Set when the volume under the data directory went away.
        self.gone: str | None = None
        self.sqlite_path: Path | None = None
        self._created_dir: Path | None = None
        self._existed: set[Path] = set()
        if db == "sqlite":
            if not dir:
                raise StorlabError("--db sqlite needs --dir DIR (the folder for its database file)")
            d = Path(dir)
            if d.exists() and not d.is_dir():
                raise StorlabError(f"--dir {dir} is a file — give a folder")
            if not d.exists():
                if not d.parent.is_dir():
                    raise StorlabError(f"--dir {dir}: the folder {d.parent} does not exist — create it first")
                self._created_dir = d
            _check_writable(d if d.exists() else d.parent, dir)
            self.sqlite_path = d / SQLITE_FILE
            self.spec = {"sqlite": str(self.sqlite_path)}
            self.display = f"sqlite {self.sqlite_path}"
        elif db == "managed-postgres":
            if not dir:
                raise StorlabError("--db managed-postgres needs --dir DIR (the folder for the cluster's data directory)")
            self.managed = ManagedPostgres(dir, keep=keep, max_connections=max_connections, settings=settings, wal_dir=wal_dir)
            self.spec = {}
            self.display = f"managed-postgres {Path(dir).resolve()}"
        elif db == "managed-mariadb":
            if not dir:
                raise StorlabError("--db managed-mariadb needs --dir DIR (the folder for the server's data directory)")
            self.managed = ManagedMariadb(dir, keep=keep, max_connections=max_connections, settings=settings)
            self.spec = {}
            self.display = f"managed-mariadb {Path(dir).resolve()}"
        elif db == "mysql" or db.startswith(("mysql://", "mariadb://")):
            url = dsn if db == "mysql" else db
            if not url:
                raise StorlabError("--db mysql needs --dsn mysql://USER@HOST:PORT/DB (password from MYSQL_PWD or ~/.my.cnf)")
            self.spec = {"mysql": url}
            self.display = "mysql"
        elif db.startswith(("postgres://", "postgresql://")) or "=" in db:
            self.spec = {"postgres": db}
            self.display = "postgres"
        else:
            raise StorlabError(f"--db '{db}' — use sqlite, managed-postgres, managed-mariadb, mysql (with --dsn), "
                               "or a PostgreSQL URL such as postgres://USER@HOST/DB")
        if dsn is not None and db != "mysql":
            raise StorlabError("--dsn is for --db mysql — give --db mysql --dsn mysql://USER@HOST:PORT/DB, or leave --dsn out")
        if wal_dir is not None and self.managed is None:
            raise StorlabError("a WAL folder of its own needs --db managed-postgres (initdb --waldir)")

    def __enter__(self) -> _Database:
        if self.sqlite_path is not None:
            if self._created_dir is not None:
                self._created_dir.mkdir()
            for suffix in ("", *_SQLITE_SIDE):
                p = Path(str(self.sqlite_path) + suffix)
                if p.exists():
                    self._existed.add(p)
        if self.managed is not None:
            self.managed.start()
            if hasattr(self.managed, "dsn"):
                self.spec = {"mysql": self.managed.dsn}
            else:
                self.spec = {"postgres": self.managed.conninfo}
        return self

    def __exit__(self, *exc: object) -> None:
        if self.managed is not None:
            if self.gone is None:
                self.managed.stop()
            else:
                # The server's files went with their volume: stop what may
                # still run; nothing there can be removed.
                with contextlib.suppress(DatabaseError, OSError):
                    self.managed.keep = True
                    self.managed.stop()
        if self.sqlite_path is not None and not self.keep:
            for suffix in ("", *_SQLITE_SIDE):
                Path(str(self.sqlite_path) + suffix).unlink(missing_ok=True)
            if self._created_dir is not None:
                try:
                    self._created_dir.rmdir()
                except OSError:
                    pass


def _workload_spec(workload: str, warehouses: int, all_warehouses: bool, key_and_think: bool,
                   rows: int, commit_every: int, scale: int | None) -> dict[str, Any]:
    if workload == "tpcc":
        if warehouses < 1:
            raise StorlabError(f"--warehouses {warehouses} — nearest valid value 1")
        return {"kind": "tpcc", "warehouses": warehouses, "all_warehouses": all_warehouses, "key_and_think": key_and_think}
    if workload == "insert":
        if rows < 1 or commit_every < 1:
            raise StorlabError("--rows and --commit-every must be at least 1")
        return {"kind": "insert", "rows": rows, "commit_every": commit_every}
    p = Path(workload)
    if p.suffix != ".toml":
        raise StorlabError(f"--workload '{workload}' — use tpcc, insert, or a workload file FILE.toml (docs/db.md)")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{p}: cannot read the workload file ({e.__class__.__name__}: {e})") from e
    spec: dict[str, Any] = {"kind": "custom", "file": str(p), "text": text}
    if scale is not None:
        if scale < 1:
            raise StorlabError(f"--scale {scale} — nearest valid value 1")
        spec["scale"] = scale
    return spec


def bench_db(
    workload: str = "tpcc",
    db: str = "sqlite",
    dir: str | os.PathLike | None = None,
    *,
    warehouses: int = 1,
    vus: str = "1",
    max_vus: int = 1024,
    rampup: str | None = None,
    duration: str | None = None,
    repeat: int = 1,
    all_warehouses: bool = False,
    key_and_think: bool = False,
    rows: int = 10_000,
    commit_every: int = 100,
    scale: int | None = None,
    keep: bool = False,
    check: bool = False,
    seed: int = 1,
    threads: int = 0,
    progress: Callable[[dict[str, Any]], None] | None = None,
    profile_out: str | os.PathLike | None = None,
    commit_log: str | os.PathLike | None = None,
    wal_dir: str | os.PathLike | None = None,
    settings: list[str] | dict[str, str] | None = None,
    dsn: str | None = None,
) -> dict[str, Any]:
    """Runs a database workload and returns the run record (`"engine":
    "measure"`): one result per virtual-user count, each the mean of
    `repeat` timed runs, with NOPM, TPM, per-type counts and latencies, the
    client's CPU per transaction and the I/O profile; the raw runs under
    `runs`. Ctrl-C ends the current window and keeps what was measured."""

    if repeat < 1:
        raise StorlabError(f"--repeat {repeat} — nearest valid value 1")
    if threads < 0:
        raise StorlabError(f"--threads {threads} — give 0 (one per core) or more")
    if max_vus < 1:
        raise StorlabError(f"--max-vus {max_vus} — nearest valid value 1")
    wspec = _workload_spec(workload, warehouses, all_warehouses, key_and_think, rows, commit_every, scale)
    if commit_log is not None:
        if wspec["kind"] != "tpcc" or db == "sqlite":
            # SQLite's New-Order does not report its order id.
            raise StorlabError(f"--commit-log {commit_log}: TPC-C on PostgreSQL, MySQL or MariaDB only (--workload tpcc, "
                               "not --db sqlite) — leave it out")
        try:
            open(commit_log, "w").close()  # this run's keys only
        except OSError as e:
            raise StorlabError(f"--commit-log {commit_log}: cannot write it ({e.strerror}) — give a file in a folder you can write to") from None
    server_settings = parse_settings(settings, db)
    sweep = parse_vus(vus, max_vus)
    steps_vus, auto = sweep.steps, sweep.is_auto
    is_insert = wspec["kind"] == "insert"
    dur_s = parse_duration(duration, "--duration", positive=False) if duration is not None else (0.0 if is_insert else 300.0)
    if dur_s <= 0 and not is_insert:
        raise StorlabError(f"--duration '{duration}' — give a positive duration such as 30 or 5m")
    ramp_s = parse_duration(rampup, "--rampup", positive=False) if rampup is not None else (0.0 if is_insert else min(120.0, dur_s / 5))
    metric = "nopm" if wspec["kind"] == "tpcc" else ("rows_per_min" if is_insert else "tpm_client")
    dbdir = str(dir) if dir is not None else None
    if db == "sqlite" and dbdir is None:
        raise StorlabError("--db sqlite needs --dir DIR (the folder for its database file)")
    recording = None
    if profile_out is not None:
        recording = dbprofile.check_out_path(profile_out)
        if db not in ("managed-postgres", "managed-mariadb"):
            raise StorlabError("--profile-out needs --db managed-postgres or managed-mariadb — the recorder restarts "
                               "the server at several cache sizes and reads its statistics")
        if db == "managed-mariadb" and wspec["kind"] not in ("tpcc", "insert"):
            raise StorlabError("--profile-out on managed-mariadb records TPC-C and the insert storm — use --workload "
                               "tpcc or --workload insert")
        steps_vus, auto = dbprofile.record_sweep_vus(steps_vus), False
        # The plan and its length first: a recording runs for minutes.
        print(dbprofile.plan(recording, steps_vus, repeat, ramp_s, dur_s, engine=db, kind=wspec["kind"]), file=sys.stderr)
    # The recorder's settings, then the user's (the recorder still sizes
    # the cache for its sweep and its miss-ratio runs).
    rec_settings = (myprofile.SETTINGS if db == "managed-mariadb" else dbprofile.SETTINGS) if recording is not None else {}
    merged = {**rec_settings, **server_settings}
    database = _Database(db, dbdir, keep, max(steps_vus) + 10, settings=merged or None, wal_dir=wal_dir, dsn=dsn)

    def report(**kw: Any) -> None:
        if progress is not None:
            progress(kw)

    runs: list[dict[str, Any]] = []
    interrupted = False
    # Why the database went away mid-run, when it did.
    gone: str | None = None
    profile_info: dict[str, Any] | None = None
    load = '{"loaded": false, "load_s": 0.0}'
    job = wspec["kind"] if wspec["kind"] != "custom" else wspec["file"]
    if wspec["kind"] == "tpcc":
        wl = _native.DbWorkload.tpcc(warehouses=warehouses, all_warehouses=all_warehouses, key_and_think=key_and_think,
                                     commit_log=os.path.abspath(commit_log) if commit_log is not None else None)
    elif is_insert:
        wl = _native.DbWorkload.insert(rows_per_vu=rows, commit_every=commit_every)
    else:
        wl = _native.DbWorkload.file(wspec["file"], wspec["text"], scale=wspec.get("scale"))
        headline = wl.headline()
        if headline is not None:
            # The file's own headline (`[metric]`, e.g. tpsE) decides the
            # sweep and its tipping point.
            metric = "headline"
            wspec["metric"] = {"name": headline[0], "transaction": headline[1], "per": "second" if headline[2] == 1 else "minute"}

    def record() -> dict[str, Any]:
        config = runs[0]["target"] if runs and database.display in ("postgres", "mysql") else database.display
        return json.loads(_native.db_record_json(config, job, metric, load, json.dumps([_plain(r) for r in runs]), seed=seed,
                                                 interrupted=interrupted))

    with database:
        if "sqlite" in database.spec:
            target = _native.DbTarget.sqlite(database.spec["sqlite"])
        elif "mysql" in database.spec:
            target = _native.DbTarget.mysql(database.spec["mysql"])
        else:
            target = _native.DbTarget.postgres(database.spec["postgres"])
        try:
            load = _native.db_prepare_json(target, wl, seed=seed, progress=lambda ph, done, total: report(
                phase="load", done=done, total=total))
        except KeyboardInterrupt:
            # Ctrl-C, SIGTERM or SIGHUP: the signal's exit code (130, 143,
            # 129), not a user error; what was loaded stays for --keep.
            print("interrupted while loading — nothing was measured", file=sys.stderr)
            raise

        def run_one(v: int, k: int, ramp: float, dur: float, chk: bool) -> dict[str, Any]:
            h0 = dbprofile.host_cpu_now() if recording is not None else None
            # A recording samples where the users wait for their client
            # (PostgreSQL), or the server's time in each procedure (MariaDB).
            waits: Any = None
            if recording is not None:
                waits = myprofile.ProgramTimes(database.managed) if db == "managed-mariadb" else dbprofile.ClientWaits(database.managed)
            with waits if waits is not None else contextlib.nullcontext():
                run = json.loads(_native.db_run_json(
                    target, wl, vus=v, rampup_s=ramp, duration_s=dur, seed=seed + 7919 * k + v, threads=threads,
                    check=chk, progress=lambda ph, done, total, v=v, k=k: report(
                        phase=("rampup", "rampup", "measure", "stop")[min(ph, 3)], done=done, vus=v, repeat=k + 1,
                        repeats=repeat, rampup_s=ramp, duration_s=dur)))
            if h0 is not None:
                run["host_cpu"] = dbprofile.host_cpu_since(h0)
            if waits is not None and (cw := waits.result(v)) is not None:
                run[getattr(waits, "key", "client_wait")] = cw
            return run

        # A recording times storlab's CPU reference just before its sweep,
        # with the server idle: the machine's speed at the hour of the
        # recording, beside the CPU per transaction it recorded.
        # The per-core speed probe (stress-ng, under 10 s) goes into the
        # profile's machine: the figure a catalog host's is divided by.
        cpu_ref: dict[str, Any] = {}
        cpu_speed: dict[str, Any] = {}
        if recording is not None:
            if db == "managed-mariadb":
                myprofile.before_sweep(database.managed, grows=is_insert)
            else:
                dbprofile.before_sweep(database.managed)
            cpu_ref = cpuref.measure()
            cpu_speed = cpuprobe.measure()
        # A list of counts runs in rounds (each count once, then again): a
        # slow spell of a noisy machine, or the tables the runs grow, then
        # fall on every count alike rather than on all of one count's
        # repeats. An automatic sweep goes count by count, since whether it
        # goes on depends on each count's result.
        if auto:
            order = [(v, k) for v in steps_vus for k in range(repeat)]
        else:
            order = [(v, k) for k in range(repeat) for v in steps_vus]
        # Where a server on this machine keeps its data: storlab's own, or
        # what the server said (PostgreSQL's data_directory, @@datadir).
        data_dir = getattr(database.managed, "data_dir", None)
        for i, (v, k) in enumerate(order):
            try:
                run = run_one(v, k, ramp_s, dur_s, check and i == len(order) - 1)
            except DatabaseError:
                # A lost connection whose cause is a vanished volume is
                # said as such; any other error stays what it was.
                if (why := volume_gone(data_dir)) is None:
                    raise
                gone = database.gone = f"the database's volume went away: {why}"
                interrupted = True
                break
            run["repeat"] = k + 1
            runs.append(run)
            data_dir = data_dir or (run.get("server") or {}).get("data_dir")
            if run.get("server_lost"):
                why = volume_gone(data_dir)
                if why is not None:
                    gone = database.gone = f"the database's volume went away: {why}"
                else:
                    gone = f"the database server went away during the run ({run['server_lost']})"
                run["interrupted"] = interrupted = True
                break
            if run.get("interrupted"):
                interrupted = True
                break
            # An automatic sweep goes count by count: this count's repeats
            # are the last runs.
            if auto and k == repeat - 1 and sweep.record_step(v, metric, json.dumps([_plain(r) for r in runs[-repeat:]])):
                break
        if recording is not None and runs and not interrupted and db == "managed-mariadb":
            profile_info = myprofile.record(
                recording, database.managed, runs, wspec, run_one=lambda v, r, d: run_one(v, 0, r, d, False),
                rampup_s=ramp_s, duration_s=dur_s, warehouses=warehouses, commit_every=commit_every,
                disk=host_info(dbdir) if dbdir else {}, cpu_reference=cpu_ref,
                cpu_speed=cpu_speed)
        elif recording is not None and runs and not interrupted:
            profile_info = dbprofile.record(
                recording, database.managed, runs, wspec, run_one=lambda v, r, d: run_one(v, 0, r, d, False),
                rampup_s=ramp_s, duration_s=dur_s, warehouses=warehouses, commit_every=commit_every,
                disk=host_info(dbdir) if dbdir else {}, cpu_reference=cpu_ref,
                cpu_speed=cpu_speed)

    rec = record()
    out = finish_record(rec, host_info(dbdir) if dbdir else host_info(), {
        "db": database.display if database.display not in ("postgres", "mysql") else (runs[0]["target"] if runs else database.display),
        "dir": str(Path(dbdir).resolve()) if dbdir else None,
        "workload": {k: v for k, v in wspec.items() if k != "text"},
        "vus": steps_vus, "rampup_s": ramp_s, "duration_s": dur_s, "repeat": repeat, "keep": keep,
    })
    if profile_info:
        out["profile"] = profile_info
        # A suspect profile, written all the same: each reason with its fix.
        out["warnings"] = [*out.get("warnings", []), *(
            f"profile {profile_info['path']} is suspect (simulate will refuse it): {s['field']}: {s['reason']} — {s['fix']}"
            for s in profile_info.get("suspect") or [])]
    if gone is not None:
        measured = sum(r.get("duration_s") or 0.0 for r in runs)
        kept = f"kept the {measured:.1f} s measured before it" if runs else "nothing was measured before it"
        out["warnings"] = [*out.get("warnings", []), f"{gone} — {kept}"]
        raise DatabaseGone(f"{gone} — {kept}", out)
    return out
