"""`storlab bench disk`: real I/O on this machine with the same job
definitions as the simulator — CrystalDiskMark presets or fio job files."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress
from rich.table import Table
from rich.text import Text

from storlab import api, emulated
from storlab.api import bench_db
from storlab.cli.out import COUNT_MAX, console, csv_text, emit, latency, one_of
from storlab.cli.report import check_output, write_outputs_keeping, write_report_of
from storlab.db import import_profile
from storlab.errors import DatabaseGone, ScenarioError, StorlabError
from storlab.export.fio import to_fio_json
from storlab.export.simulate import together
from storlab.imports import write_hammerdb_json

app = typer.Typer(help="Measure real disks and databases on this machine.", no_args_is_help=True)


#: `bench disk --csv` columns, one row per result (docs/record.md, "CSV").
DISK_CSV = ["job", "engine", "iops", "bw_bytes_s", "mean_iops", "mean_bw_bytes_s", "read_iops", "write_iops",
            "lat_mean_us", "lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us", "lat_max_us", "outstanding",
            "runtime_s", "runs", "cpu_us_per_io"]

#: `bench db --csv` columns, one row per virtual-user count.
DB_CSV = ["vus", "repeats", "headline_name", "headline", "nopm", "nopm_stdev", "tpm", "tpm_stdev", "tpm_client", "rows_per_min", "commits", "last_commit_s",
          "errors", "lat_p99_us", "client_cpu_us_per_txn", "wal_bytes_per_txn", "buffer_cache_hit_ratio"]


def _table(rec) -> Table:
    t = Table(title=f"{rec['workload']} on {rec['host_info'].get('path')} "
                    f"({rec['host_info'].get('filesystem')}, {rec['file_bytes'] / 1e6:,.1f} MB test file; MB = 10^6 bytes)")
    for col in ("job", "MB/s (best)", "MB/s (mean)", "IOPS (best)", "latency mean", "p99", "CPU µs/I/O"):
        t.add_column(col, justify="right" if col != "job" else "left", no_wrap=col == "job", overflow="fold")
    for r in rec["results"]:
        t.add_row(r["job"], f"{r['bw_bytes_s'] / 1e6:,.1f}", f"{r['mean_bw_bytes_s'] / 1e6:,.1f}", f"{r['iops']:,.0f}",
                  latency(r["lat_mean_us"]), latency(r["lat_p99_us"]), f"{r['cpu_us_per_io']:,.2f}")
    # Each job's first run: when its window began and how long it ran.
    groups = together([{"config": "", "job": j["job"], "start_s": j["runs"][0]["start_s"],
                        "elapsed_s": j["runs"][0]["elapsed_s"]} for j in rec.get("runs") or [] if j.get("runs")])
    if groups:
        t.caption = "\n".join(f"ran at the same time (no stonewall between them, as in fio): {', '.join(g)}" for g in groups)
    return t


def db_rows(rec) -> list[dict]:
    """`bench db --csv` rows: one per VU count, the table's figures unrounded."""
    rows = []
    for r in rec["results"]:
        io = r.get("io_profile") or {}
        rows.append({**r, "errors": sum(x["errors"] for x in r["txn"].values()),
                     "lat_p99_us": max((x["lat_p99_us"] for x in r["txn"].values()), default=None),
                     "wal_bytes_per_txn": (io.get("per_txn") or {}).get("wal_bytes"),
                     "buffer_cache_hit_ratio": io.get("buffer_cache_hit_ratio")})
    return rows


