"""`storlab emulate SCENARIO --config NAME --backing DIR --mount DIR`: a
folder that behaves like the modelled cloud volume (caps, buckets, I/O
accounting, latency, host cache), in the foreground until Ctrl-C, SIGTERM or
SIGHUP, then unmounted. `storlab emulate --unmount DIR` clears a mount left
by a killed emulator."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Optional

import typer

from storlab import api
from storlab.cli import app
from storlab.cli.out import COUNT_MAX
from storlab.cli.out import emit
from storlab.errors import StorlabError
from storlab.files import write_atomically


def _set_priority(nice: int | None, realtime: int | None = None) -> str:
    """Gives every thread of this process, and so every thread the emulator
    starts after (a new thread takes its creator's), the nice value `nice`
    or the real-time class SCHED_FIFO at priority `realtime` (None: leaves
    it as started); returns the priority in effect, in words. A cloud
    volume is served by its own hardware, not by the instance's vCPUs;
    `--nice -20` puts the emulator's request and timer threads ahead of the
    database's backends in the fair class, `--realtime` lets them preempt
    the backends at once, as an interrupt would (docs/emulate.md: what each
    did to a database's throughput here)."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [0]
    if nice is not None:
        try:
            for tid in tids:
                os.setpriority(os.PRIO_PROCESS, tid, nice)
        except OSError as e:
            print(f"emulate: --nice {nice}: {e.strerror} (raising a priority needs root); the emulator runs at the "
                  "priority it was started with", file=sys.stderr)
    if realtime is not None:
        try:
            for tid in tids:
                os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(realtime))
        except OSError as e:
            print(f"emulate: --realtime {realtime}: {e.strerror} (the real-time class needs root); the emulator runs "
                  "in the class it was started in", file=sys.stderr)
    if os.sched_getscheduler(0) == os.SCHED_FIFO:
        return f"real-time {os.sched_getparam(0).sched_priority}"
    return f"nice {os.getpriority(os.PRIO_PROCESS, 0)}"


def _status_line(s: dict) -> str:
    parts = []
    for p in s["pools"]:
        bb = p.get("burst_balance")
        bb = f"  BurstBalance {bb:5.1f} %" if bb is not None else ""
        parts.append(f"{p['pool']}: {p['iops']:8.0f} IOPS {p['bw_bytes_s'] / 1e6:7.1f} MB/s  queue {p['in_flight']:3d}{bb}")
    bind = s.get("binding") or "nothing (no I/O waited)"
    return f"{s['elapsed_s']:7.0f} s  " + "  |  ".join(parts) + f"  floor {s.get('floor_us', 0):.0f} µs  binds: {bind}"


#: While a backing folder stays full, it is named again at most this often.
FULL_REPEAT_S = 60.0


def _full_line(p: dict, told: dict[str, tuple[int, float]], now_s: float) -> str | None:
    """The line that says a pool's backing folder is full, when its writers
    got ENOSPC since the last such line (the first at once, then at most one
    a minute); None otherwise. The emulator itself keeps running: space freed
    in the backing folder makes writes succeed again."""
    n = p.get("refused_full", 0)
    seen, when = told.get(p["pool"], (0, float("-inf")))
    if n <= seen or (seen and now_s - when < FULL_REPEAT_S):
        return None
    told[p["pool"]] = (n, now_s)
    return (f"emulate: the backing folder {p['backing']} is full — {_writes(n)} refused with ENOSPC (No space left on "
            f"device) so far; the volume on {p['mount']} stays mounted and its writers get ENOSPC until space is freed there")


def _writes(n: int) -> str:
    return f"{n:,} write{'' if n == 1 else 's'}"


@app.command("emulate")
def emulate_cmd(
    scenario: Optional[Path] = typer.Argument(None, help="Scenario file (TOML)."),
    config: Optional[str] = typer.Option(None, "--config", help="The config (deployment) to emulate."),
    pool: Optional[list[str]] = typer.Option(None, "--pool", help="Pool role to emulate (default: the data pool, else the first). Repeat with --backing/--mount to emulate several pools of one deployment; they share the host's limits."),
    backing: Optional[list[Path]] = typer.Option(None, "--backing", help="Folder that holds the volume's files (created, and marked as storlab's)."),
    mount: Optional[list[Path]] = typer.Option(None, "--mount", help="Empty folder to mount the emulated volume on."),
    initial_credits: Optional[float] = typer.Option(None, "--initial-credits", help="Start every bucket this percent full (default 100)."),
    ram: Optional[float] = typer.Option(None, "--ram", help="Model the instance's OS page cache of this many GiB inside the emulator (LRU): reads it holds cost nothing."),
    metrics: Optional[Path] = typer.Option(None, "--metrics", help="Write the CloudWatch-style series (JSON) to FILE every period."),
    metrics_port: Optional[int] = typer.Option(None, "--metrics-port", help="Serve the last period's metrics in Prometheus text format on 127.0.0.1:PORT."),
    period: float = typer.Option(60.0, "--period", help="Series period in seconds."),
    floor_us: Optional[str] = typer.Option(None, "--floor-us", help="Microseconds taken off each modelled completion: FUSE's own round trip on this machine (default 0), or auto: calibrated while mounted (the mean of probe reads through the mount, renewed every second)."),
    no_caps: bool = typer.Option(False, "--no-caps", help="Pass-through only: no caps, no latency (to measure the emulator's overhead)."),
    no_give_back: bool = typer.Option(False, "--no-give-back", help="With --ram, answer an fsync at the modelled time even after buffered writes, instead of giving back the FUSE round trips those writes took (to measure what giving back does)."),
    nonempty: bool = typer.Option(False, "--nonempty", help="Mount even over a folder that has files (they are hidden while mounted)."),
    adopt_backing: bool = typer.Option(False, "--adopt-backing", help="Use a backing folder with files that storlab did not create."),
    seed: int = typer.Option(1, "--seed", help="Seed of the latency draws."),
    threads: int = typer.Option(4, "--threads", max=COUNT_MAX, help="FUSE request threads per mount."),
    nice: Optional[int] = typer.Option(None, "--nice", help="The emulator's scheduling priority (Linux nice, -20 to 19; default: as started, usually 0, an even share of the vCPUs with the database). -20 serves the emulated volume's I/O ahead of the database's own processes, as a cloud volume is served off the host's vCPUs; raising a priority needs root (CAP_SYS_NICE), else the emulator says so and runs as started."),
    realtime: Optional[int] = typer.Option(None, "--realtime", help="Run the emulator's threads in Linux's real-time class (SCHED_FIFO) at this priority, 1 to 99 (1 is enough: the database runs in the normal class): a request or a paced reply then takes a vCPU from the database at once, as a cloud volume's interrupt would, instead of waiting for its share. Needs root, else the emulator says so and runs as started."),
    ready_file: Optional[Path] = typer.Option(None, "--ready-file", help="Write FILE once every pool is mounted (for scripts)."),
    json_out: bool = typer.Option(False, "--json", help="Print the session's run record (engine emulate, with its series) as JSON when stopped."),
    unmount: Optional[Path] = typer.Option(None, "--unmount", help="Clear an emulated volume mounted at DIR (also a stale one after a crash) and exit."),
    catalog: Optional[list[Path]] = typer.Option(None, "--catalog", help="Extra catalog file or folder (repeatable)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Vendor rules as they stood on this day (YYYY-MM-DD), in place of the scenario's as_of; prices stay today's."),
) -> None:
    """Emulate a modelled cloud volume on a folder, in real time, for a real database, fio or your application."""
    if unmount is not None:
        was = api.emulate_unmount(unmount)
        print(f"{unmount}: {'unmounted' if was else 'nothing mounted there'}", file=sys.stderr)
        return
    if scenario is None or config is None:
        raise StorlabError("emulate needs a SCENARIO and --config NAME (or --unmount DIR) — e.g. storlab emulate examples/aws-t3-gp2-one-vs-five.toml --config one-100gib --backing /srv/vol --mount /mnt/vol")
    backing = backing or []
    mount = mount or []
    if not backing or not mount:
        raise StorlabError("--backing DIR and --mount DIR are required — the folder that holds the data and the empty folder to mount on")
    if len(backing) != len(mount) or (pool and len(pool) != len(mount)):
        raise StorlabError(f"--pool, --backing and --mount pair up in order: got {len(pool or [])} --pool, {len(backing)} --backing, {len(mount)} --mount")
    if initial_credits is not None and not 0 <= initial_credits <= 100:
        raise StorlabError(f"--initial-credits {initial_credits}: a percentage from 0 to 100 — e.g. 50")
    if not 0 < period < 1e9:
        raise StorlabError(f"--period {period}: seconds, positive and finite — e.g. 60")
    if ram is not None and not 0 < ram < 1e6:
        raise StorlabError(f"--ram {ram}: GiB of page cache, positive and finite — e.g. 8")
    if not 1 <= threads <= 1024:
        raise StorlabError(f"--threads {threads}: FUSE request threads per mount, 1 to 1024 — nearest valid value {max(1, min(1024, threads))}")
    floor: float | None = 0.0
    if floor_us is not None and floor_us.strip().lower() == "auto":
        floor = None  # calibrated by the emulator
    elif floor_us is not None:
        try:
            floor = float(floor_us)
        except ValueError:
            floor = -1.0
        if not floor >= 0:
            raise StorlabError(f"--floor-us {floor_us}: microseconds, 0 or more, or auto — e.g. 50")
    if nice is not None and not -20 <= nice <= 19:
        raise StorlabError(f"--nice {nice}: a Linux nice value from -20 (highest priority) to 19 — e.g. {max(-20, min(19, nice))}")
    if realtime is not None and not 1 <= realtime <= 99:
        raise StorlabError(f"--realtime {realtime}: a SCHED_FIFO priority from 1 to 99 — e.g. {max(1, min(99, realtime))}")
    if realtime is not None and nice is not None:
        raise StorlabError("--nice and --realtime: give one (a real-time thread has no nice value)")
    if metrics_port is not None and not 0 <= metrics_port <= 65535:
        raise StorlabError(f"--metrics-port {metrics_port}: a TCP port from 0 to 65535 — e.g. 9101")
    roles = list(pool) if pool else [None] * len(mount)
    targets = [(r, str(b.resolve()), str(m.resolve())) for r, b, m in zip(roles, backing, mount)]
    options = api.EmulateOptions(
        initial_credits_pct=initial_credits,
        ram_bytes=int(ram * (1 << 30)) if ram else None,
        metrics_file=str(metrics.resolve()) if metrics else None,
        metrics_port=metrics_port,
        period_s=period,
        seed=seed,
        floor_us=floor,
        unpaced=no_caps,
        nonempty=nonempty,
        adopt_backing=adopt_backing,
        threads=threads,
        give_back=not no_give_back,
    )

    stopped_by: list[int] = []

    def _stop(signum, frame):
        stopped_by.append(signum)
        raise KeyboardInterrupt

    # Ctrl-C, SIGTERM and SIGHUP all end the run the same way: unmount, then
    # exit. SIGINT too when started from a background job, whose shell set
    # it to be ignored (Python then leaves it ignored).
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)
    tty = sys.stderr.isatty()
    priority = _set_priority(nice, realtime)
    # Per pool: refusals already reported, and when.
    full_told: dict[str, tuple[int, float]] = {}

    def status(s: dict) -> None:
        for p in s["pools"]:
            line = _full_line(p, full_told, s["elapsed_s"])
            if line:
                print(("\n" if tty else "") + line, file=sys.stderr, flush=True)
        if s.get("mounted"):
            where = ", ".join(f"{p['pool']} on {p['mount']}" for p in s["pools"])
            extra = f"; metrics on http://127.0.0.1:{s['metrics_port']}/metrics" if s.get("metrics_port") else ""
            print(f"emulating {config} of {scenario}: {where}{extra} ({priority}) — Ctrl-C to stop", file=sys.stderr, flush=True)
            if ready_file:
                # Whole or not at all: a script polling for the file never
                # reads it half written.
                write_atomically(ready_file, json.dumps(s) + "\n", "the ready file")
        elif tty:
            print("\r" + _status_line(s)[:200].ljust(120), end="", file=sys.stderr, flush=True)

    summary = api.emulate(scenario, config, targets, options, catalog=catalog, status=status, as_of=as_of)
    if tty:
        print(file=sys.stderr)
    how = "calibrated" if summary.get("floor_calibrated") else "given"
    given = ""
    if summary.get("fsyncs_given_back"):
        given = (f"; {summary['fsyncs_given_back']:,} fsyncs answered {summary['fsync_given_back_s']:.1f} s earlier "
                 "in all for their buffered writes' round trips")
    full = ""
    if summary.get("refused_full"):
        full = f"; {_writes(summary['refused_full'])} refused with ENOSPC: the backing folder was full"
    print(f"unmounted after {summary['elapsed_s']:.0f} s (floor {summary.get('floor_us', 0):.0f} µs, {how}{given}{full})", file=sys.stderr)
    if json_out:
        emit(summary, True, False, lambda: "", lambda: None)
    if stopped_by:
        # Stopped by a signal, as every verb: 130 for Ctrl-C, 143 for
        # SIGTERM, 129 for SIGHUP; the summary above is whole.
        raise typer.Exit(128 + stopped_by[0])
