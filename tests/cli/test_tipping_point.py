"""The tipping point at the knee (DESIGN.md): the fewest virtual users whose
NOPM reaches 95 % of the sweep's highest, and $ per 1,000 TPM read there and
at the highest. Hand-made sweeps; the rule itself is unit-tested in
crates/storlab-record (db.rs)."""

from __future__ import annotations

import json

from rich.console import Console

from storlab import _native
from storlab.export.simulate import cost_points, db_tables


def row(vus: int, nopm: float, usd_month: float = 10_000.0) -> dict:
    tpm = 2.2 * nopm
    return {"config": "io2", "job": "tpcc", "vus": vus, "nopm": nopm, "tpm": tpm, "txn": {}, "pools": {},
            "binding": "host EBS", "cpu_utilization": 0.5, "monthly_cost_usd": usd_month,
            "usd_per_1000_tpm": usd_month / (tpm / 1000)}


# The io2 Block Express sweep: NOPM rises 50 % from 32 to 64 users,
# where the host's EBS cap binds, then flattens. 0.95 × 30,000 = 28,500: 64
# users are the knee; the highest is also at 64. At 128 users 29,500 NOPM.
SWEEP = [(16, 12_000.0), (32, 20_000.0), (64, 30_000.0), (128, 29_500.0), (256, 29_000.0)]


def test_the_knee_of_a_capped_sweep():
    tip = {"config": "io2", "vus": 64, "metric": "nopm", "value": 30_000.0, "reached": True, "note": "",
           "highest_vus": 64, "highest_value": 30_000.0}
    rows = [row(v, n) for v, n in SWEEP]
    points = cost_points(rows, tip)
    assert [(label, r["vus"]) for label, r in points] == [("at the tipping point", 64)]
    # $10,000 a month / (66,000 TPM / 1,000) = $151.52 per 1,000 TPM.
    assert round(points[0][1]["usd_per_1000_tpm"], 2) == 151.52


def test_table_shows_cost_at_the_tipping_point_and_at_the_highest():
    # 1,000 → 1,900 → 2,000 NOPM: the knee is 2 users (≥ 1,900), the highest
    # 4. TPM = 2.2 × NOPM: 4,180 and 4,400 TPM; $1,000 a month gives
    # $239.23 and $227.27 per 1,000 TPM, printed in whole dollars.
    rows = [row(1, 1000.0, 1000.0), row(2, 1900.0, 1000.0), row(4, 2000.0, 1000.0)]
    tip = {"config": "io2", "vus": 2, "metric": "nopm", "value": 1900.0, "reached": True, "note": "knee",
           "highest_vus": 4, "highest_value": 2000.0}
    record = {"scenario": "s.toml", "workload": "tpcc", "seed": 1, "results": rows, "tipping_point": [tip],
              "inputs": {"metric": "nopm"}}
    console = Console(width=200, record=True, color_system=None)
    console.print(db_tables(record))
    text = console.export_text()
    assert "at the tipping point: $239 per 1,000 TPM a month at 2 VUs" in text, text
    assert "at the highest: $227 per 1,000 TPM a month at 4 VUs" in text, text


def test_bench_db_auto_sweep_stops_two_steps_past_the_knee():
    # bench db's automatic sweep, through the binding: 0.95 × 30,000 =
    # 28,500, so the knee is the third value; the two steps after it
    # (29,500 and 29,000) end the sweep.
    sweep = _native.DbSweep.auto(1024)
    runs = lambda v, n: json.dumps([{"vus": v, "nopm": n, "workload": "tpcc", "db": "sqlite", "repeat": 1}])  # noqa: E731
    assert [sweep.record_step(v, "nopm", runs(v, n)) for v, n in SWEEP] == [False, False, False, False, True]


def test_a_sweep_still_rising_has_no_cost_at_a_tipping_point():
    # 1,000 → 1,500 → 2,000 NOPM: still rising at its last step, so the
    # cost is read at the best step so far, never "at the tipping point".
    rows = [row(1, 1000.0, 1000.0), row(2, 1500.0, 1000.0), row(4, 2000.0, 1000.0)]
    tip = {"config": "io2", "vus": 4, "metric": "nopm", "value": 2000.0, "reached": False, "note": "still rising",
           "highest_vus": 4, "highest_value": 2000.0}
    assert [label for label, _ in cost_points(rows, tip)] == ["at the best step so far"]
    record = {"scenario": "s.toml", "workload": "tpcc", "seed": 1, "results": rows, "tipping_point": [tip],
              "inputs": {"metric": "nopm"}}
    console = Console(width=200, record=True, color_system=None)
    console.print(db_tables(record))
    text = console.export_text()
    assert "no tipping point yet: 4 VUs" in text and "at the tipping point" not in text, text
