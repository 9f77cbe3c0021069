"""Database workload profiles (`storlab bench db ... --profile-out FILE`):
what one transaction of each type asks of the server — CPU, logical page
accesses, pages dirtied, WAL, commits — with the miss-ratio curve of its page
accesses, its data size per scale unit and its concurrency penalty (a USL
fit), measured on a managed PostgreSQL where storage was not the limit.
The format is docs/profile.md; the simulator reads it.

The driver measures (per run: pg_stat_statements deltas per transaction
type, the server processes' CPU from /proc, relation sizes); this module
plans the extra runs (a sweep, several shared_buffers sizes), turns the runs
into a profile and writes it as TOML."""

from __future__ import annotations

import datetime
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from storlab import _native
from storlab.calibrate import flush_probe, overlay, overlay_text
from storlab.catalog import read_catalog_files
from storlab.errors import StorlabError
from storlab.host import machine, tool_info

# Cache sizes of the miss-ratio curve, as fractions of the data size.
CACHE_FRACTIONS = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
# The smallest shared_buffers the curve uses: every backend must find
# unpinned buffers (PostgreSQL's floor is 16 buffers, 128 kB).
MIN_SHARED_BUFFERS = 1 << 20
# Settings of the recording cluster: pg_stat_statements for the per-type
# split (top-level statements only: each TPC-C transaction is one), and
# synchronous_commit on, PostgreSQL's default, so the CPU a durable commit
# costs (system calls, wake-ups, the WAL lock's waiters) is in the CPU per
# transaction; the disk's flush latency is the model's, from the catalog.
SETTINGS = {"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "top",
            "pg_stat_statements.max": "1000", "synchronous_commit": "on"}
