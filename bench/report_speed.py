"""How fast `storlab report` builds and opens a large page, beside plotly.py.

The page: a 24-hour simulated series at 60 s periods (1,441 periods) on
three configs (gp2 100 GiB, gp2 200 GiB, gp3), one OLTP-like job — the
report's largest ordinary case. The target: it builds in under 2 s and the
browser does not stall opening it.

Rounds alternate, each in a fresh process:
- storlab: load the record and build the HTML page (storlab.report);
- plotly.py: the same figures turned into one HTML page with plotly.py's
  own `plotly.io.to_html` (plotly.js embedded once), what a user of the
  Python library would write.
Then the page is opened in headless Chromium (the system's, as the tests
do): the time from navigation until every chart is drawn, and the longest
main-thread task (PerformanceObserver "longtask"), the measure of a stall.
Prints medians, their ratio and the spread (min–max); the raw results
replace the entry report_speed of bench/results.json, and the build-time ratio goes onto
bench/RESULTS.md.

    python bench/report_speed.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import record  # noqa: E402

SCENARIO = """
title = "24 hours of 400 IOPS on gp2 100 GiB, gp2 200 GiB and gp3"
region = "aws/us-east-1"

[workload]
duration_s = 86400
period_s = 60
seed = 1

[[workload.jobs]]
name = "oltp-4k-70-30"
rw = "randrw"
rwmixread = 70
bs = "4k"
iodepth = 4
rate_iops = 400
runtime_s = 86400
""" + "".join(f"""
[configs.{name}]
host = "aws/ec2/m5.xlarge"
[[configs.{name}.pools]]
device = "aws/ebs/{dev}"
size_gib = {size}
""" for name, dev, size in (("gp2-100", "gp2", 100), ("gp2-200", "gp2", 200), ("gp3", "gp3", 100)))

STORLAB = """
import sys, time
t = time.perf_counter()
from storlab.report import build_html
from storlab.report.records import load
html = build_html([load(sys.argv[1])])
open(sys.argv[2], "wb").write(html)
print(time.perf_counter() - t)
"""

PLOTLY = """
import sys, time
t = time.perf_counter()
import plotly.graph_objects as go
import plotly.io as pio
from storlab.report import charts
from storlab.report.records import assign_labels, load
recs = [load(sys.argv[1])]
assign_labels(recs)
figs = [go.Figure(c.figure) for c in charts.all_charts(recs)]
parts = [pio.to_html(f, include_plotlyjs=(i == 0), full_html=False) for i, f in enumerate(figs)]
open(sys.argv[2], "w").write("<html><body>" + "".join(parts) + "</body></html>")
print(time.perf_counter() - t)
"""

LONGTASKS = """
window.__longtasks = [];
new PerformanceObserver(l => l.getEntries().forEach(e => window.__longtasks.push([e.startTime, e.duration])))
  .observe({type: 'longtask', buffered: true});
