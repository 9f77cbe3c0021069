"""The advice report (`storlab advise --report`, `storlab report
ADVICE.json`), opened in a real headless Chromium as the run reports are:
every outcome of the record drawn once, the front in order of cost with
rising throughput, the goal where the record puts it, the cheapest
recommendation's cost and config in its table. Expected values come from
the record itself, or from the catalog's prices worked by hand."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES, run
from handmade import simulated_db
from test_report import chromium, open_page, shots  # noqa: F401  (fixtures)

# One 4 KiB random-read job on 100 GiB, an m5.xlarge and one gp3 only:
# seconds to answer. gp3's IOPS steps for a goal of 4,000: the 3,000
# included, then the goal ×1, ×1.5, ×2 — 3,000, 4,000, 6,000, 8,000; its
# size does not raise them, so the front is the 125 GiB volume at each.
QUESTION = """
title = "4,000 IOPS of 4 KiB reads"
region = "aws/us-east-1"
[workload]
[[workload.jobs]]
name = "reads"
rw = "randread"
bs = "4k"
iodepth = 32
size = "100g"
runtime_s = 10
[goal]
iops = 4000
[space]
hosts = ["aws/ec2/m5.xlarge"]
devices = ["aws/ebs/gp3"]
max_count = 1
[configs.today]
host = "aws/ec2/m5.xlarge"
[[configs.today.pools]]
device = "aws/ebs/gp3"
size_gib = 125
"""

# In the page: the scatter's traces, goal line and marker count.
CHART_JS = """() => { const gd = document.getElementById('advice-front');
  return {traces: gd.data.map(t => ({name: t.name, meta: t.meta || null, x: t.x, y: t.y, hover: t.customdata || []})),
          shapes: gd.layout.shapes.map(s => ({name: s.name, y0: s.y0, y1: s.y1})),
          dom: gd.querySelectorAll('.point').length}; }"""


def distinct_outcomes(rec: dict) -> set[tuple[str, str]]:
    """An outcome is a config and how it was judged: the screen's bound or
    the simulator. The front and the cheaper misses share screened ones."""
    keys = {(o["name"], o["verified_by"]) for k in ("recommendations", "front", "cheaper_failures") for o in rec[k]}
    return keys | {("config", f["config"]) for f in rec["findings"]}


def advise_with_report(tmp_path: Path, question: Path, name: str = "advice") -> tuple[dict, Path]:
    out = tmp_path / f"{name}.html"
    r = run("advise", str(question), "--json", "--report", str(out))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), out


def front_of(chart: dict) -> dict:
    (line,) = [t for t in chart["traces"] if t["meta"] == "annotation"]
    return line


def check_chart(page, rec: dict) -> dict:
    """What holds for every advice page: each outcome once, the front in
    order of cost with rising throughput."""
    chart = page.evaluate(CHART_JS)
    n = len(distinct_outcomes(rec))
    declared = int(page.get_attribute("#advice-front", "data-points"))
    assert declared == n and chart["dom"] == n, (declared, chart["dom"], n)
    front = front_of(chart)
    assert front["x"] == sorted(o["monthly_cost_usd"] for o in rec["front"])
    assert all(a < b for a, b in zip(front["y"], front["y"][1:])), front["y"]
    return chart


@pytest.mark.needs_browser
def test_every_outcome_once_the_front_and_the_goal(chromium, shots, tmp_path, scenario):  # noqa: F811
    rec, html = advise_with_report(tmp_path, scenario(QUESTION))
    page, _ = open_page(chromium, html, shots)
    chart = check_chart(page, rec)
    # The front's four 125 GiB volumes, the recommendation as simulated, the
    # cheaper miss (the front's first point, drawn once) and today's config.
    assert len(distinct_outcomes(rec)) == 6
    # The front in IOPS: the screen's bound (a share of the goal) × 4,000 —
    # gp3's caps at each step.
    assert front_of(chart)["y"] == pytest.approx([3000, 4000, 6000, 8000])
    (goal,) = [s for s in chart["shapes"] if s["name"] == "goal"]
    assert goal["y0"] == goal["y1"] == rec["goal"]["iops"] == 4000
    # The cheapest recommendation: $140.16 for the m5.xlarge ($0.192 an
    # hour × 730), 125 GiB × $0.08 and 1,000 IOPS above the included at
    # $0.005 — $155.16 a month; its config table pasted as advise wrote it.
    top = rec["recommendations"][0]
    assert top["monthly_cost_usd"] == pytest.approx(0.192 * 730 + 125 * 0.08 + 1000 * 0.005, abs=0.01)
    table = page.inner_text("table.recommendations")
    assert "$155.16" in table
    assert page.inner_text("table.recommendations pre.toml") == top["config_toml"].rstrip()
    # Hover names the config: host and pools; a miss says what it misses.
    (recommended,) = [t for t in chart["traces"] if t["name"].startswith("recommended")]
    assert "aws/ec2/m5.xlarge" in recommended["hover"][0] and "1 × aws/ebs/gp3, 125 GiB, 4000 IOPS" in recommended["hover"][0]
    (miss,) = [t for t in chart["traces"] if t["name"].startswith("cheaper")]
    assert rec["cheaper_failures"][0]["misses"] in miss["hover"][0]
    assert "Under-provisioned" in page.inner_text("table.findings")


@pytest.mark.needs_browser
def test_a_latency_goal_is_drawn_as_the_share_of_the_goal(chromium, shots, tmp_path, scenario):  # noqa: F811
    # With a p99 as well, the screen's bound is the least share of either:
    # the goal line sits at 1 (100 %), the front at the record's bounds.
    rec, html = advise_with_report(tmp_path, scenario(QUESTION.replace("iops = 4000", "iops = 4000\np99_ms = 20")), "share")
    page, _ = open_page(chromium, html, shots)
    chart = check_chart(page, rec)
    (goal,) = [s for s in chart["shapes"] if s["name"] == "goal"]
    assert goal["y0"] == 1
    assert front_of(chart)["y"] == pytest.approx([o["screen_bound"] for o in rec["front"]])
    # The recommendation as simulated: the lesser of IOPS / 4,000 and 20 ms / p99.
    top = rec["recommendations"][0]
    (recommended,) = [t for t in chart["traces"] if t["name"].startswith("recommended")]
    assert recommended["y"][0] == pytest.approx(min(top["iops"] / 4000, 20 / top["p99_ms"]))


@pytest.mark.needs_browser
def test_report_of_the_advice_record_is_the_same_page(chromium, shots, tmp_path):  # noqa: F811
    # A database goal: NOPM on the axis, the goal line at 12,000 NOPM.
    rec, direct = advise_with_report(tmp_path, EXAMPLES / "advise-tpcc-azure.toml", "azure")
    saved = tmp_path / "azure.json"
    saved.write_text(json.dumps(rec))
    out = tmp_path / "azure-from-json.html"
    r = run("report", str(saved), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == direct.read_bytes()
    page, _ = open_page(chromium, out, shots)
    chart = check_chart(page, rec)
    (goal,) = [s for s in chart["shapes"] if s["name"] == "goal"]
    assert goal["y0"] == rec["goal"]["nopm"] == 12000
    assert front_of(chart)["y"] == [o["nopm"] for o in rec["front"]]
    cheapest = min(r["monthly_cost_usd"] for r in rec["recommendations"])
    assert f"${cheapest:,.2f}" in page.inner_text("table.recommendations")


def test_an_advice_record_is_reported_alone_and_not_compared(tmp_path, scenario):
    r = run("advise", str(scenario(QUESTION)), "--json")
    assert r.returncode == 0, r.stderr
    (tmp_path / "advice.json").write_text(r.stdout)
    (tmp_path / "run.json").write_text(json.dumps(simulated_db()))
    r = run("report", str(tmp_path / "advice.json"), str(tmp_path / "run.json"), "-o", str(tmp_path / "both.html"))
    assert r.returncode == 1 and "an advice record is reported alone" in r.stderr
    assert not (tmp_path / "both.html").exists()
    r = run("compare", str(tmp_path / "advice.json"), str(tmp_path / "run.json"))
    assert r.returncode == 1 and "an advice record (advise --json) — compare takes run or limits records" in r.stderr


def test_a_report_path_that_cannot_be_written_is_refused_before_the_search(scenario, tmp_path):
    # A question the search would refuse (a misspelt goal): the path is
    # refused first, so the question was never read.
    bad = scenario(QUESTION.replace("iops = 4000", "iopz = 4000"))
    assert "did you mean `iops`" in run("advise", str(bad)).stderr
    r = run("advise", str(bad), "--report", str(tmp_path / "no" / "advice.html"))
    assert r.returncode == 1 and "no such folder" in r.stderr, r.stderr


@pytest.mark.needs_browser
def test_an_interrupted_advice_writes_its_report_marked_interrupted(chromium, shots, tmp_path):  # noqa: F811
    out = tmp_path / "interrupted.html"
    proc = subprocess.Popen([sys.executable, "-m", "storlab.cli", "advise", str(EXAMPLES / "advise-io-aws.toml"), "--json",
                             "--report", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    assert not out.exists()  # nothing is written while the search runs
    proc.send_signal(signal.SIGINT)
    stdout, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    rec = json.loads(stdout)
    assert rec["interrupted"] is True
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # whole, no temporary file left
    page, _ = open_page(chromium, out, shots)
    assert "Interrupted" in page.inner_text("p.interrupted")
    check_chart(page, rec)