def check_out_path(path: str | os.PathLike) -> Path:
    """A clean error before anything runs when the profile cannot be written there."""
    p = Path(path)
    if p.is_dir():
        raise StorlabError(f"--profile-out {p} is a folder — give a file name such as {p / 'profile.toml'}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise StorlabError(f"--profile-out {p}: the folder {parent} does not exist — create it first")
    if not os.access(parent, os.W_OK):
        raise StorlabError(f"--profile-out {p}: the folder {parent} is not writable — pick another place")
    if p.suffix != ".toml":
        raise StorlabError(f"--profile-out {p} — a profile is TOML: name it {p.with_suffix('.toml').name}")
    return p


def scrub(text: str) -> str:
    """A command line or DSN without its password."""
    text = re.sub(r"(postgres(?:ql)?://[^:/@\s]+):[^@\s]*@", r"\1@", text)
    return re.sub(r"password\s*=\s*\S+", "password=***", text, flags=re.I)


# The fits are storlab-workload's (`fit`): the recorder hands them its figures.
usl_fit = _native.usl_fit
cpu_penalty_fit = _native.cpu_penalty_fit
non_increasing = _native.non_increasing


def read_only_types(wspec: dict[str, Any]) -> set[str]:
    """Transaction types that write nothing, so the server flushes nothing
    at their commit, as the workload's own reader (storlab-db) says: TPC-C's
    Order-Status and Stock-Level; in a workload file, a transaction whose
    statements are all SELECTs. Their WAL (page pruning on access) is real
    but asks for no flush."""
    kind = wspec.get("kind")
    if kind == "tpcc":
        wl = _native.DbWorkload.tpcc()
    elif kind == "custom":
        wl = _native.DbWorkload.file(wspec.get("file", "workload"), wspec.get("text", ""))
    else:
        return set()
    return set(wl.read_only_kinds())


def host_cpu_now() -> tuple[float, float]:
    """The machine's busy CPU time so far (user, nice, system, irq, softirq
    of /proc/stat, s; steal and idle left out) and a monotonic clock."""
    try:
        f = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        tick = os.sysconf("SC_CLK_TCK")
        busy = sum(int(x) for x in (f[1], f[2], f[3], f[6], f[7])) / tick
    except (OSError, ValueError, IndexError):
        busy = float("nan")
    return busy, time.monotonic()


def host_cpu_since(start: tuple[float, float]) -> dict[str, float]:
    busy, now = host_cpu_now()
    return {"busy_s": busy - start[0], "elapsed_s": now - start[1]}


def cpu_per_txn(run: dict[str, Any]) -> float:
    """The CPU one transaction of a run costs the server, µs
    (`storlab_workload::recording::cpu_per_txn`): the machine's busy time
    around the run less the client's own, over the measured window's share
    of the run; else the server's processes' user and system time."""
    return _native.cpu_per_txn_us(json.dumps(_finite(run, "", [])))


def _finite(v: Any, at: str, dropped: list[str]) -> Any:
    """`v` without its figures that are not finite numbers (NaN, ±inf),
    whose places go to `dropped`."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            where = f"{at}.{k}" if at else k
            if isinstance(x, float) and not math.isfinite(x):
                dropped.append(where)
            else:
                out[k] = _finite(x, where, dropped)
        return out
    if isinstance(v, (list, tuple)):
        bad = [f"{at}[{i}]" for i, x in enumerate(v) if isinstance(x, float) and not math.isfinite(x)]
        if bad:
            dropped.extend(bad)
            return []
        return [_finite(x, f"{at}[{i}]", dropped) for i, x in enumerate(v)]
    return v


def to_toml(profile: dict[str, Any]) -> str:
    """The profile as TOML, written by the profile's reader's own crate. A
    figure that is not a number (a fit with nothing to fit) is left out and
    said on stderr, so the reader judges the profile without it."""
    dropped: list[str] = []
    doc = _finite(profile, "", dropped)
    for d in dropped:
        print(f"warning: profile: {d} is not a finite number — left out", file=sys.stderr)
    return _native.profile_toml(json.dumps(doc))


def build(*, name: str, workload: str, kind: str, scale: float, scale_unit: str, sweep: list[dict[str, Any]],
          mrc_points: list[tuple[float, float]], mrc_method: str, provenance: dict[str, Any],
          size_run: dict[str, Any], read_only: set[str] | frozenset[str] = frozenset(), engine: str = "postgresql",
          sync_off: dict[str, Any] | None = None, commit_every: int | None = None) -> dict[str, Any]:
    """The profile from the sweep's runs as measured (per-type demand, the
    CPU penalty's fit, the per-count figures), the miss-ratio points (cache
    fraction, miss ratio), the run at one user without a flush at commit,
    and provenance: `storlab_workload::recording::build` turns the raw
    measurements into the profile (on MariaDB dealing InnoDB's global
    counters to the types first)."""
    rec = {"name": name, "workload": workload, "kind": kind, "scale": float(scale), "scale_unit": scale_unit,
           "sweep": sweep, "mrc_points": [list(p) for p in mrc_points], "mrc_method": mrc_method,
           "size_run": size_run, "read_only": sorted(read_only), "engine": engine, "sync_off": sync_off,
           "commit_every": None if commit_every is None else float(commit_every)}
    # A figure the machine could not give (NaN) is left out: the reader
    # then takes what the run has instead.
    built: dict[str, Any] = _native.profile_build(json.dumps(_finite(rec, "", [])), json.dumps(provenance))
    return built


def provenance(server: dict[str, Any], *, scale: float, vus: list[int], command: list[str] | None = None,
               disk: str = "", cpu_speed: dict[str, Any] | None = None) -> dict[str, Any]:
    """The profile's `[provenance]`. `cpu_speed`: the recorder's probe
    (`cpuprobe.measure`), merged into `machine` — `cpu_speed` and
    `cpu_speed_basis` are what `simulate` divides a host's figure by."""
    tool = tool_info()
    m = machine()
    m["disk"] = disk
    m.update(cpu_speed or {})
    cmd = command if command is not None else ["storlab", *sys.argv[1:]]
    return {
        "database": server.get("version", ""),
        "settings": dict(sorted((server.get("settings") or {}).items())),
        "machine": m,
        "storlab_version": tool.get("version", ""),
        "git_sha": tool.get("git_sha") or "",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": scrub(shlex.join(cmd)),
        "scale": scale,
        "vus": vus,
    }


