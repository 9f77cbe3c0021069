"""Fuzzing what the CLI calls: scenario text into the catalog's limits and
simulate, run records and advice records into report and compare's reader
(and the advice into its page), option strings into their parsers. Each
input is read or refused with a StorlabError on one non-empty line — never
another exception, never a panic."""

from __future__ import annotations

import copy
import json
import math

import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from storlab import _native
from storlab.errors import InternalError, StorlabError

# A bounded run in `make test` (profile `default`); many more inputs with
# `make fuzz` (profile `fuzz`: STORLAB_FUZZ_EXAMPLES per test).
settings.register_profile("default", max_examples=150, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=int(os.environ.get("STORLAB_FUZZ_EXAMPLES", "20000")), deadline=None,
                          suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# Numbers as users (and fuzzers) write them.
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1, 0.5, 1e308, 1e26, 4294967296, 2**63, -0.0]),
)
TOML_VALUES = st.one_of(
    NUMBERS.map(lambda x: repr(x).replace("inf", "inf").replace("nan", "nan") if isinstance(x, float) else str(x)),
    st.text(max_size=20).map(json.dumps),
    st.sampled_from(["true", "[]", "{}", '""', "[1, 2]", '"aws/ebs/gp2"', '"azure/premium-ssd/P30"', "", "="]),
)


def clean(e: BaseException) -> None:
    """A refusal: a StorlabError (not an internal one) with one non-empty line."""
    assert isinstance(e, StorlabError) and not isinstance(e, InternalError), repr(e)
    msg = str(e)
    assert msg.strip() and "\n" not in msg, repr(msg)


@pytest.fixture(scope="module")
def catalog():
    from storlab.api import open_catalog

    return open_catalog(None)[0]


BASE = {
    "host": '"aws/ec2/m5.4xlarge"', "device": '"aws/ebs/gp3"', "size_gib": "500", "iops": "6000",
    "throughput_mib_s": "250", "count": "2", "layout": '"stripe"', "stripe_kib": "64", "role": '"data"',
}


@st.composite
def scenarios(draw):
    fields = dict(BASE)
    for k in draw(st.lists(st.sampled_from(sorted(BASE)), max_size=4)):
        fields[k] = draw(TOML_VALUES)
    extra = draw(st.sampled_from(["", "title = \"t\"\n", "region = \"aws/us-east-1\"\n", "region =", "as_of = \"2018-08-29\"\n"]))
    pool = "".join(f"{k} = {v}\n" for k, v in fields.items() if k != "host")
    return f"{extra if not extra.startswith('region =') else ''}[configs.a]\nhost = {fields['host']}\n[[configs.a.pools]]\n{pool}" + (extra if extra == "region =" else "")


@given(scenarios())
def test_limits_reads_or_refuses_any_scenario(catalog, text):
    try:
        catalog.limits("s.toml", text)
    except BaseException as e:  # noqa: BLE001 — a panic is a BaseException
        clean(e)


JOBS = st.fixed_dictionaries({}, optional={
    "rw": st.sampled_from(['"randread"', '"write"', '"randrw"', '"bogus"', "1"]),
    "bs": st.sampled_from(['"4k"', '"1m"', '"0"', '"1e30"', '"-4k"', "4096", '"16KiB"']),
    "iodepth": TOML_VALUES, "numjobs": TOML_VALUES, "rate_iops": TOML_VALUES, "arrival_iops": TOML_VALUES,
    "runtime_s": TOML_VALUES, "size": st.sampled_from(['"64m"', '"1g"', '"0"', '"99999999999999p"']),
    "thinktime_us": TOML_VALUES, "loops": TOML_VALUES,
})


@given(JOBS, st.sampled_from([None, 0, 1, 7, 10**9, 2**31]), st.sampled_from([None, 1e-6, 0.5, 5.0, math.inf, math.nan, -1.0]))
def test_simulate_reads_or_refuses_any_inline_job(catalog, job, iodepth, duration):
    job.setdefault("rw", '"randread"')
    text = ("[workload]\n[[workload.jobs]]\n" + "".join(f"{k} = {v}\n" for k, v in job.items())
            + '[configs.a]\nhost = "aws/ec2/t3.medium"\n[[configs.a.pools]]\ndevice = "aws/ebs/gp3"\nsize_gib = 100\n')
    kw = {"iodepth": iodepth} if iodepth is not None else {}
    # Bounded simulated time: at most 0.5 s of it for any job that is read.
    if duration is not None:
        kw["duration_s"] = duration
    else:
        kw["duration_s"] = 0.5
    try:
        rec = json.loads(catalog.simulate_json("s.toml", text, "/nonexistent", **kw))
    except OverflowError:
        return  # a Python int beyond u32 for iodepth: pyo3 refuses it before Rust
    except BaseException as e:  # noqa: BLE001
        clean(e)
        return
    for r in rec["results"]:
        assert r["iops"] >= 0 and math.isfinite(r["iops"]), r


