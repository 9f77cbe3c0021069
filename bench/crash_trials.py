"""Nothing lost under faults: crash trials of storlab.db.crashcheck, many
per engine. Each trial copies a loaded one-warehouse server (PostgreSQL or
MariaDB, shut down cleanly) into a fresh backing folder, mounts it with
`storlab emulate`, starts the server there and runs TPC-C with
`bench db --commit-log` for a few seconds; then the emulator gets SIGKILL,
what is left of the server is killed, `storlab emulate --unmount` clears the
dead mount, a new emulator mounts the same backing folder and the server
recovers. Counted per engine: trials, acknowledged New-Orders looked up
after recovery, those lost (must be 0), mounts left behind (must be 0),
trials whose `bench db` said the database's volume went away, and the
seconds a trial takes.

The raw results replace the entry crash_trials of bench/results.json; each engine adds a
row to bench/RESULTS.md whose ratio is the share of acknowledged New-Orders
found after recovery (median over the trials, with the lowest and highest),
so 1.000 is the only passing value.

    python bench/crash_trials.py [--engine postgresql|mariadb|both] [--trials 100]
        [--seconds 3] [--minutes M] [--kind emulator|bench-emulate]

`--kind bench-emulate` kills instead the emulator that `bench db --db
managed-ENGINE --emulate` mounted for its own run: bench db must end by
itself, name the lost volume, keep what it measured (its JSON record on
stdout) and leave nothing mounted, running or written under its --dir.
That volume is the run's scratch (bench db removes it after every run), so
its commits cannot be looked up afterwards; the default kind checks them on
a kept backing folder. Its ratio is the share of trials that ended cleanly.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import host, median, record  # noqa: E402

from storlab.db import crashcheck  # noqa: E402


def trials(engine: str, n: int, seconds: float, minutes: float | None) -> dict:
    """Up to `n` emulator kills under `engine` (fewer when `minutes` run out
    first); every trial's figures, and the errors of trials that broke."""
    base = crashcheck.workdir()
    done: list[dict] = []
    broken: list[str] = []
    try:
        template = crashcheck.load_template(base, engine)
        t0 = time.monotonic()
        for k in range(n):
            if minutes is not None and time.monotonic() - t0 > minutes * 60:
                print(f"{engine}: stopping after {k} trials, past --minutes {minutes:g}", file=sys.stderr)
                break
            try:
                t = crashcheck.emulator_kill_trial(template, engine, seconds=seconds)
            except Exception as e:  # a trial that broke is reported, not hidden
                broken.append(f"trial {k + 1}: {e.__class__.__name__}: {e}"[:500])
                print(f"{engine} trial {k + 1}: BROKE: {broken[-1]}", file=sys.stderr)
                continue
            r = t.recovery
            said = t.bench.returncode == 1 and "the database's volume went away" in t.bench.stderr
            done.append({"seconds": round(t.seconds, 2), "acknowledged": r.acknowledged, "lost": len(r.missing),
                         "lost_keys": [list(x) for x in r.missing[:10]], "unfinished": r.unfinished,
                         "recovered": r.recovered, "mounts_left": t.mounts_left, "volume_went_away": said,
                         "bench_stderr": t.bench.stderr.strip()[-300:]})
            print(f"{engine} trial {k + 1}: {r.acknowledged} acknowledged, {len(r.missing)} lost, {t.mounts_left} mounts left, "
                  f"{'volume named' if said else 'VOLUME NOT NAMED'}, {t.seconds:.1f} s", file=sys.stderr)
    finally:
        crashcheck.clear(base)
    return {"trials": done, "broken": broken}


def bench_trials(engine: str, n: int, seconds: float, minutes: float | None) -> dict:
    """Up to `n` kills of bench db --emulate's own emulator under `engine`."""
    done: list[dict] = []
    broken: list[str] = []
    t0 = time.monotonic()
    for k in range(n):
        if minutes is not None and time.monotonic() - t0 > minutes * 60:
            print(f"{engine}: stopping after {k} trials, past --minutes {minutes:g}", file=sys.stderr)
            break
        try:
            t = crashcheck.bench_emulate_kill_trial(engine, seconds=seconds)
        except Exception as e:  # a trial that broke is reported, not hidden
            broken.append(f"trial {k + 1}: {e.__class__.__name__}: {e}"[:500])
            print(f"{engine} trial {k + 1}: BROKE: {broken[-1]}", file=sys.stderr)
            continue
        said = t.bench.returncode == 1 and "the database's volume went away" in t.bench.stderr
        try:
            kept = len(json.loads(t.bench.stdout)["results"]) > 0
        except (ValueError, KeyError, TypeError):
            kept = False
        clean = said and kept and t.mounts_left == 0 and t.processes_left == 0 and not t.files_left
        done.append({"seconds": round(t.seconds, 2), "acknowledged": t.acknowledged, "exit": t.bench.returncode,
                     "volume_went_away": said, "record_kept": kept, "mounts_left": t.mounts_left,
                     "processes_left": t.processes_left, "files_left": t.files_left[:10], "clean": clean,
                     "bench_stderr": t.bench.stderr.strip()[-300:]})
        print(f"{engine} trial {k + 1}: exit {t.bench.returncode}, {'volume named' if said else 'VOLUME NOT NAMED'}, "
              f"{'record kept' if kept else 'RECORD LOST'}, {t.mounts_left} mounts, {t.processes_left} processes, "
              f"{len(t.files_left)} files left, {t.acknowledged} New-Orders acknowledged, {t.seconds:.1f} s", file=sys.stderr)
    return {"trials": done, "broken": broken}


