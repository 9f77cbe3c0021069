"""The report's pure parts, without a browser: labels, the figures derived
from CloudWatch metrics, tipping points in the shapes records carry them,
and the summary rows."""

from __future__ import annotations

import pytest

from conftest import shared_scenario
from handmade import TOOL, db_sweep, disk, simulated_db
from storlab.report import build_html, summary_rows
from storlab.report.charts import all_charts, derived, tipping_points
from storlab.report.records import assign_labels, from_data


def test_rds_latency_is_weighted_by_operations():
    # 100 reads/s at 2 ms and 300 writes/s at 1 ms: (100 × 2 + 300 × 1) / 400 = 1.25 ms.
    s = lambda m, v: {"metric": m, "period_s": 60.0, "timestamps": [0.0], "values": [v]}  # noqa: E731
    d = derived({"ReadIOPS": s("ReadIOPS", 100.0), "WriteIOPS": s("WriteIOPS", 300.0),
                 "ReadLatency": s("ReadLatency", 0.002), "WriteLatency": s("WriteLatency", 0.001),
                 "ReadThroughput": s("ReadThroughput", 1e6), "WriteThroughput": s("WriteThroughput", 3e6)})
    assert d["iops"][1] == [400.0]
    assert d["lat"][1] == pytest.approx([1.25])
    assert d["mbs"][1] == pytest.approx([4.0])


def test_volume_metrics_per_period():
    # 12,000 ops in a 60 s period = 200 IOPS; 6 s of I/O time / 12,000 = 0.5 ms.
    s = lambda m, v: {"metric": m, "period_s": 60.0, "timestamps": [0.0, 60.0], "values": v}  # noqa: E731
    d = derived({"VolumeReadOps": s("VolumeReadOps", [12000.0, 0.0]), "VolumeWriteOps": s("VolumeWriteOps", [0.0, 0.0]),
                 "VolumeTotalReadTime": s("VolumeTotalReadTime", [6.0, 0.0]), "VolumeTotalWriteTime": s("VolumeTotalWriteTime", [0.0, 0.0])})
    assert d["iops"][1] == [200.0, 0.0]
    assert d["lat"][1] == [pytest.approx(0.5), None]  # no I/O, no latency


@pytest.mark.parametrize("tp", [
    {"gp2": {"vus": 16}, "io2": {"vus": 32}},
    [{"config": "gp2", "vus": 16, "metric": "nopm", "value": 1.0, "reached": True, "note": ""},
     {"config": "io2", "vus": 32, "metric": "nopm", "value": 1.0, "reached": True, "note": ""}],
])
def test_tipping_points_per_config_in_either_shape(tp):
    rec = simulated_db()
    rec["tipping_point"] = tp
    got = tipping_points(from_data(rec))
    assert {c: t["vus"] for c, t in got.items()} == {"gp2": 16, "io2": 32}


def test_bench_db_tipping_point_applies_to_its_one_config():
    rec = from_data(db_sweep({1: (100, 1), 2: (150, 1)}, tipping=2))
    assert tipping_points(rec)["sqlite"]["vus"] == 2


def test_labels_keep_records_apart():
    a = from_data(disk({"J": [1]}), "a.json")
    b = from_data(disk({"J": [1]}), "b.json")
    s = from_data(simulated_db(), "s.json")
    assign_labels([a, b, s])
    # two measured records share the config "local": told apart by file
    assert (a.label("local"), b.label("local")) == ("local · a", "local · b")
    assert s.label("gp2") == "gp2 · simulate"


def test_summary_takes_cost_from_a_limits_record_of_the_same_scenario():
    sim = {"schema_version": 1, "tool": TOOL, "engine": "simulate", "scenario": "x.toml", "seed": 1,
           "results": [{"config": "c", "job": "J", "iops": 100.0, "bw_bytes_s": 409600.0, "lat_p99_us": 900.0, "binding": "b"}],
           "series": [], "inputs": {"scenario": "x.toml"}}
    lim = {"schema_version": 1, "tool": TOOL, "configs": [{"name": "c", "ceilings": {}, "monthly_cost_usd": 12.5}],
           "inputs": {"scenario": "x.toml"}}
    recs = [from_data(sim, "sim.json"), from_data(lim, "lim.json")]
    assign_labels(recs)
    rows = summary_rows(recs)
    assert [r["monthly_cost_usd"] for r in rows] == [12.5, 12.5]


def test_summary_of_a_database_sweep_is_at_the_tipping_point():
    recs = [from_data(simulated_db())]
    assign_labels(recs)
    gp2 = next(r for r in summary_rows(recs) if r["config"] == "gp2")
    # tipping point 16 VUs: 1,800 NOPM, TPM 1,800 × 2.3 = 4,140
    assert (gp2["vus"], gp2["nopm"], gp2["tpm"]) == (16, 1800.0, pytest.approx(4140.0))
    assert gp2["tipping_point"] == 16


def test_nothing_to_draw_still_makes_a_page():
    rec = {"schema_version": 1, "tool": TOOL, "engine": "simulate", "results": [], "series": []}
    recs = [from_data(rec, "empty.json")]
    html = build_html(recs).decode()
    assert "<h2>Summary</h2>" in html and all_charts(recs) == []


def test_page_data_cannot_close_its_script_tag():
    rec = simulated_db()
    rec["results"][0]["binding"] = "</script><script>alert(1)</script>"
    html = build_html([from_data(rec)]).decode()
    assert "</script><script>alert(1)" not in html