def health(path: Path, profile: dict[str, Any]) -> list[dict[str, str]]:
    """What makes the profile suspect (`Profile::health`, the check
    `simulate` and `advise` make): one {field, reason, fix} each; a profile
    the loader would refuse is one suspect with the loader's words."""

    try:
        return _native.profile_health(str(path), to_toml(profile))
    except StorlabError as e:
        return [{"field": "profile", "reason": str(e), "fix": "record again; if it recurs, report it with the profile"}]


def write(path: Path, profile: dict[str, Any]) -> list[dict[str, str]]:
    """Writes the profile, suspect or not, so the user can see it; a
    suspect one is said on stderr with its reasons, their fixes and that
    simulate will refuse it. Returns the suspects."""
    suspects = health(path, profile)
    try:
        path.write_text(to_toml(profile), encoding="utf-8")
    except OSError as e:
        raise StorlabError(f"--profile-out {path}: cannot write ({e.strerror}) — pick another place") from None
    for s in suspects:
        print(f"warning: profile {path} is suspect: {s['field']}: {s['reason']} — {s['fix']}", file=sys.stderr)
    if suspects:
        print(f"warning: profile {path} written, but storlab simulate and advise will refuse it for the reasons above "
              "(--accept-suspect uses it as it is)", file=sys.stderr)
    return suspects


def plan(path: Path, vus: list[int], repeat: int, rampup_s: float, duration_s: float, *, engine: str,
         kind: str) -> str:
    """What a recording will run and about how long it takes after the
    load, in one line: the sweep (counts, runs, windows), the runs that
    follow (`record`: a run per cache size, one at one user without the log
    flush, PostgreSQL's write-back run) and the penalty fit (simulated)."""
    insert = kind == "insert"

    def mins(s: float) -> str:
        return f"{s / 60:.0f} min" if s >= 600 else f"{int(s // 60)} min {int(s % 60)} s" if s >= 60 else f"{s:.0f} s"

    ramp, dur = (0.0, duration_s) if insert else (min(rampup_s, 5.0), min(duration_s, 15.0))
    runs = f"{repeat} run{'s' if repeat > 1 else ''} each"
    sweep = f"{runs} of {rampup_s:g} s warm-up + {duration_s:g} s measured" if duration_s > 0 else f"{runs}, until every user's rows are in"
    after = f"up to {len(CACHE_FRACTIONS)} cache-size runs"
    total = len(vus) * repeat * (rampup_s + duration_s) + len(CACHE_FRACTIONS) * (ramp + dur)
    if not insert:
        after += " and 1 one-user run without the log flush"
        total += ramp + dur
    after += f", each {ramp:g} s + {dur:g} s" if dur > 0 else ", each until its rows are in"
    if not insert and engine != "managed-mariadb":
        after += f"; a {WRITEBACK_RUN_S:g} s write-back run"
        total += WRITEBACK_RUN_S
    about = f"about {mins(total)} after the load" if duration_s > 0 else "its length set by the rows, not a clock"
    return (f"recording profile {path}: the sweep at {', '.join(map(str, vus))} users, {sweep}; then {after}; "
            f"and the penalty fit (simulated) — {about}")


def record_sweep_vus(vus: list[int]) -> list[int]:
    """The sweep a profile is fitted to: the counts asked for, or with a
    single count N, powers of two from 1 up to N (and N), so the USL fit has
    points; 1 always included (the fit's reference)."""
    if len(vus) >= 3 and 1 in vus:
        return vus
    top = max(vus)
    out = sorted({1, *(2 ** k for k in range(1, 12) if 2 ** k <= top), top, *vus})
    if len(out) < 3:
        out = [1, 2, 4]
    return out


