"""Profile health: `simulate` and `advise` refuse a suspect database
profile with one error line per reason and its fix, exit 1 and no output
file; with `--accept-suspect` (or `accept_suspect = true`) they use it and
say so in every output. Hand-made profiles; the expected words follow from
their numbers."""

from __future__ import annotations

import json

from conftest import R5_LARGE, db_scenario
from test_simulate_db import CPU_PROFILE

# The noisy recording: 26,000 NOPM at 1 user, 8,900 at 2, 24,000 at
# 4, one run each. CPU_PROFILE counts half its transactions as New-Orders,
# so NOPM = tx/s × 60 × 0.5 = tx/s × 30: 866.666667, 296.666667 and 800
# transactions a second. It falls by 66 % and rises by 170 %, beyond the
# 10 % noise of a sweep without repeats.
NOISY = CPU_PROFILE + "vus = [1, 2, 4]\nthroughput = [866.666667, 296.666667, 800.0]\n"
REASON = ("concurrency.throughput: the sweep falls from 26,000 NOPM at 1 user to 8,900 at 2 users "
          "and rises again to 24,000 at 4 users")


def write(tmp_path, scenario, profile: str, extra: str = ""):
    (tmp_path / "p.toml").write_text(profile)
    return scenario(db_scenario(profile="p.toml", vus="[1, 2]", extra=extra))


def test_simulate_refuses_the_noisy_profile_with_the_reason_and_its_fix(storlab, scenario, tmp_path):
    path = write(tmp_path, scenario, NOISY)
    out = tmp_path / "cw.json"
    r = storlab("simulate", str(path), "--json", "--cloudwatch", str(out))
    assert r.returncode == 1, r.stderr
    assert r.stdout == "" and not out.exists()
    assert "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert all(line.startswith("error: ") for line in lines), lines
    # One line for the one reason, with its fix; one saying how to use it anyway.
    assert len(lines) == 2, lines
    assert REASON in lines[0] and "record again with --repeat 3 --duration 60" in lines[0], lines[0]
    assert "--accept-suspect" in lines[1]


def test_accepted_the_warning_is_in_the_json_record_the_table_and_beside_the_csv(storlab, scenario, tmp_path):
    path = write(tmp_path, scenario, NOISY)
    r = storlab("simulate", str(path), "--json", "--accept-suspect")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    said = [w for w in rec["warnings"] if "is suspect" in w]
    assert len(said) == 1 and REASON in said[0], rec["warnings"]
    assert rec["inputs"]["accept_suspect"] is True
    r = storlab("simulate", str(path), "--accept-suspect")
    assert r.returncode == 0 and "suspect" in r.stdout, r.stdout
    r = storlab("simulate", str(path), "--csv", "--accept-suspect")
    assert r.returncode == 0 and "is suspect" in r.stderr, r.stderr
    # The scenario's own field does the same.
    r = storlab("simulate", str(write(tmp_path, scenario, NOISY, "accept_suspect = true")), "--json")
    assert r.returncode == 0, r.stderr
    assert any(REASON in w for w in json.loads(r.stdout)["warnings"])


def test_a_clean_sweep_runs_without_a_word_of_suspicion(storlab, scenario, tmp_path):
    # 26,000, 40,000, 48,000 NOPM: rising all the way.
    clean = CPU_PROFILE + "vus = [1, 2, 4]\nthroughput = [866.666667, 1333.333333, 1600.0]\n"
    r = storlab("simulate", str(write(tmp_path, scenario, clean)), "--json")
    assert r.returncode == 0, r.stderr
    assert not any("suspect" in w for w in json.loads(r.stdout)["warnings"])


def test_advise_refuses_the_noisy_profile_too(storlab, scenario, tmp_path):
    (tmp_path / "p.toml").write_text(NOISY)
    q = scenario('[workload.database]\nprofile = "p.toml"\nscale = 10\nvus = [1, 2]\nrampup_s = 1\nduration_s = 10\n'
                 '[goal]\nnopm = 1000\n[space]\nregion = "aws/us-east-1"\nhosts = ["aws/ec2/r5.large"]\n'
                 'devices = ["aws/ebs/gp3"]\nmax_count = 1\n', "q.toml")
    r = storlab("advise", str(q))
    assert r.returncode == 1 and "Traceback" not in r.stderr and r.stdout == "", r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 2 and REASON in lines[0] and "--accept-suspect" in lines[1], lines
    r = storlab("advise", str(q), "--json", "--accept-suspect")
    assert r.returncode == 0, r.stderr
    assert any(REASON in w for w in json.loads(r.stdout)["warnings"])
