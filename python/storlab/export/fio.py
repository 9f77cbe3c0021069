"""fio-compatible JSON (`--output-format fio-json`): `jobs[]` with `read`
and `write` sections (`io_bytes`, `bw_bytes`, `bw` in KiB/s, `iops`,
`runtime` in ms, `total_ios`, `lat_ns` and `clat_ns` with fio's percentile
list) and `usr_cpu`/`sys_cpu` in percent, as fio 3 writes them, so tools
built for fio output read storlab's."""

from __future__ import annotations

import json
import time
from typing import Any


def _dir(d: dict[str, Any], elapsed_s: float) -> dict[str, Any]:
    ns = lambda us: round(us * 1000)  # noqa: E731
    lat = {"min": ns(d["lat_min_us"]), "max": ns(d["lat_max_us"]), "mean": d["lat_mean_us"] * 1000, "stddev": 0.0, "N": d["ios"]}
    return {
        "io_bytes": d["bytes"],
        "io_kbytes": d["bytes"] // 1024,
        "bw_bytes": round(d["bw_bytes_s"]),
        "bw": round(d["bw_bytes_s"] / 1024),
        "iops": d["iops"],
        "runtime": round(elapsed_s * 1000),
        "total_ios": d["ios"],
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": {**lat, "percentile": {f"{p:.6f}": ns(v) for p, v in d["percentiles_us"]}},
        "lat_ns": lat,
    }


def to_fio_json(record: dict[str, Any]) -> str:
    jobs = []
    for j in record["runs"]:
        best = j["runs"][j["best"]]
        e = max(best["elapsed_s"], 1e-9)
        jobs.append({
            "jobname": j["job"],
            "groupid": 0,
            "error": 0,
            "job options": {"rw": j["rw"], "bs": str(j["bs_bytes"]), "iodepth": str(j["iodepth"]),
                            "numjobs": str(j["numjobs"]), "ioengine": j["engine"], "direct": "1" if j["direct"] else "0"},
            "read": _dir(best["read"], best["elapsed_s"]),
            "write": _dir(best["write"], best["elapsed_s"]),
            "usr_cpu": 100.0 * best["usr_cpu_s"] / e,
            "sys_cpu": 100.0 * best["sys_cpu_s"] / e,
            "ctx": 0,
            "majf": 0,
            "minf": 0,
        })
    doc = {
        "fio version": f"storlab-{record['tool']['version']}",
        "timestamp": int(time.time()),
        "time": time.strftime("%a %b %d %H:%M:%S %Y"),
        "global options": {"size": str(record["file_bytes"])},
        "jobs": jobs,
    }
    return json.dumps(doc, indent=2) + "\n"