def sync_off_run(managed: Any, run_once: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """One more run at one user with synchronous_commit off (no flush to
    wait for; the sweep's shared_buffers, data read in). The profile's build
    takes from it the time per transaction outside the server (the client's
    round trip, its own CPU, wake-ups) and, against the sweep's run at one
    user, the CPU of one WAL flush."""
    before_sweep(managed, synchronous_commit="off")
    return run_once()


# How often the recorder samples the users' backends (pg_stat_activity).
CLIENT_WAIT_HZ = 10


def client_wait_share(samples: dict[int, list[int]], users: int) -> float | None:
    """The share of the users' time their backends waited for the client,
    from per-backend sample counts `{pid: [idle, all]}`: the `users`
    backends with the most samples not idle are the users (a monitoring
    connection of the driver's idles throughout); None without samples."""
    top = sorted(samples.values(), key=lambda c: c[1] - c[0], reverse=True)[:max(users, 1)]
    total = sum(c[1] for c in top)
    return sum(c[0] for c in top) / total if total else None


class ClientWaits:
    """The users' backends of one run, sampled in pg_stat_activity
    `CLIENT_WAIT_HZ` times a second from one more connection (psql's
    `\\watch`): how often each was idle — its result on the way to the
    client, the client's next call not yet in: the client's round trip, its
    own CPU, its and the backend's wake-ups. A backend running or waiting
    inside the server (a lock, the WAL) is not idle. Only the driver's
    connections count (application_name storlab)."""

    QUERY = ("SELECT string_agg(pid::text || ':' || CASE WHEN state = 'idle' THEN '1' ELSE '0' END, ',') "
             "FROM pg_stat_activity WHERE backend_type = 'client backend' AND application_name = 'storlab' "
             "AND pid <> pg_backend_pid() \\watch " + f"{1 / CLIENT_WAIT_HZ:g}\n")

    def __init__(self, managed: Any) -> None:
        self.managed = managed
        self.samples: dict[int, list[int]] = {}
        self._proc: Any = None
        self._reader: Any = None

    def __enter__(self) -> "ClientWaits":
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        try:
            # On the cluster's postgres database: the driver waits after each
            # run until no other session is left on the workload's.
            self._proc = subprocess.Popen([self.managed._psql(), "-X", "-q", "-At", "-d",
                                           self.managed._conninfo("postgres")],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          text=True, env=env, cwd="/", start_new_session=True, bufsize=1)
            assert self._proc.stdin is not None
            self._proc.stdin.write(self.QUERY)
            self._proc.stdin.flush()
        except (OSError, StorlabError):
            self._proc = None  # no sampling: the profile goes without client_wait_us
            return self
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        for line in self._proc.stdout:
            for item in line.strip().split(","):
                pid, _, idle = item.partition(":")
                if pid.isdigit() and idle in ("0", "1"):
                    c = self.samples.setdefault(int(pid), [0, 0])
                    c[0] += idle == "1"
                    c[1] += 1

    def __exit__(self, *exc: Any) -> None:
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=5)
        except Exception:
            self._proc.kill()
            self._proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)

    def result(self, users: int) -> dict[str, float] | None:
        share = client_wait_share(self.samples, users)
        if share is None:
            return None
        return {"idle_share": share, "samples": float(sum(c[1] for c in self.samples.values()))}


RECORDING_HOST = "local/recording/host"
RECORDING_DISK = "local/recording/disk"
# Simulated warm-up and window of each model run the penalty's bisection
# makes: long enough that the count's mean settles within the tolerance.
PENALTY_RAMPUP_S = 3.0
PENALTY_DURATION_S = 20.0