def report_bench(engine: str, res: dict, command: str, doc: dict) -> None:
    ts = res["trials"]
    clean = [1.0 if t["clean"] else 0.0 for t in ts]
    s = {"engine": engine, "trials": len(ts), "broken": len(res["broken"]), "clean": int(sum(clean)),
         "acknowledged": sum(t["acknowledged"] for t in ts), "mounts_left": sum(t["mounts_left"] for t in ts),
         "processes_left": sum(t["processes_left"] for t in ts), "files_left": sum(len(t["files_left"]) for t in ts),
         "volume_went_away": sum(t["volume_went_away"] for t in ts), "record_kept": sum(t["record_kept"] for t in ts),
         "median_s": median([t["seconds"] for t in ts]) if ts else 0.0}
    doc["engines"][engine] = {**s, **res}
    print(f"{engine}: {s['trials']} trials ({s['broken']} broke), {s['clean']} ended cleanly; volume named in "
          f"{s['volume_went_away']}, record kept in {s['record_kept']}; {s['mounts_left']} mounts, {s['processes_left']} "
          f"processes, {s['files_left']} files left; {s['median_s']:.1f} s per trial (median)")
    if ts:
        broke = f" ({s['broken']} broke)" if s["broken"] else ""
        record("crash_trials_bench_emulate",
               f"crash trials, bench db --emulate, {engine}: its own emulator SIGKILLed mid-TPC-C — {s['trials']} trials{broke}, "
               f"bench db named the lost volume in {s['volume_went_away']} and kept its record in {s['record_kept']}, "
               f"{s['mounts_left']} mounts, {s['processes_left']} processes and {s['files_left']} files left, "
               f"{s['acknowledged']:,} New-Orders acknowledged before the kills (the scratch volume is removed, so not looked up), "
               f"median {s['median_s']:.1f} s a trial; ratio: trials that ended cleanly (`{command}`)",
               median(clean), min(clean), max(clean), doc)


def summary(engine: str, res: dict) -> dict:
    ts = res["trials"]
    return {
        "engine": engine,
        "trials": len(ts),
        "broken": len(res["broken"]),
        "acknowledged": sum(t["acknowledged"] for t in ts),
        "lost": sum(t["lost"] for t in ts),
        "unfinished": sum(t["unfinished"] for t in ts),
        "not_recovered": sum(not t["recovered"] for t in ts),
        "mounts_left": sum(t["mounts_left"] for t in ts),
        "volume_went_away": sum(t["volume_went_away"] for t in ts),
        "median_s": median([t["seconds"] for t in ts]) if ts else 0.0,
        # Per trial: the share of its acknowledged New-Orders found after recovery.
        "found": [1 - t["lost"] / t["acknowledged"] if t["acknowledged"] else 0.0 for t in ts],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="both", choices=["postgresql", "mariadb", "both"])
    ap.add_argument("--trials", type=int, default=100, help="Trials per engine")
    ap.add_argument("--seconds", type=float, default=3.0, help="TPC-C before each kill (s), once 30 New-Orders are acknowledged")
    ap.add_argument("--minutes", type=float, default=None, help="Start no trial of an engine after this many minutes of its trials")
    ap.add_argument("--kind", default="emulator", choices=["emulator", "bench-emulate"],
                    help="emulator: kill `storlab emulate` under a server and recover on the kept backing folder; "
                         "bench-emulate: kill the emulator bench db --emulate mounted for its run")
    a = ap.parse_args()
    if a.trials < 1:
        ap.error(f"--trials {a.trials}: at least 1")
    command = "python bench/crash_trials.py " + shlex.join(sys.argv[1:])
    engines = list(crashcheck.ENGINES) if a.engine == "both" else [a.engine]
    doc: dict = {"bench": "crash_trials", "command": command, "host": host(), "seconds_before_kill": a.seconds, "engines": {}}
    if a.kind == "bench-emulate":
        doc["kind"] = "bench-emulate"
        for engine in engines:
            report_bench(engine, bench_trials(engine, a.trials, a.seconds, a.minutes), command, doc)
        return
    for engine in engines:
        res = trials(engine, a.trials, a.seconds, a.minutes)
        s = summary(engine, res)
        doc["engines"][engine] = {**{k: v for k, v in s.items() if k != "found"}, **res}
        print(f"{engine}: {s['trials']} trials ({s['broken']} broke), {s['acknowledged']:,} acknowledged New-Orders checked, "
              f"{s['lost']} lost, {s['mounts_left']} mounts left, volume named by bench db in {s['volume_went_away']}, "
              f"{s['median_s']:.1f} s per trial (median)")
        for b in res["broken"]:
            print(f"  {b}")
        if s["trials"]:
            found = s["found"]
            broke = f" ({s['broken']} broke)" if s["broken"] else ""
            record("crash_trials",
                   f"crash trials, {engine}: emulator SIGKILL mid-TPC-C, remount, recovery — {s['trials']} trials{broke}, "
                   f"{s['acknowledged']:,} acknowledged New-Orders checked, {s['lost']} lost, {s['mounts_left']} mounts left, "
                   f"bench db named the lost volume in {s['volume_went_away']}, median {s['median_s']:.1f} s a trial; "
                   f"ratio: New-Orders found / acknowledged per trial (`{command}`)",
                   median(found), min(found), max(found), doc)


if __name__ == "__main__":
    main()