def test_long_path_configs_are_shortened_in_legends():
    from storlab.report.records import short

    assert short("sqlite /tmp/pytest-of-root/pytest-7/test_x0/db/storlab.sqlite") == "sqlite …/db/storlab.sqlite"
    assert short("gp2-100") == "gp2-100"


def test_alarm_changes_group_per_alarm_and_config():
    from storlab.report.charts import alarms_of

    rec = from_data(simulated_db())
    (a,) = alarms_of(rec)
    # two changes of one alarm on gp2; the threshold from CloudWatch's reason text
    assert (a["name"], a["config"], a["changes"], a["threshold"], a["metric"]) == \
        ("burst-below-half", "gp2", [(0.0, "OK"), (180.0, "ALARM")], 50.0, "BurstBalance")


def test_the_handmade_simulated_sweep_follows_the_record_schema():
    # the database results, tipping points and alarms the report reads are
    # the ones docs/record.schema.json (storlab-record) defines
    import json

    jsonschema = pytest.importorskip("jsonschema")
    from conftest import ROOT

    schema = json.loads((ROOT / "docs" / "record.schema.json").read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(simulated_db())


def _io_series(duration_s: float, period_s: float, iops: float) -> list[dict]:
    """One pool's CloudWatch volume metrics: `iops` steady over the run."""
    n = int(duration_s // period_s)
    ts = [i * period_s for i in range(n)]
    m = lambda metric, v: {"config": "c", "resource": "pool all", "metric": metric, "unit": "Count",  # noqa: E731
                           "period_s": period_s, "timestamps": ts, "values": [v] * n}
    return [m("VolumeReadOps", iops * period_s), m("VolumeWriteOps", 0.0)]


def test_records_of_different_lengths_each_get_their_own_time_axis():
    # A 70 s sweep (10 s periods) beside a 4 h run (60 s periods): two
    # panels. The sweep's last period starts at 60 s = 1 minute on its own
    # axis; the run's last at 14,340 s = 3.983 hours on its own.
    short = {"schema_version": 1, "tool": TOOL, "engine": "simulate", "workload": "w", "seed": 1, "results": [],
             "series": _io_series(70, 10, 500.0)}
    long = {**short, "series": _io_series(4 * 3600, 60, 300.0)}
    recs = [from_data(short, "sweep.json"), from_data(long, "day.json")]
    assign_labels(recs)
    (ch,) = [c for c in all_charts(recs) if c.id == "series-iops"]
    fig = ch.figure
    assert fig["layout"]["grid"]["rows"] == 2
    (a,) = [t for t in fig["data"] if t["xaxis"] == "x"]
    (b,) = [t for t in fig["data"] if t["xaxis"] == "x2"]
    assert a["x"][-1] == pytest.approx(1.0) and a["y"][0] == pytest.approx(500.0)
    assert b["x"][-1] == pytest.approx(14340 / 3600) and b["yaxis"] == "y2"
    assert fig["layout"]["xaxis"]["title"]["text"] == "minutes from the start"
    assert fig["layout"]["xaxis2"]["title"]["text"] == "hours from the start"


def test_one_record_keeps_one_axis():
    rec = {"schema_version": 1, "tool": TOOL, "engine": "simulate", "workload": "w", "seed": 1, "results": [],
           "series": _io_series(600, 60, 100.0)}
    (ch,) = [c for c in all_charts([from_data(rec)]) if c.id == "series-iops"]
    assert "grid" not in ch.figure["layout"] and {t["xaxis"] for t in ch.figure["data"]} == {"x"}


GP2_ALARM = shared_scenario("gp2-100-burst-alarm")


def test_a_simulated_alarm_threshold_is_drawn_on_its_metrics_chart(tmp_path):
    # The scenario's alarm: BurstBalance < 50 (its `threshold`), on a gp2
    # 100 GiB drained at 3,000 IOPS (2,700 credits/s: empty at 2,000 s).
    from storlab import api

    p = tmp_path / "alarm.toml"
    p.write_text(GP2_ALARM)
    rec = from_data(api.simulate(p), "alarm.json")
    (ch,) = [c for c in all_charts([rec]) if c.id == "series-balance"]
    lines = [s for s in ch.figure["layout"]["shapes"] if s["type"] == "line" and s.get("yref") == "y"]
    assert [(s["y0"], s["y1"], s["x0"], s["x1"]) for s in lines] == [(50.0, 50.0, 0, 1)]
    assert "threshold 50" in ch.note


def test_bars_are_linear_from_zero_in_units_that_fit():
    # 100,000 IOPS beside 1,000: still a linear axis from zero. p99 of a
    # 15K disk at 40 s: 40,000,000 µs → 40 on an axis in seconds.
    fast = disk({"RND4K-Q32T1-read": [100000.0]}, config="nvme")
    slow = disk({"RND4K-Q32T1-read": [1000.0]}, config="hdd")
    slow["results"][0]["lat_p99_us"] = 40_000_000.0
    recs = [from_data(fast, "a.json"), from_data(slow, "b.json")]
    assign_labels(recs)
    charts = {c.id: c for c in all_charts(recs)}
    for cid in ("io-iops", "io-mbs", "io-p99"):
        x = charts[cid].figure["layout"]["xaxis"]
        assert (x["type"], x["rangemode"]) == ("linear", "tozero"), cid
    p99 = charts["io-p99"].figure
    assert p99["layout"]["xaxis"]["title"]["text"] == "s"
    assert max(v for t in p99["data"] for v in t["x"]) == pytest.approx(40.0)
