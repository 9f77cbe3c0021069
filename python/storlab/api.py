"""The library API behind the CLI: load a catalog, compute a scenario's
limits. Every record carries schema_version, the tool's version and git sha
and its resolved inputs."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from storlab import _native, emulated
from storlab.calibrate import cache_suspects, flush_probe, machine_overlay
from storlab.catalog import dated_catalog, open_catalog, read_catalog_files, read_scenario
from storlab.cluster import ray_cluster
from storlab.db.runner import bench_db
from storlab.errors import ScenarioError, StorlabError
from storlab.files import write_atomically
from storlab.host import PROFILES, finish_record, host_info, tool_info
from storlab.units import parse_size

__all__ = ["EmulateOptions", "advise", "bench_db", "bench_disk", "catalog_entry", "check_record", "emulate",
           "emulate_unmount", "limits", "load_catalog", "measured_demand", "record_schema", "simulate", "tool_info"]


def load_catalog(extra: list[str | os.PathLike] | None = None) -> dict[str, Any]:
    """The whole catalog (devices, hosts, prices, sources, regions) as plain data."""
    return json.loads(open_catalog(extra)[0].to_json())


def catalog_entry(entry_id: str, extra: list[str | os.PathLike] | None = None) -> dict[str, Any]:
    """One device or host with its prices and sources."""
    return open_catalog(extra)[0].entry(entry_id)


def limits(
    scenario: str | os.PathLike,
    catalog: list[str | os.PathLike] | None = None,
    at_iops: float | None = None,
    at_mb_s: float | None = None,
    as_of: str | None = None,
) -> dict[str, Any]:
    """The `storlab limits` record of a scenario file (DESIGN.md contract);
    with `at_iops` or `at_mb_s` (MB = 10^6 bytes), each config's `at_load`:
    how long each bucket lasts at that load and the rate after. `as_of`
    applies the vendor rules of that day."""
    name, text = read_scenario(scenario)
    cat, files = open_catalog(catalog)
    cat = dated_catalog(cat, as_of)
    inputs: dict[str, Any] = {"scenario": name, "catalog_files": files}
    if as_of is not None:
        inputs["as_of"] = as_of
    if at_iops is None and at_mb_s is None:
        return finish_record(cat.limits(name, text), None, inputs)
    if at_iops is not None and at_mb_s is not None:
        raise ScenarioError("--at-iops and --at-mb-s both set — give one load")
    for flag, v in (("--at-iops", at_iops), ("--at-mb-s", at_mb_s)):
        if v is not None and not v > 0:
            raise ScenarioError(f"{flag} {v}: the load must be positive — e.g. 3000")
    at_bytes_s = None if at_mb_s is None else at_mb_s * 1e6
    record = _native.limits_at(cat, name, text, at_iops=at_iops, at_bytes_s=at_bytes_s)
    inputs.update({"at_iops": at_iops, "at_mb_s": at_mb_s})
    return finish_record(record, None, inputs)


def simulate(
    scenario: str | os.PathLike,
    catalog: list[str | os.PathLike] | None = None,
    period_s: float | None = None,
    progress=None,
    config: str | None = None,
    threads: int | None = None,
    iodepth: int | None = None,
    duration_s: float | None = None,
    profile: str | None = None,
    as_of: str | None = None,
    repeats: int | None = None,
    accept_suspect: bool | None = None,
) -> dict[str, Any]:
    """The run record of simulating the scenario's workload on every config
    (DESIGN.md "Run records"). `progress(fraction)` is called now and then.
    `config` runs only that config; `threads`, `iodepth` and `duration_s`
    replace every job's numjobs, iodepth and simulated time; `profile`
    replaces the workload with a CrystalDiskMark preset; `as_of` applies the
    vendor rules of that day; `repeats` runs each VU count of a database
    workload with that many seeds (the mean, and the spread as `_stdev`);
    `accept_suspect` simulates a suspect database profile with a warning
    in the record rather than refuse it (docs/dbmodel.md, "Profile health")."""
    name, text = read_scenario(scenario)
    cat, files = open_catalog(catalog)
    cat = dated_catalog(cat, as_of)
    if period_s is not None and not period_s > 0:
        raise ScenarioError(f"--period {period_s}: the period must be positive — e.g. 60")
    overrides = {"config": config, "threads": threads, "iodepth": iodepth, "duration_s": duration_s, "profile": profile,
                 "repeats": repeats, "accept_suspect": accept_suspect or None}
    raw = cat.simulate_json(name, text, str(Path(name).resolve().parent), period_s=period_s, progress=progress,
                            profiles_dir=str(PROFILES), **overrides)
    record = json.loads(raw)
    alarms = _native.alarms(name, text, raw)
    if alarms:
        record["alarms"] = alarms
    # A database workload says which profile it read and what it assumed.
    inputs: dict[str, Any] = {"scenario": name, "catalog_files": files, **(record.pop("inputs", None) or {})}
    inputs.update({k: v for k, v in overrides.items() if v is not None})
    return finish_record(record, {}, inputs)


def advise(
    question: str | os.PathLike,
    catalog: list[str | os.PathLike] | None = None,
    *,
    top: int | None = None,
    threads: int | None = None,
    progress=None,
    as_of: str | None = None,
    from_cloudwatch: str | os.PathLike | None = None,
    ray: str | None = None,
    accept_suspect: bool = False,
    explain: str | None = None,
) -> dict[str, Any]:
    """The advice for a question file (DESIGN.md "storlab advise"): the
    cheapest deployments that meet its `[goal]`, the cost/throughput front,
    why cheaper ones fail, and a finding for each current `[configs.*]`.
    `progress(done, total)` counts the simulator's runs; `as_of` applies the
    vendor rules of that day; `from_cloudwatch` (CloudWatch get-metric-data
    JSON or CSV) gives the workload and goal as the demand it measured;
    `ray` (an address, or `local`) runs the screen and the simulations on a
    Ray cluster, with the same answer; `accept_suspect` uses a suspect
    database profile with a warning rather than refuse it; `explain` (host
    ids or patterns, comma-separated) adds each candidate on those hosts
    with its fate under `explained`."""
    name, text = read_scenario(question)
    cat, files = open_catalog(catalog)
    cat = dated_catalog(cat, as_of)
    demand = None if from_cloudwatch is None else measured_demand(from_cloudwatch)
    demand_json = None if demand is None else json.dumps(demand)
    here = Path(name).resolve().parent

    def run(remote=None) -> str:
        return cat.advise_json(name, text, str(here), str(PROFILES), top=top, threads=threads, demand_json=demand_json,
                               progress=progress, remote=remote, accept_suspect=accept_suspect, explain=explain)

    if ray is None:
        raw = run()
    else:
        with ray_cluster(ray, file=name, text=text, question_dir=here, files=read_catalog_files(catalog), as_of=as_of,
                         demand_json=demand_json) as cluster:
            raw = run(cluster)
    record = json.loads(raw)
    inputs: dict[str, Any] = {"question": name, "catalog_files": files}
    if top is not None:
        inputs["top"] = top
    if ray is not None:
        inputs["ray"] = ray
    if accept_suspect:
        inputs["accept_suspect"] = True
    return finish_record(record, None, inputs)


# CloudWatch's I/O metrics: EBS volumes report Sum per period (VolumeReadOps
# and VolumeReadBytes, "Count" and "Bytes"); RDS instances report per-second
# rates (ReadIOPS, "Count/Second"; ReadThroughput, "Bytes/Second").
_CW_READ_OPS = ("VolumeReadOps", "ReadIOPS")
_CW_WRITE_OPS = ("VolumeWriteOps", "WriteIOPS")
_CW_READ_BYTES = ("VolumeReadBytes", "ReadThroughput")
_CW_WRITE_BYTES = ("VolumeWriteBytes", "WriteThroughput")


def measured_demand(path: str | os.PathLike) -> dict[str, Any]:
    """The I/O demand in a CloudWatch export (read by storlab import's
    reader): IOPS at its busiest period (the Maximum statistic over the
    lookback, as AWS Compute Optimizer takes it), the MB/s and read share of
    that period, and the mean I/O size."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ScenarioError(f"--from-cloudwatch {p}: cannot read it ({e.strerror or e})") from None
    rec = json.loads(_native.import_record_json(str(p), data))
    rates: dict[str, dict[str, float]] = {}
    periods: set[float] = set()
    for s in rec.get("series") or []:
        metric, unit, period = s.get("metric"), s.get("unit", ""), float(s.get("period_s") or 0)
        if metric not in _CW_READ_OPS + _CW_WRITE_OPS + _CW_READ_BYTES + _CW_WRITE_BYTES:
            continue
        per_second = unit.endswith("/Second")
        if not per_second and period <= 0:
            raise ScenarioError(f"--from-cloudwatch {p}: {metric} has no period — export it with --period")
        periods.add(period)
        key = "r_ops" if metric in _CW_READ_OPS else "w_ops" if metric in _CW_WRITE_OPS else \
            "r_bytes" if metric in _CW_READ_BYTES else "w_bytes"
        out = rates.setdefault(key, {})
        for t, v in zip(s.get("timestamps") or [], s.get("values") or []):
            out[t] = out.get(t, 0.0) + (v if per_second else v / period)
    if "r_ops" not in rates and "w_ops" not in rates:
        raise ScenarioError(f"--from-cloudwatch {p}: no I/O metrics — give VolumeReadOps and VolumeWriteOps (EBS) or "
                            "ReadIOPS and WriteIOPS (RDS)")
    times = sorted(set(rates.get("r_ops", {})) | set(rates.get("w_ops", {})))
    iops = {t: rates.get("r_ops", {}).get(t, 0.0) + rates.get("w_ops", {}).get(t, 0.0) for t in times}
    peak = max(times, key=lambda t: (iops[t], t))
    total_ops = sum(iops.values())
    total_bytes = sum(rates.get("r_bytes", {}).values()) + sum(rates.get("w_bytes", {}).values())
    reads = sum(rates.get("r_ops", {}).values())
    period = max(periods) if periods else 60.0
    peak_bytes = rates.get("r_bytes", {}).get(peak, 0.0) + rates.get("w_bytes", {}).get(peak, 0.0)
    return {
        "source": str(p),
        "iops": round(iops[peak], 3),
        "mb_s": round(peak_bytes / 1e6, 3),
        "read_share": reads / total_ops if total_ops > 0 else 1.0,
        # Without byte metrics, 16 KiB: the size EBS counts an I/O up to.
        "io_bytes": total_bytes / total_ops if total_ops > 0 and total_bytes > 0 else 16384.0,
        "statistic": f"Maximum of {len(times)} periods of {period:g} s",
        "period_s": period,
        "lookback_s": len(times) * period,
        "metrics": sorted({s.get("metric") for s in rec.get("series") or [] if s.get("metric")}),
    }