def _record() -> dict:
    r = {"config": "a", "job": "RND4K-Q1T1-read", "iops": 100.0, "bw_bytes_s": 409600.0, "lat_mean_us": 100.0,
         "lat_p50_us": 90.0, "lat_p90_us": 150.0, "lat_p99_us": 300.0, "lat_p999_us": 500.0, "lat_max_us": 900.0,
         "binding": "latency"}
    return {"schema_version": 1, "tool": {"name": "storlab", "version": "0", "git_sha": ""}, "engine": "simulate",
            "scenario": "s.toml", "seed": 1, "workload": "cdm-default", "results": [r],
            "series": [{"config": "a", "resource": "pool all", "metric": "VolumeReadOps", "unit": "Count",
                        "period_s": 60, "timestamps": [0.0, 60.0], "values": [6000.0, 6000.0]}]}


JSON_VALUES = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=10), st.just([]), st.just({}))
PATHS = st.sampled_from([("results", 0, "config"), ("results", 0, "iops"), ("results", 0, "lat_p99_us"),
                         ("results", 0, "bw_bytes_s"), ("results", 0, "job"), ("results", 0), ("results",),
                         ("series", 0, "values"), ("series", 0, "period_s"), ("series", 0), ("schema_version",),
                         ("engine",), ("seed",), ("series",), ("results", 0, "vus"), ("results", 0, "nopm")])


@given(st.lists(st.tuples(PATHS, JSON_VALUES), min_size=1, max_size=4))
def test_report_reader_reads_or_refuses_any_record(changes):
    from storlab.report.records import assign_labels, configs, from_data

    data = _record()
    for path, value in changes:
        node = data
        try:
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = copy.deepcopy(value)
        except (KeyError, IndexError, TypeError):
            continue
    try:
        rec = from_data(json.loads(json.dumps(data)), "r.json")
    except BaseException as e:  # noqa: BLE001
        clean(e)
        return
    assign_labels([rec])
    for c in configs(rec):
        assert isinstance(c, str)
    for r in rec.results:
        for k in ("iops", "bw_bytes_s", "lat_mean_us", "lat_p99_us"):
            v = r.get(k)
            assert v is None or (math.isfinite(v) and v >= 0), (k, v)


def _advice() -> dict:
    def outcome(iops: float, cost: float, by: str, **kw) -> dict:
        return {"name": f"gp3-{iops:g}", "config": {"host": "aws/ec2/m5.xlarge", "pools": [
                    {"role": "all", "device": "aws/ebs/gp3", "count": 1, "size_gib": 125.0, "iops": iops}]},
                "config_toml": "[configs.a]\n", "monthly_cost_usd": cost, "iops": iops if by == "simulate" else None,
                "binding": "device", "meets_goal": iops >= 4000, "verified_by": by, "screen_bound": iops / 4000, **kw}

    return {"schema_version": 1, "kind": "storlab-advice", "tool": {"name": "storlab", "version": "0", "git_sha": ""},
            "title": "t", "question": "q.toml", "workload": "inline", "goal": {"iops": 4000.0},
            "space": {"region": "aws/us-east-1", "hosts": 1, "devices": 1, "candidates": 16, "screened": 12, "verified": 12,
                      "refused": {"too large": 3}},
            "recommendations": [{"rank": 1, **outcome(4000, 155.16, "simulate")}],
            "front": [outcome(3000, 150.16, "screen"), outcome(4000, 155.16, "screen")],
            "cheaper_failures": [outcome(3000, 150.16, "screen", misses="screen: 3000 IOPS")],
            "findings": [{"config": "today", "finding": "Under-provisioned", "risk": "High", "saving_usd_month": 0.0,
                          "why": "misses", "current": outcome(3000, 150.16, "simulate")}],
            "method": "m", "warnings": [], "interrupted": False, "inputs": {"question": "q.toml", "catalog_files": ["a"]}}


