"""The profile recorder's arithmetic and file format, without a server:
the USL fit recovers known coefficients, the miss-ratio curve never rises,
per-type demand is split as docs/profile.md says, the file parses as TOML,
and no password survives into it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from storlab.db import profile
from storlab.errors import StorlabError

ROOT = Path(__file__).resolve().parents[2]


def usl(n: int, alpha: float, beta: float, lam: float = 1000.0) -> float:
    return lam * n / (1 + alpha * (n - 1) + beta * n * (n - 1))


@pytest.mark.parametrize("alpha,beta", [(0.05, 0.002), (0.2, 0.0), (0.0, 0.01)])
def test_usl_fit_recovers_exact_coefficients(alpha, beta):
    vus = [1, 2, 4, 8, 16, 32]
    a, b = profile.usl_fit(vus, [usl(n, alpha, beta) for n in vus])
    assert a == pytest.approx(alpha, abs=1e-9)
    assert b == pytest.approx(beta, abs=1e-9)


def test_usl_fit_never_negative():
    # Superlinear throughput (2.2x at 2 users) would need α < 0: clamped to 0.
    a, b = profile.usl_fit([1, 2, 4], [100.0, 220.0, 440.0])
    assert a >= 0 and b >= 0


def test_miss_ratio_is_made_non_increasing():
    assert profile.non_increasing([0.5, 0.3, 0.35, 0.1, 0.12, 0.0]) == [0.5, 0.3, 0.3, 0.1, 0.1, 0.0]


def run(txn: dict, per_type: dict, other: dict, cpu_s: float, vus: int = 1, tpm: float = 600.0) -> dict:
    return {"vus": vus, "tpm_client": tpm, "txn": txn,
            "server": {"per_type": per_type, "other": other, "cpu_user_s": cpu_s, "cpu_sys_s": 0.0}}


def test_per_type_demand_split_by_hand():
    # 30 "a" (2 rollbacks) and 10 "b" transactions; BEGIN/COMMIT ("other")
    # dealt out 3:1 by count; CPU 1 s dealt by execution time:
    # a: 30 + 20·0.75 = 45 ms, b: 10 + 20·0.25 = 15 ms of 60 ms.
    txn = {"a": {"commits": 28, "rollbacks": 2, "errors": 0}, "b": {"commits": 10, "rollbacks": 0, "errors": 0}}
    per_type = {"a": {"exec_ms": 30.0, "blks_hit": 300.0, "blks_read": 60.0, "blks_dirtied": 30.0, "wal_bytes": 3000.0},
                "b": {"exec_ms": 10.0, "blks_hit": 50.0, "blks_read": 0.0, "blks_dirtied": 0.0, "wal_bytes": 0.0}}
    other = {"exec_ms": 20.0, "blks_hit": 40.0, "wal_bytes": 400.0}
    r = run(txn, per_type, other, 1.0)
    p = profile.build(name="t", workload="w", kind="custom", scale=1, scale_unit="unit", sweep=[r],
                      mrc_points=[(1.0, 0.0)], mrc_method="m", provenance={}, size_run=r, read_only={"b"})
    t = {x["name"]: x for x in p["transaction"]}
    assert t["a"]["share"] == pytest.approx(0.75) and t["b"]["share"] == pytest.approx(0.25)
    assert t["a"]["page_accesses"] == pytest.approx((360 + 30) / 30)  # 30 of the 40 "other" hits
    assert t["b"]["page_accesses"] == pytest.approx((50 + 10) / 10)
    assert t["a"]["cpu_us"] == pytest.approx(1e6 * 45 / 60 / 30)
    assert t["b"]["cpu_us"] == pytest.approx(1e6 * 15 / 60 / 10)
    assert t["a"]["wal_bytes"] == pytest.approx((3000 + 300) / 30) and t["a"]["commits"] == 1.0
    assert t["b"]["wal_bytes"] == pytest.approx(100 / 10) and t["b"]["commits"] == 0.0
    assert t["a"]["rollback_share"] == pytest.approx(2 / 30)


@pytest.mark.parametrize("alpha,beta", [(0.05, 0.002), (0.2, 0.0), (0.0, 0.01)])
def test_cpu_penalty_fit_recovers_exact_coefficients(alpha, beta):
    vus = [1, 2, 4, 8]
    a, b = profile.cpu_penalty_fit(vus, [900.0 * (1 + alpha * (n - 1) + beta * n * (n - 1)) for n in vus])
    assert a == pytest.approx(alpha, abs=1e-9)
    assert b == pytest.approx(beta, abs=1e-9)


def test_profile_file_parses_and_shares_sum_to_one(tmp_path):
    txn = {"x": {"commits": 1, "rollbacks": 0, "errors": 0}, "y": {"commits": 2, "rollbacks": 0, "errors": 0}}
    # 3 transactions a run; the server's CPU per transaction grows as
    # 1 + 0.1(N − 1): 1 ms at one user, 1.1 at two, 1.3 at four.
    sweep = [run(txn, {}, {}, 0.003 * (1 + 0.1 * (n - 1)), vus=n, tpm=usl(n, 0.1, 0.01) * 60) for n in (1, 2, 4)]
    sweep[0]["server"]["relation_bytes"] = {"item": 1000, "stock": 9000}
    prov = profile.provenance({"version": "PostgreSQL 15", "settings": {"shared_buffers": "128MB"}}, scale=2, vus=[1, 2, 4],
                              command=["storlab", "bench", "db", "--db", "postgres://me:s3cret@h/db"])
    p = profile.build(name="t", workload="tpcc", kind="tpcc", scale=2, scale_unit="warehouse", sweep=sweep,
                      mrc_points=[(0.5, 0.1), (0.1, 0.4), (1.0, 0.2)], mrc_method="m", provenance=prov, size_run=sweep[0])
    out = tmp_path / "p.toml"
    profile.write(out, p)
    text = out.read_text()
    assert "s3cret" not in text
    doc = tomllib.loads(text)
    assert doc["schema_version"] == 1 and doc["kind"] == "storlab-db-profile"
    assert sum(t["share"] for t in doc["transaction"]) == pytest.approx(1.0, abs=1e-9)
    assert doc["mrc"]["cache_fraction"] == [0.1, 0.5, 1.0]
    assert doc["mrc"]["miss_ratio"] == [0.4, 0.1, 0.1]
    # ITEM is fixed; the rest, 9000 bytes, over 2 warehouses.
    assert doc["data"]["fixed_bytes"] == 1000.0 and doc["data"]["bytes_per_scale_unit"] == 4500.0
    c = doc["concurrency"]
    assert c["alpha"] == pytest.approx(0.1, abs=1e-6) and c["beta"] == pytest.approx(0.0, abs=1e-6)
    assert c["fit"] == "cpu_per_txn" and c["cpu_us_per_txn"] == pytest.approx([1000.0, 1100.0, 1300.0])
    # One user ran 1,000 transactions/s (usl(1) = 1000): 1,000 µs each, all
    # of it the server's CPU, so nothing outside.
    assert c["outside_us"] == pytest.approx(0.0, abs=1e-6)
    # The types' CPU is scaled to the one-user figure: the mix averages 1,000 µs.
    assert sum(t["share"] * t["cpu_us"] for t in doc["transaction"]) == pytest.approx(1000.0, rel=1e-5)
    assert doc["provenance"]["machine"]["cpus"] >= 1


def test_a_figure_that_is_not_a_number_is_left_out_and_said(capsys):
    # NaN used to be written as 0.0, a figure nobody measured.
    text = profile.to_toml({"schema_version": 1, "concurrency": {"alpha": float("nan"), "beta": 0.12345678},
                            "mrc": {"cache_fraction": [0.1, float("inf")]}})
    doc = tomllib.loads(text)
    assert text.startswith("# A storlab database workload profile") and "alpha" not in doc["concurrency"] and doc["mrc"]["cache_fraction"] == []
    # Six decimals: 0.12345678 → 0.123457.
    assert doc["concurrency"]["beta"] == 0.123457
    err = capsys.readouterr().err
    assert "concurrency.alpha is not a finite number" in err and "mrc.cache_fraction[1]" in err


def test_the_users_are_the_busiest_backends_and_their_idle_share_is_the_client_wait():
    # pid: [samples idle, samples]. Two users, idle 10 of 40 and 30 of 40
    # samples; the driver's monitoring connection idle in all 40; a backend
    # seen once. The two busiest (most samples not idle) are the users:
    # (10 + 30) / 80 = 0.5. With one user, the busiest alone: 10 / 40.
    samples = {11: [10, 40], 12: [30, 40], 13: [40, 40], 14: [0, 1]}
    assert profile.client_wait_share(samples, 2) == pytest.approx(0.5)
    assert profile.client_wait_share(samples, 1) == pytest.approx(0.25)
    assert profile.client_wait_share({}, 2) is None


def test_client_wait_per_transaction_from_the_sweep():
    # One user at 1,000 transactions a second, idle a tenth of its time:
    # 100 µs a transaction; four users at 2,000 a second, idle 0.2 and 0.3 in
    # two repeats: 0.2 × 4 / 2,000 = 400 µs and 600 µs, median 500.
    txn = {"x": {"commits": 1, "rollbacks": 0, "errors": 0}}
    sweep = [run(txn, {}, {}, 0.003, vus=1, tpm=60_000), run(txn, {}, {}, 0.003, vus=4, tpm=120_000),
             run(txn, {}, {}, 0.003, vus=4, tpm=120_000)]
    for r, share in zip(sweep, (0.1, 0.2, 0.3)):
        r["client_wait"] = {"idle_share": share, "samples": 100.0}
    sweep[0]["server"]["relation_bytes"] = {"stock": 1000}
    p = profile.build(name="t", workload="tpcc", kind="tpcc", scale=1, scale_unit="warehouse", sweep=sweep,
                      mrc_points=[(1.0, 0.0)], mrc_method="m", provenance={}, size_run=sweep[0])
    assert p["concurrency"]["client_wait_us"] == pytest.approx([100.0, 500.0])
    # A sweep without samples has no such field.
    for r in sweep:
        del r["client_wait"]
    p = profile.build(name="t", workload="tpcc", kind="tpcc", scale=1, scale_unit="warehouse", sweep=sweep,
                      mrc_points=[(1.0, 0.0)], mrc_method="m", provenance={}, size_run=sweep[0])
    assert "client_wait_us" not in p["concurrency"]


def test_bad_profile_out_paths(tmp_path):
    with pytest.raises(StorlabError, match="does not exist"):
        profile.check_out_path(tmp_path / "nope" / "p.toml")
    with pytest.raises(StorlabError, match="is a folder"):
        profile.check_out_path(tmp_path)
    with pytest.raises(StorlabError, match="p.toml"):
        profile.check_out_path(tmp_path / "p.json")
    assert profile.check_out_path(tmp_path / "p.toml") == tmp_path / "p.toml"


def test_record_sweep_always_starts_at_one_user():
    assert profile.record_sweep_vus([8]) == [1, 2, 4, 8]
    assert profile.record_sweep_vus([6]) == [1, 2, 4, 6]
    assert profile.record_sweep_vus([1, 3, 9]) == [1, 3, 9]


def test_read_only_types():
    # TPC-C clauses 2.6 and 2.8: Order-Status and Stock-Level write nothing.
    assert profile.read_only_types({"kind": "tpcc"}) == {"order_status", "stock_level"}
    assert profile.read_only_types({"kind": "insert"}) == set()
    # pgbench's TPC-B-like file with a read-only transaction beside its own.
    text = (ROOT / "examples/db/tpcb-like.toml").read_text() + """
