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
title = "PostgreSQL on an emulated gp2"
[configs.gp2]
host = "aws/ec2/r5b.24xlarge"
[[configs.gp2.pools]]
device = "aws/ebs/gp2"
size_gib = 100
"""


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
        # Nothing left mounted, and the temporary folders are gone.
        with open("/proc/self/mountinfo") as f:
            assert str(d) not in f.read()
        assert not any(p.name.startswith("storlab-emulate-") for p in (d / "run").iterdir())
    finally:
        shutil.rmtree(d, ignore_errors=True)
