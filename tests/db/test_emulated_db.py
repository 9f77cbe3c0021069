"""A real database on an emulated volume: `storlab bench db --emulate`
mounts the config's volume under --dir, runs PostgreSQL's cluster on it, and
unmounts; the record says so."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from storlab.db.managed import find_pg_bin
from storlab.errors import DatabaseError

pytestmark = [pytest.mark.needs_fuse, pytest.mark.needs_postgres, pytest.mark.slow]

SCENARIO = """
title = "PostgreSQL on an emulated gp2, its WAL on a gp2 of its own"
[configs.gp2]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp2.pools]]
role = "data"
device = "aws/ebs/gp2"
size_gib = 100
[[configs.gp2.pools]]
role = "log"
device = "aws/ebs/gp2"
size_gib = 50
"""

# The initial population of one warehouse (TPC-C v5.11, clause 4.3 and the
# typical row sizes of clause 1.4 / table 4.1): STOCK 100,000 x 306 B,
# CUSTOMER 30,000 x 655 B, ORDER_LINE ~300,000 x 54 B, ITEM 100,000 x 82 B,
# HISTORY 30,000 x 46 B, ORDERS 30,000 x 24 B = 30.6 + 19.65 + 16.2 + 8.2 +
# 1.38 + 0.72 = 76.8 MB of rows. COPY logs every row in the WAL, and the
# tables' pages reach the data files by the shutdown checkpoint at the
# latest: each pool writes at least 70 MB.
LOADED_BYTES = 70e6


def test_tpcc_on_managed_postgres_on_an_emulated_gp2():
    try:
        find_pg_bin()
    except DatabaseError as e:
        pytest.skip(str(e))
    d = Path(tempfile.mkdtemp(prefix="storlab-test-"))
    d.chmod(0o755)
    try:
        sc = d / "gp2.toml"
        sc.write_text(SCENARIO)
        # Loading a warehouse through a paced volume takes minutes here: a
        # longer limit than the shared helper's.
        r = subprocess.run([sys.executable, "-m", "storlab.cli", "bench", "db", "--workload", "tpcc", "--db", "managed-postgres",
                            "--dir", str(d / "run"), "--emulate", f"{sc}:gp2", "--warehouses", "1", "--vus", "2",
                            "--rampup", "2", "--duration", "8", "--json"], capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr
        rec = json.loads(r.stdout)
        assert rec["engine"] == "emulate"
        assert rec["emulated"] == {"scenario": str(sc), "config": "gp2"}
        assert rec["results"][0]["nopm"] > 0
        # PostgreSQL's WAL on the log pool (initdb --waldir on its second
        # mount), the tables on the data pool: each pool's own metrics.
        written = {s["resource"]: sum(s["values"]) for s in rec["series"] if s["metric"] == "VolumeWriteBytes"}
        assert set(written) == {"pool data", "pool log"}, written
        assert written["pool log"] >= LOADED_BYTES, written
        assert written["pool data"] >= LOADED_BYTES, written
        # Nothing left mounted, and the folders storlab made are gone: its
        # temporary ones and --dir itself, which did not exist before.
        with open("/proc/self/mountinfo") as f:
            assert str(d) not in f.read()
        assert not (d / "run").exists()
        assert sorted(p.name for p in d.iterdir()) == ["gp2.toml"]
    finally:
        shutil.rmtree(d, ignore_errors=True)
