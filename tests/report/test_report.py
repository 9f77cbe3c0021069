"""storlab report: every page is opened in a real headless Chromium (Debian's
`chromium`, driven by playwright), must load without a script error and
without asking the network for anything, and each chart must hold the
record's data points — counted in the chart's own data and, for bars and
markers, in the DOM. Each page is also saved as a screenshot (printed
path) to be looked at."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import EXAMPLES, run, run_process
from handmade import db_sweep, disk, simulated_db

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is installed by make install")
pytestmark = pytest.mark.needs_browser

BALANCES = ("BurstBalance", "EBSIOBalance%", "EBSByteBalance%")
PCT_KEYS = ("lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us", "lat_p9999_us", "lat_max_us")


@pytest.fixture(scope="module")
def chromium():
    from storlab.report.browser import browser

    with browser() as b:
        yield b


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    d = Path(os.environ.get("STORLAB_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    d.mkdir(parents=True, exist_ok=True)
    return d


# In the page: per chart, the points its traces hold (record data only:
# the tipping-point star is marked as an annotation) and the SVG points.
COUNT_JS = """() => Array.from(document.querySelectorAll('.plot')).map(e => ({
  id: e.id, kind: e.dataset.kind, declared: +e.dataset.points,
  drawn: (e.data || []).filter(t => t.meta !== 'annotation').reduce((n, t) => n + (t.y || []).filter(v => v !== null && v !== undefined).length, 0),
  dom: e.querySelectorAll('.point').length,
  annotations: (e.data || []).filter(t => t.meta === 'annotation').reduce((n, t) => n + t.y.length, 0)}))"""


def open_page(browser, html: Path, shots: Path) -> tuple[object, dict]:
    """Opens the page with every non-file request refused and counted;
    returns the page and its charts by id."""
    from storlab.report.browser import open_report

    asked: list[str] = []
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})

    def refuse(route):
        if not route.request.url.startswith(("file:", "data:", "blob:")):
            asked.append(route.request.url)
            return route.abort()
        return route.continue_()

    ctx.route("**/*", refuse)
    page, errors = open_report(ctx, html)
    assert errors == [], errors
    assert asked == [], f"the page asked the network for {asked}"
    charts = {c["id"]: c for c in page.evaluate(COUNT_JS)}
    for c in charts.values():
        assert c["drawn"] == c["declared"], c
        if c["kind"] in ("bars", "ceilings", "distribution", "txn", "sweep"):
            # one SVG point per bar or marker, plus the star
            assert c["dom"] == c["declared"] + c["annotations"], c
    shot = shots / f"{html.stem}.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")
    return page, charts


def expected(records: list[dict]) -> dict[str, int]:
    """What each chart should hold, counted from the records themselves."""
    io = [r for rec in records for r in rec.get("results", []) if r.get("vus") is None and "job" in r]
    series = [s for rec in records for s in rec.get("series", [])]
    exp = {
        "io-iops": len(io),
        "io-latency": sum(1 for r in io for k in PCT_KEYS if (r.get(k) or 0) > 0),
        "series-iops": sum(len(s["values"]) for s in series if s["metric"] == "VolumeReadOps"),
        "series-balance": sum(len(s["values"]) for s in series if s["metric"] in BALANCES)
        + sum(len(rec.get("alarms", [])) for rec in records),
        "db-nopm": sum(1 for rec in records for r in rec.get("results", []) if r.get("nopm") is not None),
        "ceilings-iops": sum(2 * 2 for rec in records for c in rec.get("configs", [])),
    }
    return {k: v for k, v in exp.items() if v}


def check_counts(charts: dict, records: list[dict]) -> None:
    exp = expected(records)
    assert exp, "the records hold nothing to draw"
    for cid, n in exp.items():
        assert cid in charts, f"no chart {cid} though the records have {n} points for it"
        assert charts[cid]["declared"] == n, (cid, charts[cid], n)


def make_report(tmp_path: Path, name: str, records: list[dict], *extra: str) -> Path:
    paths = []
    for i, rec in enumerate(records):
        p = tmp_path / f"{name}-{i}.json"
        p.write_text(json.dumps(rec))
        paths.append(str(p))
    out = tmp_path / f"{name}.html"
    # --png drives a browser of its own: in a process of its own, as this
    # module's browser holds the sync API's loop in this one.
    r = (run_process if "--png" in extra else run)("report", *paths, "-o", str(out), *extra)
    assert r.returncode == 0, r.stderr
    return out


def test_handmade_database_and_disk_records(chromium, shots, tmp_path):
    recs = [simulated_db(), disk({"RND4K-Q1T1-read": [1000, 1010, 990], "SEQ1M-Q8T1-read": [90, 100, 95]}),
            db_sweep({1: (900, 40), 2: (1500, 60), 4: (1550, 50)}, tipping=2)]
    html = make_report(tmp_path, "handmade", recs)
    page, charts = open_page(chromium, html, shots)
    check_counts(charts, recs)
    # IOPS of gp2's data pool: (6,000 reads + 3,000 writes) / 60 s = 150 in
    # the first periods, (3,000 + 3,000) / 60 = 100 later; average latency
    # (6 s + 3 s) / 9,000 I/Os = 1 ms, then 9 s / 6,000 = 1.5 ms.
    trace = lambda cid, name: page.evaluate(  # noqa: E731
        "([id, n]) => document.getElementById(id).data.find(t => t.name.startsWith(n)).y", [cid, name])
    assert trace("series-iops", "gp2") == [150, 150, 150, 100, 100, 100]
    assert trace("series-lat", "gp2") == pytest.approx([1.0, 1.0, 1.0, 1.5, 1.5, 1.5])
    # the alarm: its two state changes drawn at the threshold, 50 %
    alarm = page.evaluate("document.getElementById('series-balance').data.find(t => t.name.startsWith('alarm'))")
    assert alarm["text"] == ["OK", "ALARM"] and alarm["y"] == [50, 50]
    # tipping points: gp2 and io2 at 16 VUs, the bench db sweep at 2
    stars = page.evaluate("document.getElementById('db-nopm').data.filter(t => t.meta === 'annotation').map(t => t.x[0])")
    assert sorted(stars) == [2, 16, 16]
    text = page.inner_text("body")
    # $ per 1,000 TPM at gp2's tipping point: $1,000 a month over
    # 1,800 NOPM × 2.3 = 4,140 TPM → 1000 / 4.14 = $241.55.
    assert "$241.55" in text
    assert "burst-below-half" in text and "0:03:00 → ALARM" in text
    assert "aws/ebs/gp2 latency (placeholder)" in text  # provenance: unverified figures
    assert "0123456789ab" in text  # git sha


def test_sections_without_data_are_skipped(chromium, shots, tmp_path):
    html = make_report(tmp_path, "disk-only", [disk({"RND4K-Q1T1-read": [1000]})])
    _, charts = open_page(chromium, html, shots)
    assert set(charts) == {"io-iops", "io-mbs", "io-p99", "io-latency"}


def test_png_writes_each_chart(tmp_path):
    html = make_report(tmp_path, "png", [simulated_db()], "--png", str(tmp_path / "png"))
    pngs = sorted((tmp_path / "png").glob("*.png"))
    ids = {p.stem for p in pngs}
    assert {"series-iops", "series-balance", "db-nopm", "db-tpm", "db-txn"} <= ids
    for p in pngs:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000, p
    assert html.stat().st_size < 8e6  # plotly.js is ~4.8 MB of it


def test_simulate_report_flag(chromium, shots, tmp_path):
    out = tmp_path / "azure.html"
    r = run("simulate", str(EXAMPLES / "azure-ds4-p30-host-cache.toml"), "--json", "--report", str(out))
    assert r.returncode == 0, r.stderr
    _, charts = open_page(chromium, out, shots)
    check_counts(charts, [json.loads(r.stdout)])


def test_report_flag_refuses_a_bad_path_before_running(tmp_path):
    r = run("simulate", str(EXAMPLES / "azure-ds4-p30-host-cache.toml"), "--report", str(tmp_path / "no" / "r.html"))
    assert r.returncode == 1 and "no such folder" in r.stderr


EXAMPLE_FILES = sorted(p for p in EXAMPLES.glob("*.toml") if not p.name.startswith("advise-"))


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=[p.stem for p in EXAMPLE_FILES])
def test_every_example_report(chromium, shots, tmp_path, path):
    recs = []
    for kind in ("simulate", "limits"):
        r = run(kind, str(path), "--json")
        assert r.returncode == 0, r.stderr
        recs.append(json.loads(r.stdout))
    html = make_report(tmp_path, path.stem, recs)
    _, charts = open_page(chromium, html, shots)
    check_counts(charts, recs)


@pytest.mark.slow
def test_measured_records_report(chromium, shots, tmp_path):
    """bench disk and bench db end with their reports (--report)."""
    d = tmp_path / "disk"
    d.mkdir()
    disk_html = tmp_path / "bench-disk.html"
    r = run("bench", "disk", "--path", str(d), "--size", "16MiB", "--runs", "2", "--runtime", "0.3", "--interval", "0",
            "--json", "--report", str(disk_html))
    assert r.returncode == 0, r.stderr
    disk_rec = json.loads(r.stdout)
    _, charts = open_page(chromium, disk_html, shots)
    check_counts(charts, [disk_rec])
    db_html = tmp_path / "bench-db.html"
    r = run("bench", "db", "--db", "sqlite", "--dir", str(tmp_path / "db"), "--vus", "1,2", "--duration", "2",
            "--rampup", "0.5", "--repeat", "2", "--json", "--report", str(db_html))
    assert r.returncode == 0, r.stderr
    db_rec = json.loads(r.stdout)
    _, charts = open_page(chromium, db_html, shots)
    check_counts(charts, [db_rec])
    assert charts["db-nopm"]["declared"] == 2  # two VU counts
    # simulated and measured side by side in one page
    both = make_report(tmp_path, "side-by-side", [disk_rec, db_rec, simulated_db()])
    open_page(chromium, both, shots)