def recording_overlay(flush: dict[str, float], m: dict[str, Any]) -> str:
    """A catalog overlay with the recording machine as the model sees it: a
    host with its vCPUs and memory, and one disk whose every write is the
    durable write `flush_probe` timed there (the log's flush), with caps no
    workload here reaches (the penalty is meant where storage is not the
    limit)."""
    med, p99 = flush["flush_median_us"], max(flush["flush_p99_us"], flush["flush_median_us"])
    lat = {"read_median_us": med, "read_p99_us": p99, "write_median_us": med, "write_p99_us": p99,
           "flush_median_us": med, "flush_p99_us": p99}
    note = (f"the recording machine: {m.get('cpus')} vCPUs, {m.get('memory_bytes', 0) / 2**30:.2f} GiB (/proc); "
            f"durable writes {flush.get('writes', 0):.0f} × (8 KiB write + fdatasync) where the cluster ran")
    dev = {"id": RECORDING_DISK, "title": "the recording machine's disk (durable write measured, caps out of the way)",
           "size_gib": 1024, "read_iops": 1e6, "write_iops": 1e6, "read_mib_s": 1e5, "write_mib_s": 1e5,
           "iops": 1e6, "mib_s": 1e5}
    host = {"host": [{"id": RECORDING_HOST, "title": "the recording machine", "src": "recording-machine", "kind": "local",
                      "vcpus": int(m.get("cpus") or 1), "memory_gib": round(max(m.get("memory_bytes", 0) / 2**30, 0.01), 2)}]}
    return overlay_text(overlay([RECORDING_DISK], lat, note, "recording-machine", dev), host)


def penalty_on_recording_machine(prof: dict[str, Any], flush: dict[str, float], m: dict[str, Any], *,
                                 rampup_s: float, duration_s: float) -> tuple[list[float], str, list[float]]:
    """The concurrency penalty from the recorded throughput: at each
    recorded count N, the CPU-demand multiplier with which the model — on
    the recording machine (`recording_overlay`), at the recorded scale —
    reproduces the recorded transactions per second X(N), by bisection
    within ±0.5 %. The model's own queues (vCPUs, row locks, group commit)
    explain part of the fall from N × X(1); the multiplier is the rest: the
    CPU per transaction growing with N, a vCPU left idle while a woken
    backend waits for the other, wake-ups. Bounds 0.25–8: a count the model
    cannot reach within them keeps the bound, and the method says so. The
    bisection is the simulator's (`storlab_sim::database::fit_penalty`).

    Returns the multipliers, the method in words and the bounds."""
    conc = prof["concurrency"]
    vus, thr = conc["vus"], conc["throughput"]
    cat = _native.Catalog(read_catalog_files() + [("recording-machine.toml", recording_overlay(flush, m))])
    scale = float(prof["provenance"].get("scale") or 1.0)
    with tempfile.TemporaryDirectory(prefix="storlab-penalty-") as tmp:
        pfile = Path(tmp) / "profile.toml"
        pfile.write_text(to_toml(prof), encoding="utf-8")
        scen = (f'title = "penalty"\n[workload.database]\nprofile = {json.dumps(str(pfile))}\nscale = {scale}\n'
                f"vus = [1]\nrampup_s = {rampup_s}\nduration_s = {duration_s}\n"
                f'[configs.recording]\nhost = "{RECORDING_HOST}"\n[[configs.recording.pools]]\n'
                f'role = "all"\ndevice = "{RECORDING_DISK}"\n')
        fit = cat.penalty_fit(str(Path(tmp) / "penalty.toml"), scen, tmp, [float(x) for x in thr])
    out, clipped = fit["penalty"], fit["clipped"]
    lo, hi = fit["bounds"]
    method = (f"the CPU-demand multiplier at each recorded count with which the model on the recording machine "
              f"({m.get('cpus')} vCPUs; its durable write {flush['flush_median_us']:.0f} µs median, timed where the "
              f"cluster ran; scale {scale:g}; {rampup_s:g} s + {duration_s:g} s simulated) reproduces the recorded "
              f"transactions per second within ±{fit['tolerance']:.1%}")
    if clipped:
        method += f"; held at the bounds {lo}–{hi} at {', '.join(map(str, clipped))} users"
    below = [str(n) for n, f in zip(vus, out) if n > 1 and f < 0.9]
    if below:
        method += (f"; below 0.9 at {', '.join(below)} users: the recording ran faster there than the model's "
                   "one-user figures allow, so there the factor corrects the model rather than adding CPU")
    return out, method, [lo, hi]


def set_penalty(prof: dict[str, Any], flush: dict[str, float]) -> None:
    """`penalty_on_recording_machine` into the profile: the penalty and the method."""
    conc = prof["concurrency"]
    # A value at a bound is where the fit stopped: the health check reads the bounds.
    conc["penalty"], conc["penalty_method"], conc["penalty_bounds"] = penalty_on_recording_machine(
        prof, flush, machine(), rampup_s=PENALTY_RAMPUP_S, duration_s=PENALTY_DURATION_S)


