"""Small hand-made run records, shaped as DESIGN.md's contracts describe
them, with figures chosen so the expected results can be worked out by
hand in the tests."""

from __future__ import annotations

import copy
from typing import Any

TOOL = {"name": "storlab", "version": "0.1.0", "git_sha": "0123456789abcdef0123456789abcdef01234567"}


def disk(iops_runs: dict[str, list[float]], config: str = "local") -> dict[str, Any]:
    """A bench disk record: per job, its runs' IOPS (4 KiB I/Os); the
    result holds the best run, as bench disk does."""
    results, runs = [], []
    for job, vals in iops_runs.items():
        rs = [{"iops": v, "bw_bytes_s": v * 4096, "lat_mean_us": 1e6 / v, "lat_p50_us": 1e6 / v, "lat_p90_us": 1.5e6 / v,
               "lat_p99_us": 2e6 / v, "lat_p999_us": 3e6 / v, "lat_p9999_us": 4e6 / v, "lat_max_us": 5e6 / v} for v in vals]
        best = max(range(len(rs)), key=lambda i: rs[i]["iops"])
        results.append({"config": config, "job": job, "pool": "path", **rs[best], "binding": "measured: io_uring, direct I/O",
                        "runs": len(rs)})
        runs.append({"job": job, "runs": rs, "best": best})
    return {"schema_version": 1, "tool": TOOL, "engine": "measure", "scenario": None, "workload": "cdm-default", "seed": 1,
            "host_info": {"kernel": "6.1", "cpus": 2}, "results": results, "series": [], "runs": runs, "warnings": [],
            "interrupted": False}


def db_sweep(steps: dict[int, tuple[float, float]], config: str = "sqlite", tipping: int | None = None) -> dict[str, Any]:
    """A bench db record: per VU count, (mean NOPM, stdev of 3 repeats)."""
    results = []
    for vus, (nopm, sd) in steps.items():
        results.append({"config": config, "job": "tpcc", "vus": vus, "repeats": 3, "nopm": nopm, "tpm": nopm * 2.2,
                        "nopm_stdev": sd, "tpm_stdev": sd * 2.2, "nopm_min": nopm - sd, "nopm_max": nopm + sd,
                        "txn": {"new_order": {"commits": 100, "errors": 0, "lat_p50_us": 1000.0 * vus, "lat_p90_us": 2000.0 * vus,
                                              "lat_p99_us": 4000.0 * vus},
                                "payment": {"commits": 100, "errors": 0, "lat_p50_us": 500.0 * vus, "lat_p90_us": 900.0 * vus,
                                            "lat_p99_us": 1500.0 * vus}},
                        "io_profile": {"per_txn": {"read_bytes": 8192.0, "write_bytes": 16384.0, "wal_bytes": 4000.0}},
                        "binding": "measured: sqlite"})
    rec = {"schema_version": 1, "tool": TOOL, "engine": "measure", "scenario": None, "workload": "tpcc", "seed": 1,
           "host_info": {}, "results": results, "series": [], "runs": []}
    if tipping is not None:
        rec["tipping_point"] = [{"config": config, "vus": tipping, "metric": "nopm", "value": steps[tipping][0],
                                 "reached": True, "note": "hand-made"}]
    return rec


def _txn(p50: float, p90: float, p99: float) -> dict[str, Any]:
    return {"lat_mean_us": p50, "lat_p50_us": p50, "lat_p90_us": p90, "lat_p99_us": p99, "lat_p999_us": p99,
            "lat_p9999_us": p99, "lat_max_us": p99, "commits": 100, "rollbacks": 0, "errors": 0, "per_min": 100.0}


