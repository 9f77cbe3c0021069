"""Calibration: fit a device's latency model to a measurement.

The simulator draws each I/O's service time from a log-normal fixed by its
median and 99th percentile (catalog `[[latency]]`); the queueing that caps
create comes on top. At queue depth 1 nothing queues and no cap binds, so a
QD1 job's measured latency percentiles *are* the service time's: the fit is
the measured p50 and p99 of the QD1 read and write jobs. Vendor caps stay as
they are. The result is a catalog overlay (load it with `--catalog FILE`)
whose entry says where its numbers came from.

Three inputs: a storlab run record (`--json`), fio's JSON output
(`--output-format=json`) and CrystalDiskMark's text export. CrystalDiskMark
gives only a mean latency; for it the median is the mean divided by the
log-normal's mean-to-median ratio exp(σ²/2), σ taken from the device's
current p99/median, and p99 keeps that ratio.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import platform
import re
import shutil
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from storlab import _native
from storlab.catalog import open_catalog, read_scenario
from storlab.errors import ScenarioError
from storlab.host import machine

Z99 = 2.3263478740408408  # the standard normal's 99th percentile


class Job(dict):
    """One measured job: name, read (bool), qd (outstanding I/Os), iops,
    bw_bytes_s, p50_us, p99_us (None when the source lacks them), mean_us."""


def _job(name: str, read: bool, qd: int, iops: float, bw: float, mean: float, p50: float | None, p99: float | None) -> Job:
    return Job(name=name, read=read, qd=qd, iops=iops, bw_bytes_s=bw, mean_us=mean, p50_us=p50, p99_us=p99)


def _windows(rec: dict[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """When each job ran, seconds from the run's start: `bench disk` records
    each repeat under `runs`, `simulate` a job's `start_s` and `runtime_s`."""
    spans: dict[str, list[tuple[float, float]]] = {}
    for j in rec.get("runs") or []:
        for x in j.get("runs") or []:
            if isinstance(x, dict) and "start_s" in x and "elapsed_s" in x:
                spans.setdefault(j.get("job", ""), []).append((x["start_s"], x["start_s"] + x["elapsed_s"]))
    if not spans:
        for r in rec["results"]:
            if r.get("start_s") is not None and r.get("runtime_s"):
                spans.setdefault(r["job"], []).append((r["start_s"], r["start_s"] + r["runtime_s"]))
    return spans


def _from_record(rec: dict[str, Any]) -> list[Job]:
    spans = _windows(rec)
    out = []
    for r in rec["results"]:
        if "iops" not in r:
            continue
        read = r.get("read_iops", 0) >= r.get("write_iops", 0)
        j = _job(r["job"], read, int(r.get("outstanding") or 0), r["iops"], r["bw_bytes_s"],
                 r["lat_mean_us"], r.get("lat_p50_us"), r.get("lat_p99_us"))
        # Jobs without stonewall run at once (as in fio): a QD1 job beside
        # others is not at queue depth 1 on the device.
        j["alongside"] = sorted(o for o, ws in spans.items() if o != r["job"] and any(
            a0 < b1 - 1e-3 and b0 < a1 - 1e-3 for a0, a1 in spans.get(r["job"], []) for b0, b1 in ws))
        out.append(j)
    return out


