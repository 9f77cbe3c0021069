"""storlab compare: base vs new, the ratio, and the spread rule — a mark
where |new − base| exceeds the larger of the two sides' noise, noise being
twice the standard deviation of a figure's repeats."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from conftest import EXAMPLES
from handmade import db_sweep, disk, simulated_db, with_changes
from storlab.report.compare import compare
from storlab.report.records import from_data, load


def _rows(cmp, figure):
    return {(r["config"], r["job"], r["vus"]): r for r in cmp["rows"] if r["key"] == figure}


def test_disk_marks_follow_the_spread_rule():
    base = from_data(disk({"RND4K-Q1T1-read": [1000, 1010, 990], "RND4K-Q32T1-read": [500, 520, 480]}), "base.json")
    new = from_data(disk({"RND4K-Q1T1-read": [1025, 1035, 1015], "RND4K-Q32T1-read": [540, 550, 530]}), "new.json")
    iops = _rows(compare(base, new), "iops")
    q1 = iops[("local", "RND4K-Q1T1-read", None)]
    # Best runs 1010 → 1035; both sides' runs have a stdev of 10, noise 20;
    # 25 > 20: marked, and higher IOPS is better.
    assert (q1["a"], q1["b"]) == (1010, 1035)
    assert q1["ratio"] == pytest.approx(1035 / 1010)
    assert q1["noise"] == pytest.approx(20)
    assert q1["beyond_spread"] is True and q1["better"] is True
    q32 = iops[("local", "RND4K-Q32T1-read", None)]
    # 520 → 550: base's runs 500/520/480 have a stdev of 20 (noise 40);
    # 30 < 40: within the noise, no mark.
    assert q32["noise"] == pytest.approx(40)
    assert q32["beyond_spread"] is False
    # Throughput is IOPS × 4 KiB in these records: the same verdicts.
    bw = _rows(compare(base, new), "bw_bytes_s")
    assert bw[("local", "RND4K-Q1T1-read", None)]["beyond_spread"] is True
    assert bw[("local", "RND4K-Q32T1-read", None)]["beyond_spread"] is False


def test_db_sweep_marks_use_the_repeats_stdev():
    base = from_data(db_sweep({8: (1000, 50), 16: (1800, 100)}), "base.json")
    new = from_data(db_sweep({8: (1150, 50), 16: (1900, 100)}), "new.json")
    nopm = _rows(compare(base, new), "nopm")
    # 8 VUs: 1000 → 1150, noise 2 × 50 = 100; 150 > 100: marked.
    assert nopm[("sqlite", "tpcc", 8)]["beyond_spread"] is True
    assert nopm[("sqlite", "tpcc", 8)]["ratio"] == pytest.approx(1.15)
    # 16 VUs: 1800 → 1900, noise 2 × 100 = 200; 100 < 200: not marked.
    assert nopm[("sqlite", "tpcc", 16)]["beyond_spread"] is False


def test_lower_latency_is_better():
    base = from_data(disk({"RND4K-Q1T1-read": [1000, 1010, 990]}), "b.json")
    new = from_data(disk({"RND4K-Q1T1-read": [2000, 2010, 1990]}), "n.json")
    p99 = _rows(compare(base, new), "lat_p99_us")[("local", "RND4K-Q1T1-read", None)]
    # p99 = 2e6 / IOPS here: 1980 µs → 995 µs, far beyond ~40 µs of noise.
    assert p99["ratio"] == pytest.approx(1010 / 2010)
    assert p99["beyond_spread"] is True and p99["better"] is True


def test_no_repeats_cannot_be_judged_except_between_simulated_io():
    one = from_data(disk({"RND4K-Q1T1-read": [1000]}), "a.json")
    other = from_data(disk({"RND4K-Q1T1-read": [1500]}), "b.json")
    r = _rows(compare(one, other), "iops")[("local", "RND4K-Q1T1-read", None)]
    assert r["noise"] is None and r["beyond_spread"] is None
    # Simulated database sweeps without repeats: the seed-to-seed spread
    # is unknown, so a 1 NOPM difference is not judged.
    a = simulated_db()
    b = with_changes(a, results=[dict(x, nopm=x["nopm"] + (1 if x["config"] == "io2" else 0)) for x in a["results"]])
    rows = _rows(compare(from_data(a, "a.json"), from_data(b, "b.json")), "nopm")
    assert len(rows) == 6 and all(r["beyond_spread"] is None for r in rows.values())
    # With repeats (simulate --repeats), 2 × their stdev decides: io2 at 8
    # VUs is 2,000 NOPM with a stdev of 10, so noise 20; +25 is beyond it,
    # +15 is not.
    def with_sd(rec, bump):
        return with_changes(rec, results=[dict(x, repeats=3, nopm_stdev=10.0,
                                               nopm=x["nopm"] + (bump if (x["config"], x["vus"]) == ("io2", 8) else 0))
                                          for x in rec["results"]])
    for bump, beyond in ((25, True), (15, False)):
        rows = _rows(compare(from_data(with_sd(a, 0), "a.json"), from_data(with_sd(a, bump), "b.json")), "nopm")
        r = rows[("io2", "tpcc-postgresql", 8)]
        assert r["noise"] == pytest.approx(20.0) and r["beyond_spread"] is beyond
        assert all(x["beyond_spread"] is False for k, x in rows.items() if k != ("io2", "tpcc-postgresql", 8))


def test_simulated_io_records_are_deterministic(tmp_path):
    # Two simulated I/O records of one scenario and seed: any difference is
    # a real one (noise 0), and none here.
    from conftest import run

    r = run("simulate", str(EXAMPLES / "azure-ds4-p30-host-cache.toml"), "--json", "--duration", "2")
    assert r.returncode == 0, r.stderr
    p = tmp_path / "a.json"
    p.write_text(r.stdout)
    rows = compare(load(p), load(p))["rows"]
    assert rows and all(x["noise"] == 0.0 and x["beyond_spread"] is False for x in rows)


def test_single_config_records_pair_by_job():
    # A measured "local" against a simulated config of another name: the
    # same job names pair up.
    a = from_data(disk({"RND4K-Q1T1-read": [1000, 1010, 990]}, config="local"), "a.json")
    b = from_data(disk({"RND4K-Q1T1-read": [1000, 1010, 990]}, config="gp3"), "b.json")
    rows = compare(a, b)["rows"]
    assert rows and all(r["ratio"] == pytest.approx(1.0) for r in rows)
    assert rows[0]["config"] == "local / gp3"


@pytest.fixture(scope="module")
def example_records(tmp_path_factory):
    from conftest import run

    d = tmp_path_factory.mktemp("records")
    out = {}
    for kind in ("simulate", "limits"):
        r = run(kind, str(EXAMPLES / "azure-ds4-p30-host-cache.toml"), "--json")
        assert r.returncode == 0, r.stderr
        out[kind] = d / f"{kind}.json"
        out[kind].write_text(r.stdout)
    b = d / "disk.json"
    b.write_text(json.dumps(disk({"RND4K-Q1T1-read": [1000, 1010, 990], "SEQ1M-Q8T1-read": [90, 100, 95]})))
    out["disk"] = b
    return out


@pytest.mark.parametrize("kind", ["simulate", "limits", "disk"])
def test_compare_with_itself_is_one_everywhere(storlab, example_records, kind):
    p = str(example_records[kind])
    r = storlab("compare", p, p, "--json")
    assert r.returncode == 0, r.stderr
    cmp = json.loads(r.stdout)
    assert cmp["rows"]
    for row in cmp["rows"]:
        if row["a"]:
            assert row["ratio"] == 1.0, row
        assert row["beyond_spread"] in (False, None), row
    table = storlab("compare", p, p)
    assert table.returncode == 0, table.stderr
    assert "1.00" in table.stdout and "◆ better" not in table.stdout and "◆ worse" not in table.stdout
    # every ratio cell reads 1.00 (or — where base is 0)
    ratios = {r["ratio"] for r in cmp["rows"] if r["a"]}
    assert ratios == {1.0}


def test_compare_table_marks_a_difference(storlab, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(disk({"RND4K-Q1T1-read": [1000, 1010, 990]})))
    b.write_text(json.dumps(disk({"RND4K-Q1T1-read": [1025, 1035, 1015]})))
    r = storlab("compare", str(a), str(b))
    assert r.returncode == 0, r.stderr
    assert "◆ better" in r.stdout and f"{1035 / 1010:.2f}" in r.stdout


@pytest.mark.parametrize("content, says", [
    (None, "no such record file"),
    ("{not json", "line 1 column 2: not JSON"),
    ('{"schema_version": 1, "hello": 1}', "neither 'results'"),
    ('{"schema_version": 9, "results": []}', "schema_version 9"),
    ('{"schema_version": 1, "results": [{"job": "x"}]}', "results[0]: no 'config'"),
])
def test_bad_records_are_one_line_errors(storlab, tmp_path, content, says):
    p = tmp_path / "r.json"
    if content is not None:
        p.write_text(content)
    r = storlab("compare", str(p), str(p))
    assert r.returncode == 1
    assert r.stderr.startswith(f"error: {p}") and says in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_records_without_common_jobs_are_refused(storlab, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(disk({"RND4K-Q1T1-read": [1000]}, config="x")))
    b.write_text(json.dumps(disk({"SEQ1M-Q8T1-read": [100]}, config="y")))
    r = storlab("compare", str(a), str(b))
    assert r.returncode == 1 and "share no config and job" in r.stderr and "--pair BASE_CONFIG=NEW_CONFIG" in r.stderr


def test_stdev_rule_matches_the_statistics_module():
    # The noise of runs 500/520/480 by hand: mean 500, deviations ±20 and 0,
    # sample variance (400 + 0 + 400) / 2 = 400, stdev 20, noise 40.
    assert 2 * statistics.stdev([500, 520, 480]) == 40
    rec = from_data(disk({"J": [500, 520, 480]}), "x.json")
    from storlab.report.records import spread

    assert spread(rec, rec.results[0], "iops") == pytest.approx(40)


def test_limits_records_compare_ceilings():
    def lim(iops):
        return {"schema_version": 1, "configs": [{"name": "gp3", "ceilings": {"rand4k_read_iops": iops},
                                                  "sustained": {"rand4k_read_iops": 3000}}]}
    rows = compare(from_data(lim(3000), "a.json"), from_data(lim(16000), "b.json"))["rows"]
    by = {(r["job"], r["key"]): r for r in rows}
    # gp3 provisioned from its 3,000 baseline to 16,000 IOPS: ratio 16/3;
    # limits are computed, not measured: any difference is marked.
    assert by[("ceilings", "rand4k_read_iops")]["ratio"] == pytest.approx(16000 / 3000)
    assert by[("ceilings", "rand4k_read_iops")]["beyond_spread"] is True
    assert by[("sustained", "rand4k_read_iops")]["beyond_spread"] is False


def test_pair_compares_configs_of_other_names(storlab, tmp_path):
    """Two records of one job on configs named x and y, compared with
    --pair x=y; 1010 → 1035 best-run IOPS is 1.02×, beyond
    the noise of 20 (runs' stdev 10 each side)."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(disk({"RND4K-Q1T1-read": [1000, 1010, 990]}, config="x")))
    b.write_text(json.dumps(disk({"RND4K-Q1T1-read": [1025, 1035, 1015]}, config="y")))
    r = storlab("compare", str(a), str(b), "--json", "--pair", "x=y")
    assert r.returncode == 0, r.stderr
    cmp = json.loads(r.stdout)
    (iops,) = [row for row in cmp["rows"] if row["key"] == "iops"]
    assert (iops["config"], iops["a"], iops["b"]) == ("x / y", 1010, 1035)
    assert cmp["verdicts"] == [f"x / y: new {1035 / 1010:.2f}× base's IOPS (median of 1 jobs; 1 better and 0 worse beyond the noise)"]
    r = storlab("compare", str(a), str(b), "--pair", "x=yy")
    assert r.returncode == 1 and "has no config 'yy' — nearest valid value 'y'" in r.stderr, r.stderr


def test_db_verdict_gives_the_median_ratio_and_the_cost_per_tpm():
    """NOPM 1000 → 1150 at 8 VUs (noise 100: better) and 1800 → 1900 at 16
    (noise 200: within): median ratio (1.15 + 1.0556) / 2 = 1.10; $ per
    1,000 TPM 20 and 10 → 15 and 8: medians 15 → 11.5, 0.77×."""
    base = db_sweep({8: (1000, 50), 16: (1800, 100)})
    new = db_sweep({8: (1150, 50), 16: (1900, 100)})
    for rec, usd in ((base, (20.0, 10.0)), (new, (15.0, 8.0))):
        for r, u in zip(rec["results"], usd):
            r["usd_per_1000_tpm"] = u
    cmp = compare(from_data(base, "b.json"), from_data(new, "n.json"))
    assert cmp["verdicts"] == ["sqlite: new 1.10× base's NOPM (median of 2 VU counts; 1 better and 0 worse beyond the noise); "
                               "$ per 1,000 TPM 15.00 → 11.50 (0.77×)"]


def _mutated(tmp_path, storlab, args, change):
    r = storlab(*args, "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    change(rec)
    p = tmp_path / "mutated.json"
    p.write_text(json.dumps(rec))
    return p


@pytest.mark.parametrize("change, says", [
    (lambda d: d["configs"][0].__setitem__("ceilings", "x"), "configs[0].ceilings: 'x' — expected a table of numbers"),
    (lambda d: d["configs"][-1].__setitem__("name", True), "name: 'True' — expected text"),
    (lambda d: d["configs"][0]["sustained_binding"].__setitem__("rand4k_read_iops", float("nan")),
     "configs[0].sustained_binding.rand4k_read_iops: nan — expected a table of lines"),
    (lambda d: d.__setitem__("tool", "x"), "tool: 'x' — expected a table"),
])
def test_a_mistyped_limits_record_is_an_error_in_report_and_compare(storlab, tmp_path, change, says):
    p = _mutated(tmp_path, storlab, ("limits", str(EXAMPLES / "azure-ds4-p30-host-cache.toml")), change)
    for args in (("report", str(p), "-o", str(tmp_path / "r.html")), ("compare", str(p), str(p))):
        r = storlab(*args)
        assert r.returncode == 1, (args, r.returncode, r.stderr)
        assert r.stderr.startswith(f"error: {p}: ") and says in r.stderr, r.stderr
        assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("change, says", [
    (lambda d: d["results"][0]["txn"].__setitem__("delivery", "x"), "results[0].txn.delivery: 'x'"),
    (lambda d: d["inputs"].__setitem__("scenario", {"a": 1}), "inputs.scenario:"),
])
def test_a_mistyped_database_record_is_an_error_in_report_and_compare(storlab, tmp_path, change, says):
    p = _mutated(tmp_path, storlab, ("simulate", str(EXAMPLES / "db-tpcc-gp2-burst.toml")), change)
    for args in (("report", str(p), "-o", str(tmp_path / "r.html")), ("compare", str(p), str(p))):
        r = storlab(*args)
        assert r.returncode == 1 and says in r.stderr, (args, r.returncode, r.stderr)