def mrc_runs(managed: Any, data_bytes: float, run_once: Callable[[], dict[str, Any]],
             fractions: tuple[float, ...] = CACHE_FRACTIONS) -> list[tuple[float, float]]:
    """One run per cache size: the cluster restarted with shared_buffers at
    each fraction of the data size, its tables and indexes read into the
    cache (pg_prewarm) so the window starts warm, then the window's
    blks_read / (blks_hit + blks_read)."""
    pts = []
    done: set[int] = set()
    for f in fractions:
        sb = max(MIN_SHARED_BUFFERS, int(f * data_bytes))
        sb_kb = sb // 1024
        if sb_kb in done:
            continue  # a small database: two fractions under the floor
        done.add(sb_kb)
        managed.restart({"shared_buffers": f"{sb_kb}kB"})
        _prewarm(managed)
        run = run_once()
        tot = run["io_profile"]["totals"]
        hit, read = tot.get("blks_hit", 0.0), tot.get("blks_read", 0.0)
        if hit + read > 0:
            pts.append((sb_kb * 1024 / data_bytes, read / (hit + read)))
    return pts


# The write-back run: how long, and how often pg_buffercache is sampled.
WRITEBACK_RUN_S = 40.0
WRITEBACK_SAMPLE_S = 2.0
# The dirty pages of this database's relations and their runs of
# contiguous blocks (one relation fork), with the transactions so far and
# the checkpointer's writes (a checkpoint inside the run ends the curve).
_DIRTY_SQL = (
    "SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()), "
    "count(*), count(*) FILTER (WHERE prev IS DISTINCT FROM relblocknumber - 1), "
    "(SELECT buffers_checkpoint FROM pg_stat_bgwriter) "
    "FROM (SELECT relblocknumber, lag(relblocknumber) OVER (PARTITION BY relfilenode, relforknumber "
    "ORDER BY relblocknumber) AS prev FROM pg_buffercache WHERE isdirty AND reldatabase = "
    "(SELECT oid FROM pg_database WHERE datname = current_database())) s;")


def writeback_curve(samples: list[tuple[float, float, float, float]], units: float,
                    own: float = 1.0) -> dict[str, list[float]]:
    """The write-back curve from pg_buffercache samples (transactions so
    far, dirty pages, runs, checkpoint writes), the first taken just after a
    CHECKPOINT, per home unit (`storlab_workload::fit::writeback_curve`)."""
    curve: dict[str, list[float]] = _native.writeback_curve(samples, units, own)
    return curve