[[transaction]]
name = "look"
weight = 1
statements = ["SELECT abalance FROM pgbench_accounts WHERE aid = :aid", "  select 2"]
"""
    assert profile.read_only_types({"kind": "custom", "file": "w.toml", "text": text}) == {"look"}


def test_the_shipped_tpcc_profile_names_the_rows_its_transactions_contend_for():
    # TPC-C clauses 2.4.2.2 (New-Order: D_NEXT_O_ID of one of the home
    # warehouse's 10 districts), 2.5.2.2 (Payment: D_YTD of a district, W_YTD
    # of the warehouse) and 2.7.4.2 (Delivery: each district's oldest
    # NEW-ORDER row); the read-only types lock nothing.
    from pathlib import Path

    import storlab

    text = (Path(storlab.__file__).parent / "profiles" / "tpcc-postgresql.toml").read_text()
    locks = {t["name"]: t.get("row_locks", []) for t in tomllib.loads(text)["transaction"]}
    district = {"rows": "district", "per_unit": 10}
    assert locks["new_order"] == [district]
    assert locks["payment"] == [district, {"rows": "warehouse", "per_unit": 1}]
    assert locks["delivery"] == [{"rows": "oldest new-order", "per_unit": 1}]
    assert locks["order_status"] == [] and locks["stock_level"] == []


def test_the_writeback_curve_from_buffercache_samples_by_hand():
    # (transactions so far, dirty pages, runs, checkpoint writes), two home
    # units. The first sample is the origin (5 pages, 5 runs left dirty);
    # sample i has i sampler queries of its own in its count.
    samples = [(1000, 5, 5, 7), (3001, 2005, 1005, 7), (7002, 3005, 805, 7),
               (7003, 2905, 700, 7),  # no new transactions: left out
               (11004, 2805, 800, 7),  # fewer dirty (the bgwriter): held at 1,500 a unit
               (15005, 9000, 10, 8)]  # a checkpoint began: the curve ends
    c = profile.writeback_curve(samples, 2.0)
    # (3001 − 1000 − 1) / 2 = 1000; (2005 − 5) / 2 = 1000 pages; 500 runs.
    assert c["txns_per_unit"] == [1000.0, 3000.0, 5000.0]
    assert c["pages_per_unit"] == [1000.0, 1500.0, 1500.0]
    assert c["runs_per_unit"] == [500.0, 400.0, 397.5]
    assert profile.writeback_curve(samples[:1], 2.0)["txns_per_unit"] == []


def test_a_suspect_recording_is_written_with_its_reasons_on_stderr(tmp_path, capsys):
    txn = {"x": {"commits": 1, "rollbacks": 0, "errors": 0}}
    # 1,000, 300 and 900 transactions a second at 1, 2 and 4 users in 20 s
    # windows: a fall of 70 % and a rise of 200 %, one run each (noise 10 %).
    sweep = [run(txn, {}, {}, 0.02, vus=n, tpm=x * 60) for n, x in ((1, 1000.0), (2, 300.0), (4, 900.0))]
    for r in sweep:
        r["duration_s"] = 20.0
    sweep[0]["server"]["relation_bytes"] = {"stock": 9000}
    prov = profile.provenance({"version": "PostgreSQL 15"}, scale=1, vus=[1, 2, 4], command=["storlab"])
    p = profile.build(name="t", workload="tpcc", kind="tpcc", scale=1, scale_unit="warehouse", sweep=sweep,
                      mrc_points=[(1.0, 0.0)], mrc_method="m", provenance=prov, size_run=sweep[0])
    assert p["concurrency"]["window_s"] == [20.0, 20.0, 20.0]
    out = tmp_path / "p.toml"
    suspects = profile.write(out, p)
    assert out.exists()
    assert [s["field"] for s in suspects] == ["concurrency.throughput"]
    err = capsys.readouterr().err
    assert "profile " + str(out) + " is suspect: concurrency.throughput: the sweep falls" in err
    assert "record again with --repeat 3" in err and "will refuse it" in err
    # A rising sweep is written without a word.
    for r, x in zip(sweep, (300.0, 600.0, 900.0)):
        r["tpm_client"] = x * 60
    p = profile.build(name="t", workload="tpcc", kind="tpcc", scale=1, scale_unit="warehouse", sweep=sweep,
                      mrc_points=[(1.0, 0.0)], mrc_method="m", provenance=prov, size_run=sweep[0])
    assert profile.write(out, p) == [] and capsys.readouterr().err == ""


def test_the_recording_plan_names_its_counts_windows_and_length():
    # 5 counts × 3 runs × (3 + 20) s = 345 s; 6 cache sizes and one run at
    # one user of 3 + 15 s = 126 s; the write-back run 40 s: 511 s.
    text = profile.plan(Path("p.toml"), [1, 2, 4, 8, 16], 3, 3.0, 20.0, engine="managed-postgres", kind="tpcc")
    assert "the sweep at 1, 2, 4, 8, 16 users, 3 runs each of 3 s warm-up + 20 s measured" in text
    assert text.endswith("about 8 min 31 s after the load"), text
    # MariaDB has no write-back run: 471 s.
    text = profile.plan(Path("p.toml"), [1, 2, 4, 8, 16], 3, 3.0, 20.0, engine="managed-mariadb", kind="tpcc")
    assert "write-back" not in text and text.endswith("about 7 min 51 s after the load"), text