ADVICE_PATHS = st.sampled_from([
    ("goal",), ("goal", "iops"), ("goal", "p99_ms"), ("goal", "nopm"), ("goal", "jobs"), ("goal", "max_usd_month"),
    ("recommendations", 0, "rank"), ("recommendations", 0, "config"), ("recommendations", 0, "config", "host"),
    ("recommendations", 0, "config", "pools"), ("recommendations", 0, "config", "pools", 0),
    ("recommendations", 0, "config", "pools", 0, "size_gib"), ("recommendations", 0, "monthly_cost_usd"),
    ("recommendations", 0, "iops"), ("recommendations", 0, "config_toml"), ("recommendations", 0),
    ("front", 0, "screen_bound"), ("front", 0, "verified_by"), ("front", 1, "monthly_cost_usd"), ("front",),
    ("cheaper_failures", 0, "misses"), ("findings", 0, "current"), ("findings", 0, "finding"), ("findings", 0),
    ("space",), ("space", "refused"), ("space", "candidates"), ("demand",), ("tool",), ("inputs",), ("warnings",),
    ("title",), ("interrupted",)])


@given(st.lists(st.tuples(ADVICE_PATHS, JSON_VALUES), min_size=1, max_size=4))
def test_advice_report_draws_or_refuses_any_advice_record(changes):
    from storlab.report import build_html
    from storlab.report.records import from_data

    data = _advice()
    for path, value in changes:
        node = data
        try:
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = copy.deepcopy(value)
        except (KeyError, IndexError, TypeError):
            continue
    try:
        page = build_html([from_data(json.loads(json.dumps(data)), "advice.json")])
    except BaseException as e:  # noqa: BLE001
        clean(e)
        return
    assert page.startswith(b"<!doctype html>") and b"advice-front" in page


@given(st.text(alphabet="0123456789,auto -.x", max_size=20), st.integers(min_value=1, max_value=4096))
def test_vus_reads_or_refuses_any_list(text, max_vus):
    from storlab.db.runner import parse_vus

    try:
        vus = parse_vus(text, max_vus).steps
    except BaseException as e:  # noqa: BLE001
        clean(e)
        return
    assert vus and all(v >= 1 for v in vus)
    assert len([x for x in text.split(",")]) == len(vus) or text.strip().lower() == "auto"


@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True, allow_infinity=True))
def test_bench_disk_seconds_read_or_refused(tmp_path_factory, runtime, interval):
    # Only the refusals run here: a valid pair would measure the disk.
    ok = lambda v, lo: math.isfinite(v) and lo <= v <= 365 * 86400  # noqa: E731
    if ok(runtime, 0.001) and ok(interval, 0.0):
        return
    try:
        _native.bench_disk_json(str(tmp_path_factory.getbasetemp()), size_bytes=1 << 20, profile="cdm-default",
                                engine="null", runtime_s=runtime, interval_s=interval)
    except BaseException as e:  # noqa: BLE001
        clean(e)
        return
    raise AssertionError(f"--runtime {runtime} --interval {interval} was run")


ADVISE = {
    "iops": "3000", "mb_s": None, "p99_ms": None, "max_usd_month": None, "nopm": None,
    "hosts": '["aws/ec2/m5.xlarge"]', "devices": '["aws/ebs/gp3"]', "max_count": "1", "free_space": None,
    "capacity_gib": None, "layouts": None, "host_cache": None, "log": None,
}
GOAL = ("iops", "mb_s", "p99_ms", "max_usd_month", "nopm")


@st.composite
def questions(draw):
    fields = dict(ADVISE)
    for k in draw(st.lists(st.sampled_from(sorted(ADVISE)), max_size=4)):
        fields[k] = draw(st.one_of(TOML_VALUES, st.sampled_from(['["aws/ebs/*"]', '["stripe"]', '["readonly"]', '["shared"]'])))
    goal = "".join(f"{k} = {v}\n" for k, v in fields.items() if k in GOAL and v is not None)
    space = "".join(f"{k} = {v}\n" for k, v in fields.items() if k not in GOAL and v is not None)
    return ('region = "aws/us-east-1"\n[workload]\n[[workload.jobs]]\nrw = "randread"\nbs = "4k"\niodepth = 8\n'
            f'size = "10g"\nruntime_s = 1\n[goal]\n{goal}[space]\n{space}')


@given(questions())
def test_advise_reads_or_refuses_any_question(catalog, text):
    from storlab.api import PROFILES

    try:
        rec = json.loads(catalog.advise_json("q.toml", text, ".", str(PROFILES), threads=1))
        assert rec["space"]["candidates"] >= 0
    except BaseException as e:  # noqa: BLE001 — a panic is a BaseException
        clean(e)
