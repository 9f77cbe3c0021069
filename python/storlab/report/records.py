"""Reading run records for `report` and `compare`: one JSON file each, of
any engine (limits, simulate, measure, emulate), or the advice of `advise
--json`, checked just enough to name the file and the field when something
is off. A record keeps its file name as its label, so two records with the
same config stay apart."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storlab import _native
from storlab.errors import StorlabError
from storlab.files import read_input

SCHEMA_VERSION = 1
#: The `kind` of `storlab advise --json`'s record.
ADVICE = "storlab-advice"


@dataclass
class Record:
    """One record file: its data, its short name and its kind."""

    path: str
    data: dict[str, Any]
    name: str = ""
    kind: str = ""  # limits | simulate | measure | emulate | advice
    labels: dict[str, str] = field(default_factory=dict)  # config -> legend label

    @property
    def results(self) -> list[dict[str, Any]]:
        return self.data.get("results") or []

    @property
    def series(self) -> list[dict[str, Any]]:
        return self.data.get("series") or []

    def label(self, config: str) -> str:
        return self.labels.get(config, config)


def load(path: str | Path) -> Record:
    """A storlab record, or another tool's result file (CrystalDiskMark,
    fio, HammerDB, sysbench, pgbench, CloudWatch) read by `storlab import`'s
    readers."""
    p = Path(path)
    raw = read_input(p, "record file", "give a record file written with --json")
    bad: Exception | None = None
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        data, bad = None, e
    if not (isinstance(data, dict) and "schema_version" in data):
        try:
            data = json.loads(_native.import_record_json(str(p), raw))
        except StorlabError as e:
            if "not a format storlab imports" not in str(e) and "not valid JSON" not in str(e):
                raise
            if data is None and isinstance(bad, json.JSONDecodeError):
                raise StorlabError(f"{p}: line {bad.lineno} column {bad.colno}: not JSON ({bad.msg}) — give a record written with --json "
                                   "or a file storlab import reads") from None
            if data is None:
                raise StorlabError(f"{p}: cannot read the record ({bad.__class__.__name__}: {bad})") from None
    rec = from_data(data, str(p))
    if rec.kind != "advice" and not (rec.results or rec.data.get("configs")):
        # A file given to report or compare with nothing in it is a mistake
        # to say, not a page of empty charts.
        raise StorlabError(f"{p}: no results — the record holds nothing to show (an interrupted or empty run?)")
    return rec


def from_data(data: Any, path: str = "<record>") -> Record:
    if not isinstance(data, dict):
        raise StorlabError(f"{path}: not a storlab record — expected a JSON object written by --json")
    sv = data.get("schema_version")
    if sv is None:
        raise StorlabError(f"{path}: no schema_version — not a storlab record (write one with simulate, bench or limits --json)")
    if sv != SCHEMA_VERSION:
        raise StorlabError(f"{path}: schema_version {sv} — this storlab reads schema_version {SCHEMA_VERSION}; upgrade storlab")
    if data.get("kind") == ADVICE:
        check_advice(data, path)
        return Record(path=path, data=data, name=Path(path).stem, kind="advice")
    if isinstance(data.get("results"), list):
        kind = str(data.get("engine") or "simulate")
        for i, r in enumerate(data["results"]):
            if not isinstance(r, dict) or "config" not in r:
                raise StorlabError(f"{path}: results[{i}]: no 'config' field — every result names its config")
        check_run_record(data, path)
    elif isinstance(data.get("configs"), list):
        kind = "limits"
        for i, c in enumerate(data["configs"]):
            if not isinstance(c, dict) or "name" not in c:
                raise StorlabError(f"{path}: configs[{i}]: no 'name' field — every config has a name")
        check_limits(data, path)
    else:
        raise StorlabError(f"{path}: neither 'results' (a run record), 'configs' (limits --json) nor the advice of advise --json "
                           "— not a storlab record")
    if not isinstance(data.get("series", []), list):
        raise StorlabError(f"{path}: 'series' is not a list")
    return Record(path=path, data=data, name=Path(path).stem, kind=kind)


#: Figures of a result that are physical quantities: a number, 0 or more.
NON_NEGATIVE = ("iops", "bw_bytes_s", "read_iops", "write_iops", "lat_mean_us", "lat_p50_us", "lat_p90_us",
                "lat_p99_us", "lat_p999_us", "lat_max_us", "read_lat_mean_us", "write_lat_mean_us", "nopm", "tpm",
                "vus", "cpu_utilization", "monthly_cost_usd", "usd_per_1000_tpm", "runtime_s", "outstanding")


def check_run_record(data: dict[str, Any], path: str) -> None:
    """A run record, checked before anything reads it: its fields' types by
    the one record type (storlab-record, through the binding), then its
    figures against their physical range. Raises naming file, entry and field."""
    for i, r in enumerate(data["results"]):
        for key in NON_NEGATIVE:
            v = r.get(key)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise StorlabError(f"{path}: results[{i}].{key}: {str(v)[:40]!r} — expected a number")
            if not (math.isfinite(v) and v >= 0):
                raise StorlabError(f"{path}: results[{i}] (config {str(r.get('config'))[:60]!r}).{key}: {v} — "
                                   f"{'a rate' if 'iops' in key or 'bytes' in key else 'a figure'} is a number ≥ 0; nearest valid value 0")
        # The record type's untagged result kinds would take a mistyped
        # database result for another kind: its transactions are checked here.
        txn = r.get("txn")
        if txn is not None:
            if not isinstance(txn, dict):
                raise StorlabError(f"{path}: results[{i}].txn: {str(txn)[:40]!r} — expected a table of transaction types")
            for name, t in txn.items():
                if not isinstance(t, dict):
                    raise StorlabError(f"{path}: results[{i}].txn.{name}: {str(t)[:40]!r} — expected a table with commits, "
                                       "per_min and latencies")
                for key, v in t.items():
                    if v is not None and key != "rows" and not _is_num(v):
                        raise StorlabError(f"{path}: results[{i}].txn.{name}.{key}: {str(v)[:40]!r} — expected a number ≥ 0")
    inputs = data.get("inputs")
    if inputs is not None and not isinstance(inputs, dict):
        raise StorlabError(f"{path}: inputs: {str(inputs)[:40]!r} — expected a table")
    for key in ("scenario", "profile", "profile_file", "metric"):
        v = (inputs or {}).get(key)
        if v is not None and not isinstance(v, str):
            raise StorlabError(f"{path}: inputs.{key}: {str(v)[:40]!r} — expected text (a file name or a name)")
    if not isinstance(data.get("series", []), list):
        raise StorlabError(f"{path}: 'series' is not a list")
    for i, s in enumerate(data.get("series") or []):
        if not isinstance(s, dict):
            raise StorlabError(f"{path}: series[{i}]: {str(s)[:40]!r} — expected a table with config, metric, timestamps and values")
        vals = s.get("values", [])
        if not isinstance(vals, list) or any(v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))) for v in vals):
            raise StorlabError(f"{path}: series[{i}].values: expected a list of numbers")
        if not isinstance(s.get("timestamps", []), list):
            raise StorlabError(f"{path}: series[{i}].timestamps: expected a list of times")
        p = s.get("period_s")
        if p is not None and (isinstance(p, bool) or not isinstance(p, (int, float)) or not (math.isfinite(p) and p > 0)):
            raise StorlabError(f"{path}: series[{i}].period_s: {p!r} — a period is a number of seconds above 0, e.g. 60")
    # The types of the fields it has, by the one record type: what a record
    # may leave out (older and hand-made ones do) is filled in first.
    full = {"engine": "simulate", "scenario": None, "seed": 0, "workload": "", "series": [], "interrupted": False, **data}
    full.pop("tipping_point", None)  # read in either shape (a list, or older records' map)
    full["results"] = [{"job": "", "binding": "", **r} for r in data["results"]]
    _native.record_check(path, json.dumps(full))


# The fields of `limits --json` that report and compare read, by kind:
# "str", "num" (finite, ≥ 0), "bool", "table" (any table), "strs" (a table
# of lines), "nums" (a table of figures), "list"; "?" after a kind allows
# null. A field a record leaves out is not asked for.
LIMITS_TOP = {"tool": "table", "scenario": "str", "title": "str?", "inputs": "table?"}
LIMITS_CONFIG = {
    "name": "str", "title": "str?", "host": "str", "license": "str?", "engine": "str?", "region": "str?",
    "host_vcpus": "num?", "host_memory_gib": "num?", "host_cpu_speed": "num?", "host_cpu_speed_basis": "str?",
    "host_cpu": "table?", "ceilings": "nums", "binding": "strs", "sustained": "nums", "sustained_binding": "strs",
    "pools": "list", "host_burst": "table?", "monthly_cost_usd": "num", "cost_complete": "bool",
    "cost_breakdown": "list", "assumptions": "list", "warnings": "list", "unverified": "list"}
LIMITS_POOL = {
    "role": "str", "device": "str", "count": "num", "layout": "str?", "size_gib": "num", "total_gib": "num",
    "provisioned_iops": "num?", "provisioned_throughput_mib_s": "num?", "host_cache": "str?", "path": "str?",
    "baseline_iops": "num", "burst_iops": "num", "burst_s": "num?", "baseline_bytes_s": "num", "burst_bytes_s": "num",
    "throughput_burst_s": "num?", "ceilings": "nums", "sustained": "nums"}
_WANT = {"str": "text", "num": "a number ≥ 0", "bool": "true or false", "table": "a table", "strs": "a table of lines",
         "nums": "a table of numbers ≥ 0", "list": "a list"}


def _is_num(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and v >= 0


def _fits(v: Any, kind: str) -> bool:
    if kind.endswith("?"):
        return v is None or _fits(v, kind[:-1])
    return {"str": lambda: isinstance(v, str), "num": lambda: _is_num(v), "bool": lambda: isinstance(v, bool),
            "table": lambda: isinstance(v, dict), "list": lambda: isinstance(v, list),
            "strs": lambda: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
            "nums": lambda: isinstance(v, dict) and all(_is_num(x) for x in v.values())}[kind]()


def _check_fields(obj: dict[str, Any], spec: dict[str, str], where: str, path: str) -> None:
    for key, kind in spec.items():
        if key in obj and not _fits(obj[key], kind):
            v = obj[key]
            bad = next((f"{key}.{k}: {x!r}" for k, x in v.items() if not _fits(x, "str" if kind == "strs" else "num")), None) \
                if isinstance(v, dict) and kind in ("strs", "nums") else None
            got = bad or f"{key}: {str(v)[:40]!r}"
            raise StorlabError(f"{path}: {where}{got} — expected {_WANT[kind.rstrip('?')]}"
                               f"{' or null' if kind.endswith('?') else ''} (write the record with limits --json)")


def check_limits(data: dict[str, Any], path: str) -> None:
    """A `limits --json` record, checked before report or compare reads it:
    the type of every field they show. Raises naming file, entry and field."""
    _check_fields(data, LIMITS_TOP, "", path)
    for i, c in enumerate(data["configs"]):
        _check_fields(c, LIMITS_CONFIG, f"configs[{i}].", path)
        for j, p in enumerate(c.get("pools") or []):
            if not isinstance(p, dict):
                raise StorlabError(f"{path}: configs[{i}].pools[{j}]: {str(p)[:40]!r} — expected a pool table")
            _check_fields(p, LIMITS_POOL, f"configs[{i}].pools[{j}].", path)


def check_advice(data: dict[str, Any], path: str) -> None:
    """An advice record, checked before the report reads it: the shape of
    each part the page shows, and each outcome's config, host, pools and
    monthly cost. Raises naming file, entry and field."""

    def refuse(where: str, value: Any, want: str) -> StorlabError:
        return StorlabError(f"{path}: {where}: {str(value)[:40]!r} — expected {want} (write the record with advise --json)")

    for key, kind, want in (("goal", dict, "the goal table"), ("space", dict, "a table"), ("demand", dict, "a table"),
                            ("tool", dict, "a table"), ("inputs", dict, "a table"), ("warnings", list, "a list of lines")):
        v = data.get(key)
        if (key == "goal" or v is not None) and not isinstance(v, kind):
            raise refuse(key, v, want)
    jobs = data["goal"].get("jobs") or {}
    if not (isinstance(jobs, dict) and all(isinstance(j, dict) for j in jobs.values())):
        raise refuse("goal.jobs", jobs, "a table of jobs' goals")
    refused = (data.get("space") or {}).get("refused") or {}
    if not (isinstance(refused, dict) and all(isinstance(n, int) and not isinstance(n, bool) for n in refused.values())):
        raise refuse("space.refused", refused, "a count of configs per reason")
    outcomes: list[tuple[str, Any]] = []
    for key in ("recommendations", "front", "cheaper_failures", "findings"):
        items = data.get(key, [])
        if not isinstance(items, list):
            raise refuse(key, items, "a list")
        for i, o in enumerate(items):
            where = f"{key}[{i}]"
            if key == "findings":
                if not (isinstance(o, dict) and isinstance(o.get("config"), str) and isinstance(o.get("finding"), str)):
                    raise refuse(where, o, "a table with config, finding and current")
                o, where = o.get("current"), f"{where}.current"
            elif key == "recommendations" and not (isinstance(o, dict) and type(o.get("rank")) is int):
                raise refuse(f"{where}.rank", o.get("rank") if isinstance(o, dict) else o, "a rank, 1 for the cheapest")
            outcomes.append((where, o))
    for where, o in outcomes:
        if not (isinstance(o, dict) and isinstance(o.get("config"), dict) and isinstance(o["config"].get("host"), str)):
            raise refuse(where, o, "an outcome with config.host")
        cost = o.get("monthly_cost_usd")
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not (math.isfinite(cost) and cost >= 0):
            raise StorlabError(f"{path}: {where}.monthly_cost_usd: {str(cost)[:40]!r} — a cost is a number ≥ 0; nearest valid value 0")
        pools = o["config"].get("pools", [])
        if not (isinstance(pools, list) and all(isinstance(x, dict) for x in pools)):
            raise refuse(f"{where}.config.pools", pools, "a list of pools")


def configs(rec: Record) -> list[str]:
    if rec.kind == "limits":
        return [c["name"] for c in rec.data["configs"]]
    return list(dict.fromkeys(r["config"] for r in rec.results))


def short(config: str, limit: int = 32) -> str:
    """A config named after a path (bench db's `sqlite /long/dir/storlab.sqlite`)
    keeps its first word and last two path parts in legends."""
    if len(config) <= limit or "/" not in config:
        return config
    head, _, path = config.partition(" ")
    if not path:
        head, path = "", config
    parts = path.rstrip("/").split("/")
    tail = "/".join(parts[-2:])
    return f"{head} …/{tail}".strip()


def assign_labels(records: list[Record]) -> None:
    """Legend labels: the config's name alone when one record is given;
    `config · engine` when several are; `config · file` when two records
    of one engine share a config name."""
    many = len(records) > 1
    seen: dict[tuple[str, str], int] = {}
    for rec in records:
        for c in configs(rec):
            seen[(c, rec.kind)] = seen.get((c, rec.kind), 0) + 1
    names_seen: dict[str, int] = {}
    for rec in records:
        names_seen[rec.name] = names_seen.get(rec.name, 0) + 1
    for i, rec in enumerate(records):
        if names_seen[rec.name] > 1:
            rec.name = f"{rec.name}#{i + 1}"
        for c in configs(rec):
            if not many:
                rec.labels[c] = short(c)
            elif seen[(c, rec.kind)] > 1:
                rec.labels[c] = f"{short(c)} · {rec.name}"
            else:
                rec.labels[c] = f"{short(c)} · {rec.kind}"


def is_db(result: dict[str, Any]) -> bool:
    return result.get("vus") is not None


def finite(x: Any) -> float | None:
    """A number, or None for anything else (null, NaN, a string)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def latency_us(x: Any) -> float | None:
    """A latency in µs, or None where the record has none: a record keeps 0
    for a latency its source does not give (CrystalDiskMark 5/6 and most
    of 8's lines carry no percentile), and no I/O completes in 0 µs."""
    f = finite(x)
    return f if f is not None and f > 0 else None


# Run-to-run spread. A figure's noise is twice the standard deviation of its
# repeats: the rule storlab's tipping point already uses
# (storlab.db.runner.tipping_point), so "beyond the noise" means one thing.


def job_runs(rec: Record) -> dict[str, list[dict[str, Any]]]:
    """bench disk's raw runs per job name (`runs[i].runs`), else {}."""
    out: dict[str, list[dict[str, Any]]] = {}
    for j in rec.data.get("runs") or []:
        if isinstance(j, dict) and isinstance(j.get("runs"), list) and "job" in j:
            out[j["job"]] = j["runs"]
    return out


def repeats_of(rec: Record, result: dict[str, Any], key: str) -> list[float]:
    """The repeated measurements behind one figure of one result, when the
    record keeps them: bench disk's runs per job; bench db's timed runs per
    VU count."""
    if is_db(result):
        # bench db records hold one config: its timed runs by VU count
        runs = [r for r in rec.data.get("runs") or [] if isinstance(r, dict) and r.get("vus") == result["vus"]]
        vals = [finite(r.get(key)) for r in runs]
        return [v for v in vals if v is not None]
    runs = job_runs(rec).get(result.get("job", ""), [])
    vals = [finite(r.get(key)) for r in runs]
    return [v for v in vals if v is not None]


def spread(rec: Record, result: dict[str, Any], key: str) -> float | None:
    """Twice the standard deviation of the figure's repeats; None where
    the record has fewer than two."""
    sd = finite(result.get(f"{key}_stdev"))
    if sd is not None and (result.get("repeats") or 0) > 1:
        return 2 * sd
    vals = repeats_of(rec, result, key)
    if len(vals) > 1:
        return 2 * statistics.stdev(vals)
    return None