def writeback_run(managed: Any, run: Callable[[], dict[str, Any]], units: float) -> dict[str, Any] | None:
    """One run from a CHECKPOINT with the data in shared_buffers, sampling
    pg_buffercache every WRITEBACK_SAMPLE_S: the write-back curve with the
    server's checkpoint settings, or None where it found too few points."""
    managed.sql("CREATE EXTENSION IF NOT EXISTS pg_buffercache;")
    mem = machine()["memory_bytes"] or (4 << 30)
    sb = int(min(max(1.25 * _table_bytes(managed), 128 << 20), mem / 4))
    managed.restart({"shared_buffers": f"{sb // 1024}kB"})
    _prewarm(managed)
    managed.sql("CHECKPOINT;")

    def sample() -> tuple[float, float, float, float] | None:
        try:
            row = managed.sql(_DIRTY_SQL).strip().splitlines()[-1].split("|")
            return float(row[0]), float(row[1]), float(row[2]), float(row[3])
        except (ValueError, IndexError, StorlabError):
            return None

    # The sampler's own transactions a sample (psql's connection start is
    # one too): two samples with nothing else running.
    idle = [sample(), sample()]
    if idle[0] is None or idle[1] is None:
        return None
    own = max(idle[1][0] - idle[0][0], 0.0)
    samples: list[tuple[float, float, float, float]] = [idle[1]]
    stop = threading.Event()

    def sampler() -> None:
        while not stop.wait(WRITEBACK_SAMPLE_S):
            got = sample()
            if got is not None:
                samples.append(got)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    try:
        run()
    finally:
        stop.set()
        th.join()
    # The run's end is a point too: on a busy machine the sampler may not
    # have come round after the run's last transactions.
    last = sample()
    if last is not None:
        samples.append(last)
    curve = writeback_curve(samples, units, own)
    if len(curve["txns_per_unit"]) < 2:
        return None
    settings = {}
    for name in ("checkpoint_timeout", "max_wal_size", "checkpoint_completion_target", "checkpoint_flush_after"):
        out = managed.sql(f"SELECT setting, coalesce(unit, '') FROM pg_settings WHERE name = '{name}';").strip()
        val, _, unit = out.splitlines()[-1].partition("|") if out else ("", "", "")
        settings[name] = (float(val), unit) if val else None
    scale_of = {"s": 1.0, "min": 60.0, "kB": 1024.0, "MB": 1048576.0, "8kB": 8192.0, "": 1.0}
    out: dict[str, Any] = dict(curve)
    out["units"] = units
    for key, name in (("checkpoint_timeout_s", "checkpoint_timeout"), ("max_wal_bytes", "max_wal_size"),
                      ("completion_target", "checkpoint_completion_target"),
                      ("flush_after_bytes", "checkpoint_flush_after")):
        got = settings.get(name)
        if got is not None and got[1] in scale_of:
            out[key] = got[0] * scale_of[got[1]]
    out["method"] = (f"one run of {WRITEBACK_RUN_S:g} s from a CHECKPOINT with the data in shared_buffers "
                     f"({sb // 1048576} MB) on {units:g} home unit(s), pg_buffercache sampled every "
                     f"{WRITEBACK_SAMPLE_S:g} s: distinct dirty pages of the database and their runs of contiguous "
                     "blocks of one relation fork, against transactions since the checkpoint "
                     f"(pg_stat_database xact_commit + xact_rollback, less the sampler's own: {own:g} a sample), per unit; "
                     "checkpoint settings from pg_settings")
    return out