def simulated_db() -> dict[str, Any]:
    """A simulated database sweep on two configs (DESIGN.md "Database
    workloads on a modelled deployment"), with a gp2 pool's BurstBalance
    falling 100 → 0 by 20 per period of 60 s and a BurstBalance < 50 alarm
    that goes to ALARM at 180 s (CloudWatch's reason text names the
    threshold)."""
    results = []
    for config, scale, cost in (("gp2", 1.0, 1000.0), ("io2", 2.0, 3000.0)):
        for vus, nopm in ((8, 1000.0), (16, 1800.0), (32, 2000.0)):
            tpm = nopm * 2.3 * scale
            results.append({"config": config, "job": "tpcc-postgresql", "vus": vus, "nopm": nopm * scale, "tpm": tpm,
                            "txn": {"new_order": _txn(2000.0, 5000.0, 9000.0), "payment": _txn(1000.0, 3000.0, 6000.0)},
                            "binding": f"pool data: {config} IOPS", "cpu_utilization": 0.5,
                            "pools": {"data": {"read_iops": 10.0 * vus, "write_iops": 5.0 * vus, "read_bytes_s": 8192.0 * 10 * vus,
                                               "write_bytes_s": 8192.0 * 5 * vus, "utilization": 0.02 * vus}},
                            "monthly_cost_usd": cost, "usd_per_1000_tpm": cost / (tpm / 1000)})
    ts = [0.0, 60.0, 120.0, 180.0, 240.0, 300.0]
    series = []
    for config in ("gp2", "io2"):
        series += [
            {"config": config, "resource": "pool data", "metric": "VolumeReadOps", "unit": "Count", "period_s": 60.0,
             "timestamps": ts, "values": [6000.0, 6000.0, 6000.0, 3000.0, 3000.0, 3000.0]},
            {"config": config, "resource": "pool data", "metric": "VolumeWriteOps", "unit": "Count", "period_s": 60.0,
             "timestamps": ts, "values": [3000.0] * 6},
            {"config": config, "resource": "pool data", "metric": "VolumeReadBytes", "unit": "Bytes", "period_s": 60.0,
             "timestamps": ts, "values": [6000.0 * 8192] * 6},
            {"config": config, "resource": "pool data", "metric": "VolumeWriteBytes", "unit": "Bytes", "period_s": 60.0,
             "timestamps": ts, "values": [3000.0 * 8192] * 6},
            {"config": config, "resource": "pool data", "metric": "VolumeTotalReadTime", "unit": "Seconds", "period_s": 60.0,
             "timestamps": ts, "values": [6.0] * 6},
            {"config": config, "resource": "pool data", "metric": "VolumeTotalWriteTime", "unit": "Seconds", "period_s": 60.0,
             "timestamps": ts, "values": [3.0] * 6},
            {"config": config, "resource": "pool data", "metric": "VolumeQueueLength", "unit": "Count", "period_s": 60.0,
             "timestamps": ts, "values": [0.15] * 6},
        ]
    series.append({"config": "gp2", "resource": "pool data", "metric": "BurstBalance", "unit": "Percent", "period_s": 60.0,
                   "timestamps": ts, "values": [100.0, 80.0, 60.0, 40.0, 20.0, 0.0]})
    return {"schema_version": 1, "tool": TOOL, "engine": "simulate", "scenario": "db.toml", "title": "TPC-C on gp2 vs io2",
            "seed": 7, "workload": "tpcc-postgresql", "period_s": 60.0, "simulated_s": 300.0, "simulated_ios": 54000,
            "results": results, "series": series, "interrupted": False, "warnings": [],
            # storlab-record's shapes: TippingPoint per config, AlarmChange per change
            "tipping_point": [{"config": "gp2", "vus": 16, "metric": "nopm", "value": 1800.0, "reached": True, "note": "hand-made"},
                              {"config": "io2", "vus": 16, "metric": "nopm", "value": 3600.0, "reached": True, "note": "hand-made"}],
            "alarms": [{"alarm": "burst-below-half", "config": "gp2", "time_s": 0.0, "from": "INSUFFICIENT_DATA", "to": "OK",
                        "reason": "Threshold Crossed: 2 datapoints [100.0, 80.0] were not less than the threshold (50.0)."},
                       {"alarm": "burst-below-half", "config": "gp2", "time_s": 180.0, "from": "OK", "to": "ALARM",
                        "reason": "Threshold Crossed: 2 datapoints [40.0, 20.0] were less than the threshold (50.0). BurstBalance"}],
            "unverified": ["aws/ebs/gp2 latency (placeholder)"], "host_info": {}, "inputs": {"scenario": "db.toml"}}


def with_changes(rec: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(rec)
    out.update(changes)
    return out
