"""`storlab bench db --db managed-mariadb --profile-out`: a TPC-C recording
on a small managed MariaDB writes a profile in the PostgreSQL profiles'
format — InnoDB's 16 KiB page, the engine named, shares that sum to 1, redo
only on the writing types, a miss-ratio curve that never rises with the
buffer pool — which `storlab simulate` runs, warning only when a config
names another engine. How InnoDB's global counters are dealt to the types
is checked by hand in storlab-workload (recording::innodb)."""

from __future__ import annotations

import json
import shutil
import tempfile
import tomllib
from pathlib import Path

import pytest

from storlab.db.mariadb import find_bins
from storlab.errors import DatabaseError

from conftest import R5_LARGE, db_scenario


@pytest.fixture
def where():
    d = Path(tempfile.mkdtemp(prefix="storlab-test-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_a_workload_file_is_not_recorded_on_mariadb_and_nothing_runs_first(storlab, where):
    wl = Path(__file__).resolve().parents[2] / "examples" / "db" / "tpcb-like.toml"
    r = storlab("bench", "db", "--workload", str(wl), "--db", "managed-mariadb", "--dir", str(where / "m"),
                "--profile-out", str(where / "p.toml"))
    assert r.returncode == 1 and "TPC-C and the insert storm" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (where / "m").exists() and not (where / "p.toml").exists()


def recorded(storlab, out: Path, *args: str) -> dict:
    """A profile recorded on a managed MariaDB in a folder beside `out`,
    the server gone with its folder afterwards."""
    try:
        find_bins()
    except DatabaseError as e:
        pytest.skip(str(e))
    m = out.parent / "m"
    r = storlab("bench", "db", "--db", "managed-mariadb", "--dir", str(m), *args, "--profile-out", str(out))
    assert r.returncode == 0, r.stderr
    assert not m.exists()
    return tomllib.loads(out.read_text())


@pytest.mark.needs_mariadb
@pytest.mark.slow
def test_an_insert_storm_profile_is_recorded_on_mariadb(storlab, where):
    prof = recorded(storlab, where / "ins.toml", "--workload", "insert", "--vus", "1,2", "--rows-per-user", "1000",
                    "--commit-every", "100")
    assert prof["workload"] == "insert" and prof["scale_unit"] == "row" and prof["data"]["page_bytes"] == 16384
    assert prof["provenance"]["engine"] == "mariadb"
    # The recorder sweeps at least three counts (1, 2 and 4 for "1,2":
    # profile.record_sweep_vus), 1,000 rows a user: 7 × 1,000 rows.
    assert prof["provenance"]["vus"] == [1, 2, 4]
    assert prof["provenance"]["scale"] == 7000
    (t,) = prof["transaction"]
    assert t["rows_per_txn"] == 100 and t["commits"] == 1
    # Each row is at least 32 + 100 + 500 characters (key, s, payload;
    # crates/storlab-db/src/insert.rs), all logged in the redo: a commit of
    # 100 rows writes at least 63,200 bytes of it, and fills at least
    # 63,200 / 16,384 = 3.9 new pages (the clustered index alone).
    assert t["wal_bytes"] >= 63200, t
    assert t["pages_dirtied"] >= 3.0, t
    assert "row_locks" not in t


@pytest.mark.needs_mariadb
@pytest.mark.slow
def test_a_recorded_mariadb_profile_has_innodb_figures_and_simulates(storlab, where, scenario):
    out = where / "tiny.toml"
    prof = recorded(storlab, out, "--workload", "tpcc", "--warehouses", "1", "--vus", "1,2", "--rampup", "1",
                    "--duration", "3")
    assert prof["data"]["page_bytes"] == 16384  # innodb_page_size's default
    assert prof["provenance"]["database"].startswith("MariaDB")
    for name in ("innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "innodb_doublewrite", "log_bin",
                 "sync_binlog", "innodb_io_capacity", "innodb_log_file_size"):
        assert name in prof["provenance"]["settings"], name
    assert "--db managed-mariadb" in prof["provenance"]["command"]
    # The managed server runs without a binary log (log_bin OFF): no binlog bytes.
    assert prof["provenance"]["settings"]["log_bin"] == "OFF"
    assert prof["provenance"]["write_path"]["binlog_bytes_per_txn"] == 0
    assert prof["data"]["bytes_per_scale_unit"] > 0 and prof["data"]["fixed_bytes"] > 0  # ITEM
    txn = {t["name"]: t for t in prof["transaction"]}
    assert set(txn) == {"new_order", "payment", "delivery", "order_status", "stock_level"}
    assert abs(sum(t["share"] for t in txn.values()) - 1.0) < 1e-6
    # New-Order writes an order and its lines: redo. Order-Status and
    # Stock-Level read only (TPC-C clauses 2.6, 2.8): none of their own.
    assert txn["new_order"]["wal_bytes"] > 0 and txn["new_order"]["commits"] == 1
    for ro in ("order_status", "stock_level"):
        assert txn[ro]["wal_bytes"] <= 0.01 * txn["new_order"]["wal_bytes"] and txn[ro]["commits"] == 0
    assert all(t["page_accesses"] > 0 and t["cpu_us"] > 0 for t in txn.values())
    assert txn["payment"]["row_locks"] == [{"rows": "district", "per_unit": 10}, {"rows": "warehouse", "per_unit": 1}]
    mrc = prof["mrc"]
    assert len(mrc["cache_fraction"]) >= 3 and mrc["cache_fraction"] == sorted(mrc["cache_fraction"])
    assert all(0 <= m <= 1 for m in mrc["miss_ratio"])
    assert all(a >= b for a, b in zip(mrc["miss_ratio"], mrc["miss_ratio"][1:])), mrc
    # The smallest pool InnoDB takes with 16 KiB pages is 6 MiB.
    assert mrc["cache_fraction"][0] * prof["data"]["total_bytes"] >= 6 * 2**20 * 0.99
    conc = prof["concurrency"]
    assert conc["vus"][0] == 1 and len(conc["penalty"]) == len(conc["vus"]) == len(conc["wal_syncs_per_txn"])

    def simulate(engine: str) -> dict:
        cfg = R5_LARGE.replace('"aws/ec2/r5.large"', f'"aws/ec2/r5.large"\nengine = "{engine}"')
        path = scenario(db_scenario(profile=str(out), scale="10", vus="[1, 2]", configs=cfg), name=f"{engine}.toml")
        # A 3 s recording may well be suspect (a noisy dip, a short window):
        # this test is about its InnoDB figures, not its health.
        res = storlab("simulate", str(path), "--json", "--accept-suspect")
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)

    same = simulate("mariadb")
    assert all(x["nopm"] > 0 for x in same["results"]), same["results"]
    assert not [w for w in same.get("warnings", []) if "simulated with the" in w], same["warnings"]
    other = simulate("postgres")
    said = [w for w in other["warnings"] if "simulated with the mariadb profile" in w]
    assert len(said) == 1 and 'engine = "postgres"' in said[0], other["warnings"]
