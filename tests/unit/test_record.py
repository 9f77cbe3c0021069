"""One run record for every engine: the schema in docs/ is the one the Rust
type generates, every field of it is documented, and records made by the
simulator, the disk benchmark and the database driver validate against it."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from conftest import ROOT
from storlab import api

SCHEMA_FILE = ROOT / "docs" / "record.schema.json"


def test_the_documented_schema_is_the_types_schema():
    assert json.loads(SCHEMA_FILE.read_text()) == api.record_schema(), (
        "docs/record.schema.json is stale: regenerate it with "
        "python -c 'from storlab import _native; print(_native.record_schema_json(), end=\"\")' > docs/record.schema.json")


def property_names(schema: dict) -> set[str]:
    names: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.get("properties", {}).items():
                names.add(k)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return names


def test_every_field_is_documented():
    text = (ROOT / "docs" / "record.md").read_text()
    missing = sorted(n for n in property_names(api.record_schema()) if f"`{n}`" not in text)
    assert not missing, f"not in docs/record.md: {missing}"


def validate(rec: dict) -> None:
    jsonschema.validate(rec, api.record_schema())
    # And it reads back through the Rust type unchanged.
    assert api.check_record(rec) == json.loads(json.dumps(rec))


def test_a_record_that_does_not_fit_is_refused_naming_the_field():
    from storlab.errors import ScenarioError

    with pytest.raises(ScenarioError, match=r"r\.json: not a storlab run record — at 'results\[0\]\.config'"):
        api.check_record({"schema_version": 1, "engine": "simulate", "scenario": None, "seed": 1, "workload": "w",
                          "results": [{"config": 3, "job": "j", "binding": "b"}], "series": [], "interrupted": False},
                         "r.json")


def test_simulated_and_measured_records_of_one_preset_line_up(tmp_path):
    sim = api.simulate(ROOT / "examples" / "azure-ds4-p30-host-cache.toml", period_s=60)
    validate(sim)
    meas = api.bench_disk(tmp_path, profile="cdm-default", size="4MiB", engine="null", runs=1, runtime_s=0.05, interval_s=0)
    validate(meas)
    assert sim["engine"] == "simulate" and meas["engine"] == "measure"
    # CrystalDiskMark Default is 4 tests: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1, each read and write.
    sim_jobs = [r["job"] for r in sim["results"] if r["config"] == sim["results"][0]["config"]]
    assert sim_jobs == [r["job"] for r in meas["results"]]
    assert len(sim_jobs) == 8
    common = {"config", "job", "pool", "binding", "iops", "bw_bytes_s", "read_iops", "write_iops", "lat_mean_us",
              "lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us", "lat_p9999_us", "lat_max_us", "outstanding", "runtime_s"}
    for a, b in zip(sim["results"], meas["results"]):
        assert common <= a.keys() and common <= b.keys()
        # Same job, same I/Os in flight (Q32T1 = 32, Q1T1 = 1, Q8T1 = 8).
        assert a["outstanding"] == b["outstanding"] == int(re.search(r"Q(\d+)T(\d+)", a["job"]).group(1)) * int(
            re.search(r"Q(\d+)T(\d+)", a["job"]).group(2))


def test_a_database_record_validates(tmp_path):
    rec = api.bench_db("insert", "sqlite", tmp_path / "lite", vus="1,2", rows=200, commit_every=50)
    validate(rec)
    assert [r["vus"] for r in rec["results"]] == [1, 2]
    # 2 VUs × 200 rows, committed every 50: 4 commits each, 8 in all.
    assert rec["results"][1]["rows"] == 400
    assert rec["results"][1]["commits"] == 8