"""

# The peer page for opening: one small record (4 bars per chart), so what
# plotly.js's own start-up costs shows apart from what the 24 h data adds.
SMALL = {"schema_version": 1, "engine": "measure", "tool": {"name": "storlab", "version": "-", "git_sha": "-"},
         "results": [{"config": "local", "job": "RND4K-Q1T1-read", "iops": 1000.0, "bw_bytes_s": 4096000.0,
                      "lat_mean_us": 1000.0, "lat_p50_us": 900.0, "lat_p99_us": 3000.0, "binding": "measured"}], "series": []}


def timed(code: str, rec: Path, out: Path) -> float:
    r = subprocess.run([sys.executable, "-c", code, str(rec), str(out)], capture_output=True, text=True, check=True)
    return float(r.stdout.strip().splitlines()[-1])


def open_once(b, html: Path) -> dict:
    ctx = b.new_context(viewport={"width": 1400, "height": 900})
    ctx.add_init_script(LONGTASKS)
    page = ctx.new_page()
    t = time.perf_counter()
    page.goto(html.resolve().as_uri())
    page.wait_for_function("window.storlabReport && window.storlabReport.ready", timeout=120_000)
    ready = time.perf_counter() - t
    tasks = page.evaluate("window.__longtasks")
    loaded = page.evaluate("window.storlabReport.plotlyLoadedMs")
    dcl = page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
    errors = page.evaluate("window.storlabReport.errors")
    ctx.close()
    # Tasks that start once plotly.js has loaded are the charts being drawn;
    # the one that ends at the load is plotly.js starting up.
    drawing = [d for s, d in tasks if s >= loaded]
    startup = [d for s, d in tasks if s < loaded]
    return {"ready_s": round(ready, 3), "tables_shown_ms": round(dcl, 1),
            "longest_task_ms": round(max([d for _, d in tasks], default=0), 1),
            "plotly_startup_longest_task_ms": round(max(startup, default=0), 1),
            "chart_drawing_longest_task_ms": round(max(drawing, default=0), 1),
            "tasks_over_50ms": len(tasks), "errors": errors}


def open_times(html: Path, small: Path, rounds: int) -> tuple[list[dict], list[dict]]:
    """Opens the 24 h page and the small page alternately."""
    from storlab.report.browser import browser

    big, little = [], []
    with browser() as b:
        for i in range(rounds):
            pair = [(html, big), (small, little)]
            for page, acc in (pair if i % 2 == 0 else pair[::-1]):
                acc.append(open_once(b, page))
    return big, little


def spread(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.3f} (min {min(xs):.3f}, max {max(xs):.3f}, n={len(xs)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="storlab-report-speed-"))
    try:
        (tmp / "s.toml").write_text(SCENARIO)
        t = time.perf_counter()
        rec = subprocess.run([sys.executable, "-m", "storlab.cli", "simulate", str(tmp / "s.toml"), "--json"],
                             capture_output=True, text=True, check=True).stdout
        print(f"simulated 24 h on 3 configs in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        (tmp / "rec.json").write_text(rec)
        data = json.loads(rec)
        periods = max(len(s["values"]) for s in data["series"])
        points = sum(len(s["values"]) for s in data["series"])
        ours, peer = [], []
        for i in range(args.rounds):
            # alternate which goes first, so neither always meets a warm cache
            order = [("storlab", STORLAB, ours), ("plotly.py", PLOTLY, peer)]
            for name, code, acc in (order if i % 2 == 0 else order[::-1]):
                acc.append(timed(code, tmp / "rec.json", tmp / f"{name}.html"))
        size = (tmp / "storlab.html").stat().st_size
        (tmp / "small.json").write_text(json.dumps(SMALL))
        timed(STORLAB, tmp / "small.json", tmp / "small.html")
        opens, small_opens = open_times(tmp / "storlab.html", tmp / "small.html", args.rounds)
        ratio = [a / b for a, b in zip(ours, peer)]
        result = {
            "what": "storlab report of a 24 h simulated series at 60 s periods on 3 configs, beside plotly.py's to_html of the same figures",
            "periods": periods, "series": len(data["series"]), "series_points": points, "page_bytes": size,
            "build_s": {"storlab": ours, "plotly_py": peer},
            "build_ratio_storlab_over_plotly_py": ratio,
            "open_24h_page": opens,
            "open_small_page": small_opens,
            "machine": {"cpus": __import__("os").cpu_count(), "load_avg": __import__("os").getloadavg()},
        }
        print(f"{periods} periods, {len(data['series'])} series, {points:,} points; page {size / 1e6:.2f} MB")
        print(f"build storlab   s: {spread(ours)}")
        print(f"build plotly.py s: {spread(peer)}")
        print(f"ratio storlab / plotly.py: {spread(ratio)}")
        for name, acc in (("24 h page", opens), ("small page", small_opens)):
            print(f"{name}: tables shown ms: {spread([o['tables_shown_ms'] for o in acc])}")
            print(f"{name}: all charts drawn s: {spread([o['ready_s'] for o in acc])}")
            print(f"{name}: plotly.js start-up, longest task ms: {spread([o['plotly_startup_longest_task_ms'] for o in acc])}")
            print(f"{name}: drawing the charts, longest task ms: {spread([o['chart_drawing_longest_task_ms'] for o in acc])}")
        errs = [e for o in opens + small_opens for e in o["errors"]]
        if errs:
            print(f"script errors: {errs}", file=sys.stderr)
        record("report_speed", "report / plotly.py to_html, build time of a 24 h page on 3 configs",
               statistics.median(ratio), min(ratio), max(ratio), result)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