def bench_disk(
    path: str | os.PathLike,
    profile: str | None = None,
    job: str | os.PathLike | None = None,
    size: str | None = None,
    engine: str = "io_uring",
    runs: int | None = None,
    runtime_s: float | None = None,
    interval_s: float | None = None,
    direct: bool = True,
    seed: int = 1,
    progress: Callable[[int, int], object] | None = None,
    *,
    emulate: str | None = None,
    calibrate_out: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """Measures a CrystalDiskMark preset (`profile`) or a fio job file (`job`)
    on a test file storlab creates inside `path` and removes afterwards.
    Returns a run record (`"engine": "measure"`), results in the same
    columns as `simulate`'s.

    `emulate` ("SCENARIO:CONFIG") measures an emulated volume of that
    deployment instead, mounted under `path` for the run (`"engine":
    "emulate"`). `calibrate_out` writes the disk measured as a catalog
    overlay FILE (a `local/` device with the measured caps, the QD1 latency
    fitted and the durable write timed, and this machine as a host);
    `inputs.calibration` says what was written, or why it was refused."""
    spec = _disk_job(profile, job, size, runs, runtime_s, interval_s)
    with contextlib.ExitStack() as stack:
        where = Path(path)
        if emulate:
            where = stack.enter_context(emulated.mounted(emulate, where, [None]))[0]
        rec = _measure_disk(where, spec, engine, direct, seed, progress)
        flush = flush_probe(where) if calibrate_out is not None and not rec["interrupted"] else None
    if emulate:
        rec = emulated.stamp(rec, emulate)
    if calibrate_out is not None and not rec["interrupted"]:
        try:
            text, summary = machine_overlay(rec, "this run", flush)
        except ScenarioError as e:
            # The measurement is kept; the caller says why there is no overlay.
            rec["inputs"]["calibration"] = {"file": str(calibrate_out), "refused": str(e)}
        else:
            write_atomically(calibrate_out, text)
            rec["inputs"]["calibration"] = {"file": str(calibrate_out), **summary}
    return rec


def _disk_job(profile: str | None, job: str | os.PathLike | None, size: str | None, runs: int | None,
              runtime_s: float | None, interval_s: float | None) -> dict[str, Any]:
    """`bench disk`'s arguments checked, before anything is mounted or written."""
    if profile and job:
        raise StorlabError("give --profile or --job, not both")
    if not profile and not job:
        profile = "cdm-default"
    fio_name = fio_text = None
    if job:
        p = Path(job)
        try:
            fio_name, fio_text = str(p), p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ScenarioError(f"{p}: cannot read the job file ({e.__class__.__name__}: {e})") from e
    if runs is not None and runs < 1:
        raise StorlabError(f"--runs {runs} — nearest valid value 1")
    for name, v in (("--runtime", runtime_s), ("--interval", interval_s)):
        if v is not None and v < 0:
            raise StorlabError(f"{name} {v} must not be negative")
    # Without --size: presets measure a 1 GiB file, a job file its jobs' size=.
    size_bytes = parse_size(size) if size is not None else (None if job else 1 << 30)
    return {"size_bytes": size_bytes, "profile": profile, "job_name": fio_name, "job_text": fio_text,
            "runs": runs, "runtime_s": runtime_s, "interval_s": interval_s}


def _measure_disk(path: Path, job: dict[str, Any], engine: str, direct: bool, seed: int,
                  progress: Callable[[int, int], object] | None) -> dict[str, Any]:
    record = json.loads(_native.bench_disk_json(str(path), engine=engine, direct=direct, seed=seed, progress=progress, **job))
    out = finish_record(record, host_info(path), {
        "path": str(Path(path).resolve()), "profile": job["profile"], "job": job["job_name"], "size_bytes": record["file_bytes"],
        "ioengine": engine, "runs": job["runs"], "runtime_s": job["runtime_s"], "interval_s": job["interval_s"]})
    out["warnings"] = out.get("warnings", []) + cache_suspects(out)
    return out


def record_schema() -> dict[str, Any]:
    """The JSON schema every run record follows (docs/record.schema.json)."""
    return json.loads(_native.record_schema_json())


def check_record(record: dict[str, Any] | str, name: str = "record") -> dict[str, Any]:
    """Reads a run record back through the one record type, raising
    ScenarioError naming the first field that does not fit."""
    text = record if isinstance(record, str) else json.dumps(record)
    return _native.record_check(name, text)


@dataclass(frozen=True)
class EmulateOptions:
    """What `emulate` takes besides the pools (storlab-fuse's `Options`,
    docs/emulate.md); a field left as None takes the emulator's default."""

    #: Every bucket starts this percent full (100).
    initial_credits_pct: float | None = None
    #: The instance's OS page cache, modelled in the emulator (none).
    ram_bytes: int | None = None
    #: CloudWatch-style series rewritten every period.
    metrics_file: str | None = None
    #: The last period's metrics in Prometheus text on 127.0.0.1:PORT.
    metrics_port: int | None = None
    period_s: float | None = None
    seed: int | None = None
    #: Taken off each modelled completion, µs (None: calibrated while mounted).
    floor_us: float | None = None
    #: No caps and no latency: the pass-through alone.
    unpaced: bool | None = None
    nonempty: bool | None = None
    adopt_backing: bool | None = None
    #: FUSE request threads per mount.
    threads: int | None = None
    #: An fsync gives back its file's buffered writes' round trips.
    give_back: bool | None = None

    def to_json(self) -> str:
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None})


def emulate(
    scenario: str | os.PathLike,
    config: str,
    targets: list[tuple[str | None, str, str]],
    options: EmulateOptions | None = None,
    catalog: list[str | os.PathLike] | None = None,
    status: Callable[[dict[str, Any]], None] | None = None,
    as_of: str | None = None,
) -> dict[str, Any]:
    """Mounts the emulated pools of `config` (`targets`: role or None,
    backing folder, mount folder) and serves them until Ctrl-C (or a signal
    turned into KeyboardInterrupt); returns the session's run record
    (`engine = "emulate"`) with its CloudWatch-style series. `status(dict)` is called once a second."""
    name, text = read_scenario(scenario)
    cat, files = open_catalog(catalog)
    cat = dated_catalog(cat, as_of)
    cb = (lambda s: status(json.loads(s))) if status else None
    opts = (options or EmulateOptions()).to_json()
    record = json.loads(_native.emulate_json(cat, name, text, config, targets, opts, cb))
    return finish_record(record, None, {"scenario": name, "config": config, "catalog_files": files})


def emulate_unmount(path: str | os.PathLike) -> bool:
    """Clears an emulated volume mounted at `path` (stale or live)."""
    return _native.emulate_unmount(str(Path(path).resolve()))