def read_result(path: str | os.PathLike) -> tuple[str, list[Job]]:
    """The measured jobs of RESULT and its kind: `record` for a storlab run
    record, else the tool whose file it is (`cdm`, `fio`, ...), read by the
    Rust importer (storlab import). Mixed and sync-only results are left out:
    the fit wants one direction at a time."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ScenarioError(f"{p}: cannot read the result ({e.__class__.__name__}: {e})") from None
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        return "record", _from_record(doc)
    rec = json.loads(_native.import_record_json(str(p), data))
    source = (rec.get("host_info") or {}).get("source", "import")
    kind = {"CrystalDiskMark": "cdm"}.get(source, source)
    rec["results"] = [r for r in rec["results"] if "iops" in r and (r["read_iops"] > 0) != (r["write_iops"] > 0)]
    return kind, _from_record(rec)


def _qd1(jobs: list[Job], read: bool) -> Job | None:
    """The QD1 job that best shows the service time: small random first."""
    cands = [j for j in jobs if j["qd"] == 1 and j["read"] == read and j["iops"] > 0 and j["mean_us"] > 0]
    cands.sort(key=lambda j: (not j["name"].upper().startswith("RND"), j["bw_bytes_s"] / max(j["iops"], 1e-9)))
    return cands[0] if cands else None


def fit(jobs: list[Job], current: dict[str, float] | None = None) -> tuple[dict[str, float], list[str]]:
    """Median and p99 of read and write service time (µs) from the QD1 jobs,
    and the names of the jobs used. `current` (the device's present
    `read_median_us`, ...) fills a direction without a QD1 job and gives σ
    where only a mean was measured."""
    current = current or {}
    out: dict[str, float] = {}
    used = []
    qd1 = [j for j in jobs if j["qd"] == 1 and j["iops"] > 0]
    if qd1 and all(j["mean_us"] <= 0 for j in qd1):
        raise ScenarioError(f"the queue-depth-1 jobs ({', '.join(j['name'] for j in qd1)}) carry no latency (CrystalDiskMark "
                            "5 and 6 exports print none) — calibrate needs a measured latency: a CrystalDiskMark 7/8 "
                            "export, fio JSON or a storlab record")
    if not any(j["qd"] == 1 and j["iops"] > 0 and j["mean_us"] > 0 for j in jobs):
        raise ScenarioError("no queue-depth-1 job with a latency in the result, so there is nothing to calibrate "
                            "(an overlay would restate the catalog) — run e.g. RND4K-Q1T1-read and RND4K-Q1T1-write")
    for d in ("read", "write"):
        j = _qd1(jobs, d == "read")
        if j is None:
            if f"{d}_median_us" not in current:
                raise ScenarioError(f"no queue-depth-1 {d} job in the result — run e.g. RND4K-Q1T1-{d}")
            out[f"{d}_median_us"], out[f"{d}_p99_us"] = current[f"{d}_median_us"], current[f"{d}_p99_us"]
            continue
        if j.get("alongside"):
            raise ScenarioError(f"{j['name']} ran at the same time as {', '.join(j['alongside'])} (jobs without stonewall "
                                "run at once, as in fio), so its latency is not the device's at queue depth 1 — "
                                "add stonewall to the job file's [global] section and measure again")
        used.append(j["name"])
        if j["p50_us"] and j["p99_us"]:
            med, p99 = j["p50_us"], max(j["p99_us"], j["p50_us"])
        else:
            ratio = current.get(f"{d}_p99_us", 5.0) / current.get(f"{d}_median_us", 1.0)
            sigma = math.log(max(ratio, 1.0)) / Z99
            med = j["mean_us"] / math.exp(sigma * sigma / 2)
            p99 = med * max(ratio, 1.0)
        out[f"{d}_median_us"], out[f"{d}_p99_us"] = round(med, 3), round(p99, 3)
        # The size term: a large QD1 job of the same direction (SEQ1M Q1T1)
        # beside the small one. Mean service time grows by the µs a MiB adds
        # beyond 4 KiB: (its mean − the small job's) over the bytes between.
        big = _qd1_large(jobs, d == "read")
        small_bytes = j["bw_bytes_s"] / max(j["iops"], 1e-9)
        if big is not None and not big.get("alongside"):
            big_bytes = big["bw_bytes_s"] / max(big["iops"], 1e-9)
            if big_bytes > small_bytes:
                per_mib = (big["mean_us"] - j["mean_us"]) / ((big_bytes - small_bytes) / MIB)
                out[f"{d}_us_per_mib"] = round(max(per_mib, 0.0), 3)
                used.append(big["name"])
        elif f"{d}_us_per_mib" in current:
            out[f"{d}_us_per_mib"] = current[f"{d}_us_per_mib"]
    _check_range(out, used)
    return out, used


# The catalog's range for a service time, µs (LATENCY_RANGE_US in
# storlab-model's catalog): what the overlay reader accepts.
LATENCY_RANGE_US = (0.01, 1e7)


def _check_range(lat: dict[str, float], used: list[str]) -> None:
    """Refuses a fit the overlay reader would refuse, naming the field, the
    jobs it came from and the nearest valid value: no overlay is written."""
    lo, hi = LATENCY_RANGE_US
    for k, v in lat.items():
        low = 0.0 if k.endswith("_per_mib") else lo
        if not (math.isfinite(v) and low <= v <= hi):
            nearest = hi if v > hi else low
            raise ScenarioError(f"{k}: {v:g} µs fitted from {', '.join(used) or 'the catalog'} lies outside "
                                f"[{low:g}, {hi:g}] µs (nearest valid value {nearest:g}) — the result's latency is not a "
                                "device's; check the file")


MIB = 1 << 20
# A QD1 job counts as large from 64 KiB an I/O: sequential transfers, where
# the time a byte takes shows beside the fixed cost of an I/O.
LARGE_IO_BYTES = 64 << 10


def _qd1_large(jobs: list[Job], read: bool) -> Job | None:
    """The QD1 job of the largest I/Os (at least 64 KiB) in one direction."""
    cands = [j for j in jobs if j["qd"] == 1 and j["read"] == read and j["iops"] > 0 and j["mean_us"] > 0
             and j["bw_bytes_s"] / j["iops"] >= LARGE_IO_BYTES]
    return max(cands, key=lambda j: j["bw_bytes_s"] / j["iops"]) if cands else None


FLUSH_FILE_BYTES = 16 << 20  # a WAL segment's size
FLUSH_WRITE_BYTES = 8192


def flush_probe(folder: str | os.PathLike, seconds: float = 3.0, max_writes: int = 20000) -> dict[str, float]:
    """A durable write as a database's log makes one: 8 KiB written into a
    preallocated 16 MiB file (a WAL segment), then `fdatasync`, one at a time
    — pg_test_fsync's "one 8kB write" test. Median and p99 of write + flush,
    µs. On a disk with a volatile write cache the flush is most of it; a
    plain O_DIRECT write job does not show it. The file is removed after."""
    fd, name = tempfile.mkstemp(prefix=".storlab-flush-", dir=str(folder))
    lat: list[float] = []
    try:
        zero = bytes(1 << 20)
        for _ in range(FLUSH_FILE_BYTES >> 20):
            os.write(fd, zero)
        os.fsync(fd)
        block = b"\x5a" * FLUSH_WRITE_BYTES
        slots = FLUSH_FILE_BYTES // FLUSH_WRITE_BYTES
        end = time.perf_counter() + seconds
        i = 0
        while i < max_writes and time.perf_counter() < end:
            t0 = time.perf_counter_ns()
            os.pwrite(fd, block, (i % slots) * FLUSH_WRITE_BYTES)
            os.fdatasync(fd)
            lat.append((time.perf_counter_ns() - t0) / 1000.0)
            i += 1
    finally:
        os.close(fd)
        os.unlink(name)
    lat.sort()
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]  # noqa: E731
    return {"flush_median_us": round(pick(0.5), 3), "flush_p99_us": round(pick(0.99), 3), "writes": float(len(lat))}


OVERLAY_HEADER = "# A catalog overlay written by storlab; load it with --catalog FILE.\n"


def overlay_text(*parts: dict[str, Any]) -> str:
    """Catalog overlay entries (`source`, `device`, `host`, `latency`, as in
    a catalog file) as TOML, written by the catalog's own types; the parts'
    sources are merged and their lists joined."""
    entries: dict[str, Any] = {}
    for part in parts:
        for k, v in part.items():
            if isinstance(v, dict):
                entries.setdefault(k, {}).update(v)
            else:
                entries.setdefault(k, []).extend(v)
    return OVERLAY_HEADER + "\n" + _native.catalog_overlay_toml(json.dumps(entries))


def measured_source(key: str, note: str) -> dict[str, Any]:
    """A `[source.KEY]` for what storlab measured today on this machine."""
    return {"source": {key: {"url": note, "date": date.today().isoformat(), "status": "measured", "note": note}}}


def overlay(devices: list[str], lat: dict[str, float], provenance: str, key: str,
            device_entry: dict[str, Any] | None = None) -> dict[str, Any]:
    """Catalog overlay entries: a `measured` source, a `[[latency]]` entry
    for `devices`, and (for this machine's disk) a device entry."""
    out = measured_source(key, provenance)
    if device_entry:
        d = device_entry
        out["device"] = [{
            "id": d["id"], "title": d["title"], "src": key, "kind": "local", "media": d.get("media", "ssd"),
            "accounting": {"unit_kib": 1024, "merge_sequential": True},
            "size_gib": {"fixed": {"value": round(d["size_gib"]), "note": "measured folder's file system"}},
            "iops": {"rule": "fixed", "value": round(d["iops"])},
            "throughput_mib_s": {"rule": "fixed", "value": round(d["mib_s"], 1)},
            "directional": {"read_iops": round(d["read_iops"]), "write_iops": round(d["write_iops"]),
                            "read_mib_s": round(d["read_mib_s"], 1), "write_mib_s": round(d["write_mib_s"], 1)},
            "paths": ["block"],
        }]
    keys = ("read_median_us", "read_p99_us", "write_median_us", "write_p99_us", "flush_median_us", "flush_p99_us",
            "read_us_per_mib", "write_us_per_mib")
    out["latency"] = [{"devices": devices, "src": key, "note": provenance, **{k: lat[k] for k in keys if k in lat}}]
    return out


def calibrate(result: str | os.PathLike, scenario: str | os.PathLike, config: str,
              catalog: list[str | os.PathLike] | None = None) -> tuple[str, dict[str, Any]]:
    """The overlay TOML for `config`'s devices fitted to RESULT's QD1 jobs,
    and a summary (devices, fitted figures, jobs used, provenance)."""
    kind, jobs = read_result(result)
    name, text = read_scenario(scenario)
    cat = open_catalog(catalog)[0]
    lim = cat.limits(name, text)
    names = [c["name"] for c in lim["configs"]]
    if config not in names:
        near = difflib.get_close_matches(config, names, n=1)
        hint = f" — did you mean '{near[0]}'?" if near else f" — configs: {', '.join(names)}"
        raise ScenarioError(f"{scenario}: --config: no config '{config}'{hint}")
    devices = list(dict.fromkeys(p["device"] for c in lim["configs"] if c["name"] == config for p in c["pools"]))
    current = cat.latency(devices[0]) or {}
    try:
        lat, used = fit(jobs, current)
    except ScenarioError as e:
        raise ScenarioError(f"{result}: {e}") from None
    provenance = f"calibrated from {Path(result).name} ({kind}), jobs {', '.join(used)}"
    key = "calibrated-" + re.sub(r"[^a-z0-9]+", "-", f"{config}-{Path(result).stem}".lower()).strip("-")
    return overlay_text(overlay(devices, lat, provenance, key)), {"devices": devices, "latency": lat, "jobs": used, "provenance": provenance}


def this_host() -> str:
    """This machine's name as catalog ids use it (`local/measured/<name>`,
    `local/host/<name>`): the host name in lower case, runs of other
    characters as one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", (platform.node() or "this-machine").lower()).strip("-") or "this-machine"


def host_entry(host: str) -> dict[str, Any]:
    """This machine as a catalog host `local/host/<hostname>`: its vCPUs and
    memory from /proc, so a scenario can put a database on this machine."""
    m = machine()
    gib = round(m["memory_bytes"] / 2**30, 2)
    note = f"vCPUs: the CPUs storlab may run on (its affinity); memory: MemTotal of /proc/meminfo ({m['memory_bytes'] // 1024} kB)"
    out = measured_source("this-machine", note)
    out["source"]["this-machine"]["url"] = "this machine: /proc"
    out["host"] = [{"id": f"local/host/{host}", "title": "This machine, %s (%d vCPUs, %g GiB)" % (host, m["cpus"], gib),
                    "src": "this-machine", "kind": "local", "vcpus": m["cpus"], "memory_gib": gib}]
    return out


# Sequential writes this many times faster than the same job's reads are a
# cache's speed, not the disk's: flash and cloud volumes read at least as
# fast as they write, and a write cache (the device's, a controller's, the
# VM host's) acknowledges writes before they reach the medium.
CACHED_WRITE_RATIO = 2.0


def cache_suspects(rec: dict[str, Any]) -> list[str]:
    """Why a bench disk record may have measured a cache rather than the
    disk: buffered I/O on a test file that fits in memory, or a sequential
    job whose writes ran CACHED_WRITE_RATIO times its reads."""
    out = []
    mem = (rec.get("host_info") or {}).get("memory_bytes") or 0
    size = rec.get("file_bytes") or 0
    if rec.get("direct") is False and mem and size < mem:
        out.append(f"buffered I/O on a {size / 2**20:,.0f} MiB test file, smaller than this machine's "
                   f"{mem / 2**30:,.1f} GiB of memory: the page cache answered — drop --buffered")
    bw = {r["job"]: r.get("bw_bytes_s") or 0.0 for r in rec.get("results", [])}
    for name, w in bw.items():
        if not (name.upper().startswith("SEQ") and name.endswith("-write")):
            continue
        r = bw.get(name[: -len("write")] + "read") or 0.0
        if r > 0 and w > CACHED_WRITE_RATIO * r:
            out.append(f"{name} ran {w / r:.1f}× its reads ({w / 1e6:,.1f} against {r / 1e6:,.1f} MB/s): a write cache "
                       f"took the writes — measure with a test file larger than the cache (--size 8GiB or more)")
    return out


def machine_overlay(rec: dict[str, Any], out_name: str, flush: dict[str, float] | None = None) -> tuple[str, dict[str, Any]]:
    """`bench disk --calibrate-out`: this machine's disk as a `local/…`
    device whose caps are the measured rates (the best random IOPS and
    sequential throughput per direction) and whose latency is fitted to the
    QD1 jobs; `flush` (from `flush_probe`) adds its durable-write latency;
    and this machine as a host `local/host/<hostname>` (`host_entry`)."""
    suspects = cache_suspects(rec)
    if suspects:
        raise ScenarioError(f"--calibrate-out: {suspects[0]}; the overlay would give the cache's speed as the disk's caps")
    jobs = _from_record(rec)
    lat, used = fit(jobs, {"read_median_us": 100.0, "read_p99_us": 500.0, "write_median_us": 100.0, "write_p99_us": 500.0})
    if flush:
        lat["flush_median_us"], lat["flush_p99_us"] = flush["flush_median_us"], flush["flush_p99_us"]
    def best(read: bool, seq: bool, key: str) -> float:
        vals = [j[key] for j in jobs if j["read"] == read and j["name"].upper().startswith("SEQ") == seq]
        return max(vals, default=0.0)
    mib = 1024 * 1024
    path = rec.get("inputs", {}).get("path") or "."
    host = this_host()
    dev_id = f"local/measured/{host}"
    d = {
        "id": dev_id,
        "title": f"this machine's disk under {path} (measured)",
        "size_gib": shutil.disk_usage(path).total / 2**30 if os.path.exists(path) else 1,
        "read_iops": best(True, False, "iops") or 1, "write_iops": best(False, False, "iops") or 1,
        "read_mib_s": (best(True, True, "bw_bytes_s") or best(True, False, "bw_bytes_s")) / mib or 1,
        "write_mib_s": (best(False, True, "bw_bytes_s") or best(False, False, "bw_bytes_s")) / mib or 1,
    }
    d["iops"] = max(d["read_iops"], d["write_iops"])
    d["mib_s"] = max(d["read_mib_s"], d["write_mib_s"])
    provenance = (f"measured by storlab bench disk on {host} under {path}; caps: best measured rates; "
                  f"latency calibrated from {out_name}, jobs {', '.join(used)}"
                  + (f"; durable writes: {flush['writes']:.0f} × (8 KiB write + fdatasync) in a preallocated 16 MiB file"
                     if flush else ""))
    key = f"measured-{host}"
    text = overlay_text(overlay([dev_id], lat, provenance, key, d), host_entry(host))
    return text, {"device": dev_id, "host": f"local/host/{host}", "latency": lat, "jobs": used, **d}