def _table_bytes(managed: Any) -> float:
    out = managed.sql("SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                      "WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace;")
    try:
        return float(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return 0.0


def _prewarm(managed: Any) -> None:
    managed.sql("SELECT count(pg_prewarm(c.oid)) FROM pg_class c WHERE c.relkind IN ('r', 'i') "
                "AND c.relnamespace = 'public'::regnamespace;")


def before_sweep(managed: Any, synchronous_commit: str = "on") -> None:
    """The per-type demand and the sweep are measured with the data in
    shared_buffers (1.25 × the tables, at least 128 MB, at most a quarter of
    the memory): no data reads. The
    load's aftermath is settled first — VACUUM (ANALYZE) of the fresh tables
    and a CHECKPOINT — so that autovacuum and the checkpointer do not add
    the load's work to the first runs' CPU per transaction (they ran 30 %
    apart at one user without it)."""
    managed.sql("VACUUM (ANALYZE);")
    managed.sql("CHECKPOINT;")
    managed.sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements; CREATE EXTENSION IF NOT EXISTS pg_prewarm;")
    mem = machine()["memory_bytes"] or (4 << 30)
    sb = int(min(max(1.25 * _table_bytes(managed), 128 << 20), mem / 4))
    managed.restart({"shared_buffers": f"{sb // 1024}kB", "synchronous_commit": synchronous_commit})
    _prewarm(managed)


def record(path: Path, managed: Any, runs: list[dict[str, Any]], wspec: dict[str, Any], *,
           run_one: Callable[[int, float, float], dict[str, Any]], rampup_s: float, duration_s: float,
           warehouses: int, commit_every: int, disk: dict[str, Any],
           cpu_reference: dict[str, Any] | None = None, cpu_speed: dict[str, Any] | None = None) -> dict[str, Any]:
    """After the sweep: the miss-ratio runs, then the profile written to `path`.
    `cpu_reference`: storlab's CPU reference timed just before the sweep
    (`cpuref.measure`), which the profile carries in its provenance;
    `cpu_speed`: the per-core speed probe (`cpuprobe.measure`), into
    `provenance.machine`."""
    kind = wspec["kind"]
    # The data size per scale unit: for the insert storm at the end (every
    # row in); otherwise after the sweep's first run, as near the loaded
    # database as the recording gets — a TPC-C database grows by its new
    # orders, by half again or more over a long sweep of 2 warehouses, but by a
    # few percent over a test at thousands of warehouses; the miss-ratio
    # runs size their caches against the same figure.
    size_run = runs[-1] if kind == "insert" else runs[0]
    data_bytes = float(sum(((size_run.get("server") or {}).get("relation_bytes") or {}).values()))
    if data_bytes <= 0:
        raise StorlabError("the recording found no tables to size — is the workload's schema in the public schema?")
    swept = sorted({r["vus"] for r in runs})
    vus_m = swept[len(swept) // 2]
    insert = kind == "insert"
    ramp, dur = (0.0, duration_s) if insert else (min(rampup_s, 5.0), min(duration_s, 15.0))
    pts = mrc_runs(managed, data_bytes, lambda: run_one(vus_m, ramp, dur))
    sync_off = None if insert else sync_off_run(managed, lambda: run_one(1, ramp, dur))
    # The write-back curve on the home units the run uses: TPC-C's users
    # take home warehouses round-robin, so min(users, warehouses).
    wb_units = float(min(vus_m, warehouses)) if kind == "tpcc" else 1.0
    writeback = None if insert else writeback_run(managed, lambda: run_one(vus_m, 0.0, WRITEBACK_RUN_S), wb_units)
    method = (f"runs at {len(pts)} shared_buffers sizes on the managed cluster after pg_prewarm, {vus_m} VUs, "
              + ("each until its rows were in" if insert else f"{dur:g} s windows after {ramp:g} s")
              + "; cache fraction = shared_buffers / the data "
              + ("at the end" if insert else "after the sweep's first run")
              + "; miss ratio = blks_read / (blks_hit + blks_read) of the database (pg_stat_database), "
              "made non-increasing by a running minimum")
    if kind == "tpcc":
        scale, unit, name = float(warehouses), "warehouse", "tpcc"
    elif insert:
        scale, unit, name = float(sum(r.get("rows") or 0 for r in runs)), "row", "insert"
    else:
        scale, unit, name = float(wspec.get("scale") or 1), "scale", "custom:" + Path(wspec["file"]).name
    server: dict[str, Any] = next((r["server"] for r in runs if r.get("server")), {})
    disk_text = " ".join(x for x in (disk.get("device", ""), disk.get("filesystem", "")) if x)
    prov = provenance(server, scale=scale, vus=swept, disk=disk_text, cpu_speed=cpu_speed)
    if cpu_reference:
        prov["cpu_reference"] = cpu_reference
    prof = build(name=path.stem, workload=name, kind=kind, scale=scale, scale_unit=unit, sweep=runs,
                 mrc_points=pts, mrc_method=method, provenance=prov, size_run=size_run, read_only=read_only_types(wspec),
                 sync_off=sync_off, commit_every=commit_every)
    if writeback is not None:
        prof["writeback"] = writeback
    if wspec.get("metric"):
        # The workload file's own headline (`[metric]`), for simulate.
        m = wspec["metric"]
        prof["headline"] = {"name": m["name"], "transaction": m["transaction"], "per_s": 1.0 if m["per"] == "second" else 60.0}
    # The penalty last: the model it runs needs everything above.
    flush = flush_probe(managed.wal_dir or managed.dir)
    prof["concurrency"]["penalty_durable_write_us"] = [flush["flush_median_us"], flush["flush_p99_us"]]
    set_penalty(prof, flush)
    suspects = write(path, prof)
    return {"path": str(path), "name": path.stem, "transactions": [t["name"] for t in prof["transaction"]],
            "mrc_points": len(pts), "data_bytes": data_bytes, "suspect": suspects}