@app.command("disk")
def disk_cmd(
    path: Path = typer.Option(..., "--path", help="An existing folder on the disk to measure; storlab writes only its own test file there and removes it."),
    profile: Optional[str] = typer.Option(None, "--profile", help="A CrystalDiskMark preset: cdm-default (default), cdm-peak, cdm-real-world, cdm-nvme."),
    job: Optional[Path] = typer.Option(None, "--job", help="A fio job file (the documented subset, docs/workloads.md)."),
    size: Optional[str] = typer.Option(None, "--size", help="Test file size: 1GiB, 512MiB (2^20), 500MB (10^6); default 1GiB, or a job file's largest size=. Given, it is every job's size."),
    runs: Optional[int] = typer.Option(None, "--runs", max=COUNT_MAX, help="Measured runs per test (presets; default 3, CrystalDiskMark 9)."),
    runtime: Optional[float] = typer.Option(None, "--runtime", help="Seconds measured per run (presets default 5)."),
    interval: Optional[float] = typer.Option(None, "--interval", help="Seconds idle between tests (presets default 5)."),
    engine: str = typer.Option("io_uring", "--engine", help="io_uring, psync or null (a job file's ioengine wins)."),
    buffered: bool = typer.Option(False, "--buffered", help="Use the page cache instead of O_DIRECT."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write the run's HTML report (storlab report) to FILE."),
    json_out: bool = typer.Option(False, "--json", help="Print the run record as JSON."),
    csv_out: bool = typer.Option(False, "--csv", help="Print the results as CSV (columns: docs/record.md)."),
    output_format: Optional[str] = typer.Option(None, "--output-format", help="fio-json: fio-compatible JSON."),
    calibrate_out: Optional[Path] = typer.Option(None, "--calibrate-out", help="Write this disk as a measured local/ device (caps and QD1 latency) to a catalog overlay FILE."),
    emulate: Optional[str] = typer.Option(None, "--emulate", help="SCENARIO:CONFIG — measure an emulated volume of that deployment (mounted under --path for the run, then removed)."),
) -> None:
    """Measure a disk with CrystalDiskMark presets or fio job files; records line up with `storlab simulate`."""
    if output_format not in (None, "fio-json", "json"):
        raise StorlabError(f"--output-format '{output_format}' — use fio-json or json")
    one_of(json_out or output_format is not None, csv_out)
    check_output(report)
    err = Console(stderr=True)
    opts = dict(emulate=emulate, calibrate_out=calibrate_out)
    if sys.stderr.isatty():
        with Progress("measuring", BarColumn(), "{task.completed}/{task.total} tests", console=err, transient=True) as bar:
            task = bar.add_task("bench", total=None)
            rec = api.bench_disk(path, profile, job, size, engine, runs, runtime, interval, not buffered,
                                 progress=lambda done, total: bar.update(task, completed=done, total=total), **opts)
    else:
        rec = api.bench_disk(path, profile, job, size, engine, runs, runtime, interval, not buffered, **opts)
    for w in rec["warnings"]:
        err.print(f"warning: {w}", style="yellow", soft_wrap=True, markup=False, highlight=False)
    calibration = rec["inputs"].get("calibration") or {}
    if calibration.get("device"):
        err.print(f"{calibration['device']} and {calibration['host']} → {calibrate_out} (load it with --catalog)")
    as_json = json_out or output_format == "json"
    if output_format == "fio-json":
        typer.echo(to_fio_json(rec), nl=False)
    else:
        emit(rec, as_json, csv_out, lambda: csv_text(DISK_CSV, rec["results"]), lambda: _table(rec))
        if not (as_json or csv_out):
            console().print(Text("best is CrystalDiskMark's figure (highest of the runs)", style="dim"))
    if report is not None:
        write_outputs_keeping(rec, "bench-disk", [lambda: write_report_of(rec, Path("bench-disk"), report)], as_json)
    if calibration.get("refused"):
        # Raised once the results are printed: the measurement is not lost.
        raise ScenarioError(calibration["refused"])
    if rec["interrupted"]:
        err.print("interrupted: the results above are what was measured; the test file was removed", style="yellow")
        raise typer.Exit(130)


def _db_table(rec) -> Table:
    t = Table(title=f"{rec['workload']} on {rec['inputs']['db']}")
    tpcc = rec["inputs"]["workload"]["kind"] == "tpcc"
    insert = rec["inputs"]["workload"]["kind"] == "insert"
    # The client's own count gets a column only where the engine's differs (PostgreSQL).
    engine = any(r.get("tpm") != r.get("tpm_client") for r in rec["results"])
    # A workload file's own headline (`[metric]`: tpsE) comes first.
    headline = next((r["headline_name"] for r in rec["results"] if r.get("headline_name")), None)
    cols = (["VUs"] + ([headline] if headline else []) + (["NOPM"] if tpcc else []) + (["rows/min", "last commit"] if insert else []) + ["TPM"]
            + (["client TPM"] if engine else []) + ["errors", "p99 (slowest)", "CPU µs/txn", "WAL B/txn", "cache hit"])
    for c in cols:
        t.add_column(c, justify="right", overflow="fold")
    for r in rec["results"]:
        spread = lambda k: f" ±{r[k + '_stdev']:,.0f}" if r.get(k + "_stdev") else ""  # noqa: E731
        p99 = max((x["lat_p99_us"] for x in r["txn"].values()), default=0)
        errors = sum(x["errors"] for x in r["txn"].values())
        io = r["io_profile"]
        wal = io["per_txn"].get("wal_bytes")
        hit = io.get("buffer_cache_hit_ratio")
        row = [str(r["vus"])]
        if headline:
            row.append(f"{r['headline']:,.1f}{spread('headline')}" if r.get("headline") is not None else "—")
        if tpcc:
            row.append(f"{r['nopm']:,.0f}{spread('nopm')}")
        if insert:
            row += [f"{r['rows_per_min']:,.0f}", f"{r['last_commit_s']:.1f} s"]
        row += [f"{r['tpm']:,.0f}{spread('tpm')}"] + ([f"{r['tpm_client']:,.0f}"] if engine else []) + [str(errors),
                latency(p99), f"{r['client_cpu_us_per_txn']:,.0f}",
                f"{wal:,.0f}" if wal is not None else "—", f"{hit:.1%}" if hit is not None else "—"]
        t.add_row(*row)
    return t


class _Line:
    """The live progress line on a TTY: phase, time, and the current
    transactions per minute over the last few seconds."""

    def __init__(self, err: Console):
        self.err, self.time = err, time
        self.hist: list[tuple[float, int]] = []
        self.phase = None

    def __call__(self, p: dict) -> None:
        now = self.time.monotonic()
        if p["phase"] == "load":
            self.err.file.write(f"\rloading: {p['done']}/{p['total'] or '?'} tables   ")
            self.err.file.flush()
            return
        if p["phase"] != self.phase:
            self.phase, self.t0, self.hist = p["phase"], now, []
        self.hist = [h for h in self.hist if now - h[0] <= 5.0] + [(now, p["done"])]
        rate = 0.0
        if len(self.hist) > 1 and self.hist[-1][0] > self.hist[0][0]:
            rate = (self.hist[-1][1] - self.hist[0][1]) / (self.hist[-1][0] - self.hist[0][0]) * 60
        total = p["rampup_s"] if p["phase"] == "rampup" else p["duration_s"]
        el = now - self.t0
        rep = f" run {p['repeat']}/{p['repeats']}" if p["repeats"] > 1 else ""
        of = f"/{total:.0f}s" if total else "s"
        self.err.file.write(f"\r{p['vus']} VUs{rep} | {p['phase']} {el:.0f}{of} | {rate:,.0f} transactions/min      ")
        self.err.file.flush()

    def done(self) -> None:
        self.err.file.write("\r" + " " * 79 + "\r")
        self.err.file.flush()


@app.command("db")
def db_cmd(
    workload: str = typer.Option("tpcc", "--workload", help="tpcc (TPROC-C, HammerDB's way), insert (the insert storm) or a workload file FILE.toml (docs/db.md)."),
    db: str = typer.Option("sqlite", "--db", help="sqlite (embedded, its file in --dir), managed-postgres (a cluster storlab runs in --dir), managed-mariadb (a MariaDB server storlab runs in --dir; mariadbd from PATH or STORLAB_MARIADB_BIN), mysql (a MySQL or MariaDB server named by --dsn), or postgres://USER@HOST:PORT/DB (password from PGPASSWORD or ~/.pgpass)."),
    dsn: Optional[str] = typer.Option(None, "--dsn", help="With --db mysql: mysql://USER@HOST:PORT/DB; the password from MYSQL_PWD or ~/.my.cnf, never printed."),
    dir: Optional[Path] = typer.Option(None, "--dir", help="Folder for the SQLite file or the managed cluster's data directory."),
    warehouses: int = typer.Option(1, "--warehouses", max=COUNT_MAX, help="TPC-C warehouses (about 100 MB each)."),
    vus: str = typer.Option("1", "--vus", help="Virtual users: 8, a sweep 256,362,512,724,1024, or auto (√2 steps up to --max-vus)."),
    max_vus: int = typer.Option(1024, "--max-vus", max=COUNT_MAX, help="Upper limit of --vus auto."),
    rampup: Optional[str] = typer.Option(None, "--rampup", help="Warm-up before each measured window (30, 90s, 2m); default a fifth of --duration, at most 2m."),
    duration: Optional[str] = typer.Option(None, "--duration", help="Measured window (30, 5m); default 5m (insert: until every row is in)."),
    repeat: int = typer.Option(1, "--repeat", max=COUNT_MAX, help="Timed runs per virtual-user count; results show the mean and the spread."),
    all_warehouses: bool = typer.Option(False, "--all-warehouses", help="TPC-C: each VU works on a slice of all warehouses (more I/O) instead of one home warehouse."),
    key_and_think: bool = typer.Option(False, "--key-and-think", help="TPC-C: keying and thinking times of the specification."),
    rows: int = typer.Option(10_000, "--rows-per-user", "--rows", max=COUNT_MAX, help="Insert storm: rows each VU inserts; the run ends when every VU has inserted its rows."),
    commit_every: int = typer.Option(100, "--commit-every", max=COUNT_MAX, help="Insert storm: rows per commit."),
    scale: Optional[int] = typer.Option(None, "--scale", max=COUNT_MAX, help="Workload files: the scale their bounds multiply (default: the file's)."),
    keep: bool = typer.Option(False, "--keep", help="Keep the SQLite file or the managed cluster afterwards."),
    check: bool = typer.Option(False, "--check", help="TPC-C: run the consistency conditions 1–4 after the last run."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write the run's HTML report (storlab report) to FILE."),
    hammerdb_json: Optional[Path] = typer.Option(None, "--hammerdb-json", help="TPC-C: also write the run as HammerDB's result file (hammerdb-job-report-v1) to FILE."),
    seed: int = typer.Option(1, "--seed", help="Seed of the load and of every VU's draws."),
    threads: int = typer.Option(0, "--threads", max=COUNT_MAX, help="Event loops (threads) the virtual users are dealt over, like pgbench -j; 0 = one per core, at most one per VU."),
    json_out: bool = typer.Option(False, "--json", help="Print the run record as JSON."),
    csv_out: bool = typer.Option(False, "--csv", help="Print one row per virtual-user count as CSV (columns: docs/record.md)."),
    profile_out: Optional[Path] = typer.Option(None, "--profile-out", help="Record a workload profile (TOML, docs/profile.md) for storlab simulate; needs --db managed-postgres or managed-mariadb (TPC-C)."),
    commit_log: Optional[Path] = typer.Option(None, "--commit-log", help="TPC-C on PostgreSQL, MySQL or MariaDB: write 'w_id d_id o_id' of every New-Order to FILE once its COMMIT is acknowledged (crash tests)."),
    setting: Optional[List[str]] = typer.Option(None, "--setting", help="NAME=VALUE, a server setting of --db managed-postgres or managed-mariadb (repeatable), e.g. --setting shared_buffers=4GB or --setting innodb_buffer_pool_size=1G."),
    emulate: Optional[str] = typer.Option(None, "--emulate", help="SCENARIO:CONFIG — put the database's files (SQLite file or managed cluster) on an emulated volume of that deployment, mounted under --dir for the run."),
) -> None:
    """Drive a real database with TPC-C, the insert storm or your own SQL; NOPM, TPM and the I/O each transaction costs."""
    one_of(json_out, csv_out)
    check_output(report)
    check_output(hammerdb_json, "--hammerdb-json")
    if hammerdb_json is not None and workload != "tpcc":
        raise StorlabError(f"--hammerdb-json: HammerDB's result file describes a TPROC-C run — --workload {workload} is not TPC-C; use --workload tpcc")
    err = Console(stderr=True)
    line = _Line(err) if sys.stderr.isatty() else None
    emu_series: list = []
    wal_dir: Optional[Path] = None
    gone: Optional[DatabaseGone] = None
    try:
        with contextlib.ExitStack() as stack:
            if emulate:
                if dir is None:
                    raise StorlabError("--emulate needs --dir: the folder the emulated volume is mounted under")
                # PostgreSQL's WAL goes to the config's log pool when it has one
                # (initdb --waldir on a second emulated mount), as on the
                # modelled host; SQLite keeps its WAL beside its file.
                scenario_path, config_name = emulated.parse_spec(emulate)
                roles: list[str | None] = [None]
                have = emulated.config_roles(scenario_path, config_name)
                others = [r for r in have if r != "log"]
                if db == "managed-postgres" and "log" in have and others:
                    # Several pools are named (the primary: data, else the first other).
                    roles = ["data" if "data" in others else others[0], "log"]
                mounts = stack.enter_context(emulated.mounted(emulate, dir, roles, series=emu_series))
                dir = mounts[0]
                if len(mounts) > 1:
                    wal_dir = mounts[1] / "pg_wal"
            try:
                rec = bench_db(workload, db, dir, warehouses=warehouses, vus=vus, max_vus=max_vus, rampup=rampup,
                               duration=duration, repeat=repeat, all_warehouses=all_warehouses, key_and_think=key_and_think,
                               rows=rows, commit_every=commit_every, scale=scale, keep=keep, check=check, seed=seed,
                               threads=threads, progress=line, profile_out=profile_out, commit_log=commit_log,
                               wal_dir=wal_dir, settings=setting, dsn=dsn)
            except DatabaseGone as e:
                # What was measured before is printed as an interrupted
                # run's is, then the one line that says why it ended.
                if e.record is None:
                    raise
                gone, rec = e, e.record
        if emulate:
            rec = emulated.stamp(rec, emulate)
            # The emulated volume as CloudWatch would have shown it, per pool.
            rec["series"] = rec.get("series", []) + emu_series
    finally:
        if line:
            line.done()
    emit(rec, json_out, csv_out, lambda: csv_text(DB_CSV, db_rows(rec)), lambda: _db_table(rec))
    writers = ([lambda: write_report_of(rec, Path("bench-db"), report)] if report is not None else []) + \
        ([lambda: write_hammerdb_json(rec, hammerdb_json)] if hammerdb_json is not None else [])

    if not (json_out or csv_out):
        for r in rec["results"]:
            if r.get("hammerdb"):
                typer.echo(f"{r['vus']} VUs: {r['hammerdb']}")
            if r.get("consistency"):
                bad = [k for k, v in r["consistency"].items() if not v["ok"]]
                typer.echo("consistency conditions 1-4: " + ("all hold" if not bad else "VIOLATED: " + "; ".join(bad)))
        for s in rec["series"]:
            if s["metric"] == "RowsInserted":
                rates = ", ".join(f"{v * 60 / s['period_s']:,.0f}" for v in s["values"])
                typer.echo(f"{s['resource']}: rows per minute, by {s['period_s']} s: {rates}")
        for r in rec["runs"]:
            done = [f for f in r.get("vu_finish_s", []) if f is not None]
            if done:
                typer.echo(f"{r['vus']} VUs: {len(done)} of {len(r['vu_finish_s'])} users done, "
                           f"the first after {min(done):,.1f} s, the last after {max(done):,.1f} s")
        if rec.get("profile"):
            typer.echo(f"profile written to {rec['profile']['path']}")
        for tip in rec.get("tipping_point", []):
            typer.echo(f"tipping point: {tip['vus']} VUs — {tip['note']}")
        for r in rec["runs"]:
            for msg, n in r.get("error_messages", {}).items():
                err.print(f"{r['vus']} VUs: {n} × {msg}", style="yellow")
    # After the lines above, so a failed write never hides the run's results.
    write_outputs_keeping(rec, "bench-db", writers, json_out)
    if gone is not None:
        print(f"bench db: {gone}", file=sys.stderr)
        raise typer.Exit(1)
    if rec["interrupted"]:
        err.print("interrupted: the results above are what was measured", style="yellow")
        raise typer.Exit(130)


@app.command("import")
def import_cmd(
    dir: Path = typer.Option(..., "--dir", help="A folder for the managed PostgreSQL cluster and the input file (both removed after)."),
    size_mib: int = typer.Option(256, "--size-mib", max=COUNT_MAX, help="The generated CSV input's size in MiB (default 256)."),
    profile_out: Path = typer.Option(..., "--profile-out", help="The import profile to write (.toml), for `\\[workload.import] profile = FILE`."),
) -> None:
    """Record a bulk-import profile: COPY of a generated CSV into a table with a
    primary key and an index on a PostgreSQL storlab runs itself; WAL, table
    and index bytes per input byte and the server's CPU per MiB."""
    if size_mib < 1:
        raise StorlabError(f"--size-mib {size_mib} — nearest valid value 1")
    if profile_out.suffix != ".toml" or not profile_out.parent.is_dir():
        raise StorlabError(f"--profile-out {profile_out}: give a .toml file in an existing folder")
    p = import_profile.record(dir, size_mib << 20, profile_out, ["storlab", "bench", "import", "--dir", str(dir), "--size-mib", str(size_mib), "--profile-out", str(profile_out)])
    typer.echo(f"{profile_out}: {p['per_input_byte']}, cpu_us_per_mib = {p['cpu_us_per_mib']}")
