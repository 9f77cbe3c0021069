"""`storlab advise QUESTION`: the cheapest deployments of the catalog that
meet the question's goal, the cost/throughput front, why cheaper ones
fail, and a finding for each current config. The search is Rust's
(storlab-advise); this layer prints, and `--report` writes the page
storlab.report draws of the record."""

from __future__ import annotations

import json

import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console, Group
from rich.progress import BarColumn, MofNCompleteColumn, Progress
from rich.table import Table
from rich.text import Text

from storlab import api
from storlab.cli import app
from storlab.cli.out import COUNT_MAX
from storlab.cli.out import emit
from storlab.cli.report import check_output, write_report_of
from storlab.errors import StorlabError


def _money(x: float | None) -> str:
    return "—" if x is None else f"${x:,.0f}"


def _present(d: dict[str, Any], fields: tuple[tuple[str, Any], ...]) -> list[str]:
    """Each field `d` has (not None), as its formatter writes it."""
    return [fmt(d[k]) for k, fmt in fields if d.get(k) is not None]


# What an outcome gives, in the goal's terms (TPM only where there is no NOPM).
_GIVES = (("nopm", lambda v: f"{v:,.0f} NOPM"), ("vus", lambda v: f"at {v} VUs"), ("iops", lambda v: f"{v:,.0f} IOPS"),
          ("bw_bytes_s", lambda v: f"{v / 1e6:,.1f} MB/s"), ("p99_ms", lambda v: f"p99 {v:,.2f} ms"))
# A pool as the table shows it, after its count and device.
_POOL = (("size_gib", lambda v: f"{v:g} GiB"), ("storage_gib", lambda v: f"{v:g} GiB storage"),
         ("iops", lambda v: f"{v:g} IOPS"), ("throughput_mib_s", lambda v: f"{v:g} MiB/s"),
         ("throughput_mb_s", lambda v: f"{v:g} MB/s"))


def _figures(o: dict[str, Any]) -> str:
    """What a verified (or screened) outcome gives, in the goal's terms."""
    parts = _present(o, _GIVES)
    if o.get("nopm") is None and o.get("tpm") is not None:
        parts.insert(0, f"{o['tpm']:,.0f} TPM")
    return ", ".join(parts)


def _pools(o: dict[str, Any]) -> str:
    out = []
    for p in o["config"]["pools"]:
        bits = [f"{p.get('count', 1)} × {p['device']}", *_present(p, _POOL)]
        if p.get("host_cache") not in (None, "none"):
            bits.append(f"cache {p['host_cache']}")
        out.append(f"{p.get('role', 'all')}: " + ", ".join(bits))
    return "\n".join(out)


def _left_unit(why: str) -> str:
    """What a left-out count counts: hosts for a host without a price,
    configs otherwise."""
    return "hosts" if "for the host" in why else "configs"


def advice_tables(rec: dict[str, Any]) -> Group:
    """The advice as the terminal shows it."""
    sp = rec["space"]
    parts: list[Any] = []
    head = Text(rec.get("title") or rec["question"], style="bold")
    parts.append(head)
    parts.append(Text(f"{rec['workload']}; goal: " + ", ".join(f"{k} {v:,g}" for k, v in rec["goal"].items() if k != "jobs")
                      + "".join(f"; job {j}: {g}" for j, g in (rec["goal"].get("jobs") or {}).items())))
    d = rec.get("demand")
    if d:
        parts.append(Text(f"demand from {d['source']}: {d['iops']:,.0f} IOPS, {d['mb_s']:,.1f} MB/s, "
                          f"{d['read_share'] * 100:.0f} % reads, {d['io_bytes'] / 1024:,.1f} KiB an I/O — "
                          f"{d['statistic']} ({d['lookback_s'] / 3600:,.1f} h looked back)"))
    parts.append(Text(f"{sp['region']}: {sp['hosts']} hosts × {sp['devices']} devices → {sp['candidates']:,} configs the "
                      f"vendors allow; {sp['screened']:,} pass the screen; the simulator ran {sp['verified']:,}",
                      style="dim"))
    left = {**(sp.get("refused") or {}), **(sp.get("screened_out") or {})}
    if left:
        parts.append(Text("left out: " + "; ".join(f"{n:,} {_left_unit(why)} — {why}" for why, n in
                                                     sorted(left.items(), key=lambda kv: -kv[1])), style="dim"))
    rules = f"vendor rules as of {rec['as_of']}" if rec.get("as_of") else "vendor rules of today's catalog"
    licence = f" with the {sp['license']} licence" if sp.get("license") else ""
    parts.append(Text(f"{rules}; prices are the catalog's current list prices{licence}, on-demand, per 730 h month", style="dim"))
    if rec.get("sustain"):
        parts.append(Text(rec["sustain"]["rule"], style="dim"))
    t = Table(title="cheapest that meet the goal (verified by the simulator)", title_justify="left")
    per_tpm = any(r.get("usd_per_1000_tpm") is not None for r in rec["recommendations"])
    cols = ("#", "host", "pools", "$ a month", *(("$ / 1,000 TPM",) if per_tpm else ()), "gives", "binding")
    for col in cols:
        t.add_column(col, justify="right" if col in ("#", "$ a month", "$ / 1,000 TPM") else "left")
    for r in rec["recommendations"]:
        row = [str(r["rank"]), r["config"]["host"], _pools(r), _money(r["monthly_cost_usd"])]
        if per_tpm:
            row.append("—" if r.get("usd_per_1000_tpm") is None else f"${r['usd_per_1000_tpm']:,.2f}")
        # How long credits carry it, where they do (from empty buckets
        # the rule line above says it all).
        held = r.get("sustained") or ""
        t.add_row(*row, _figures(r) + (f"\n{held}" if held and not held.startswith("from empty") else ""), r["binding"])
    parts.append(t)
    if rec["recommendations"]:
        first = rec["recommendations"][0]
        start = (rec.get("sustain") or {}).get("buckets_at_start", "full")
        line = "" if start == "full" else f"; put buckets_at_start = {json.dumps(start)} at the top of the scenario, as advise judged it"
        parts.append(Text(f"the first as a scenario config (paste and run with storlab simulate{line}):", style="dim"))
        parts.append(Text(first["config_toml"].rstrip()))
    if rec["cheaper_failures"]:
        f = Table(title="cheaper, but they miss", title_justify="left")
        for col in ("host", "pools", "$ a month", "misses", "binding"):
            f.add_column(col)
        for o in rec["cheaper_failures"]:
            # A screened-out one's reason already is its binding limit.
            bind = "" if o.get("verified_by") == "screen" else (o.get("binding") or "")
            f.add_row(o["config"]["host"], _pools(o), _money(o["monthly_cost_usd"]), o.get("misses") or "", bind)
        parts.append(f)
    if rec.get("explained"):
        f = Table(title="--explain: every candidate on the hosts asked about, cheapest first", title_justify="left")
        for col in ("candidate", "$ a month", "fate", "why"):
            f.add_column(col, justify="right" if col == "$ a month" else "left")
        for e in rec["explained"]:
            f.add_row(e["name"], _money(e["monthly_cost_usd"]) if e["fate"] != "unpriced" else "—", e["fate"], e["why"])
        parts.append(f)
    if rec["findings"]:
        f = Table(title="your configs", title_justify="left")
        for col in ("config", "finding", "risk", "saving a month", "gives", "why"):
            f.add_column(col)
        for x in rec["findings"]:
            style = {"Under-provisioned": "red", "Over-provisioned": "yellow"}.get(x["finding"], "green")
            judged = x["finding"] != "Not evaluated"
            # Compute Optimizer's options: the cheapest three, what each
            # saves (or costs more) a month and its risk.
            opts = "".join(f"\noption {o['rank']}: {o['name']}, {_money(o['monthly_cost_usd'])} a month "
                           f"({'saves' if o['saving_usd_month'] >= 0 else 'costs'} {_money(abs(o['saving_usd_month']))}, "
                           f"{abs(o['saving_pct']):.1f} %), risk {o['risk']}" for o in x.get("options") or [])
            looked = f"\nlookback {x['lookback_days']:g} days" if x.get("lookback_days") is not None else ""
            f.add_row(x["config"], Text(x["finding"], style=style if judged else "dim"), x["risk"],
                      _money(x["saving_usd_month"]) if judged else "—", _figures(x["current"]) if judged else "not evaluated",
                      x["why"] + opts + looked)
        parts.append(f)
    for w in rec.get("warnings") or []:
        parts.append(Text(w, style="yellow"))
    parts.append(Text(f"method: {rec['method']}", style="dim"))
    return Group(*parts)


@app.command("advise")
def advise_cmd(
    question: Path = typer.Argument(..., help="Question file (TOML): a workload, a \\[goal], an optional \\[space] and current \\[configs.*]."),
    json_out: bool = typer.Option(False, "--json", help="Print the advice record as JSON."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write the advice as an HTML report to FILE: cost against throughput with the front and the goal, the recommendations' config tables, the findings."),
    top: Optional[int] = typer.Option(None, "--top", max=COUNT_MAX, help="How many recommendations (default 10)."),
    threads: Optional[int] = typer.Option(None, "--threads", max=COUNT_MAX, help="Simulations at once (default: every core); the answer is the same for any count."),
    catalog: Optional[list[Path]] = typer.Option(None, "--catalog", help="Extra catalog file or folder (repeatable)."),
    as_of: Optional[str] = typer.Option(None, "--as-of", help="Vendor rules as they stood on this day (YYYY-MM-DD), in place of the question's as_of; prices stay today's."),
    from_cloudwatch: Optional[Path] = typer.Option(None, "--from-cloudwatch", help="CloudWatch get-metric-data JSON or CSV (EBS Volume*Ops/Bytes or RDS Read/WriteIOPS, Read/WriteThroughput): its busiest period is the demand to meet."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Run the screen and the simulations on the Ray cluster at ADDRESS (ray://HEAD:10001), or on one started here (local); the same answer. Needs storlab\\[ray]."),
    accept_suspect: bool = typer.Option(False, "--accept-suspect", help="Use a database profile its health check finds suspect (a dipping sweep, a penalty at its fit's bound, too short a window), with a warning, rather than refuse it."),
    explain: Optional[str] = typer.Option(None, "--explain", help="HOST — say why each candidate on this host fell or won (ids or patterns with *, comma-separated), e.g. --explain 'aws/ec2/c5.*'."),
) -> None:
    """The cheapest deployments that meet a goal: searched, screened, verified by the simulator, with a finding for your current configs."""
    for flag, v in (("--top", top), ("--threads", threads)):
        if v is not None and v < 1:
            raise StorlabError(f"{flag} {v}: must be at least 1 — nearest valid value 1")
    check_output(report)
    err = Console(stderr=True)
    if sys.stderr.isatty():
        with Progress("verifying", BarColumn(), MofNCompleteColumn(), console=err, transient=True) as bar:
            task = bar.add_task("advise", total=None)
            rec = api.advise(question, catalog, top=top, threads=threads, as_of=as_of, from_cloudwatch=from_cloudwatch, ray=ray,
                             accept_suspect=accept_suspect, explain=explain, progress=lambda done, total: bar.update(task, completed=done, total=total or None))
    else:
        rec = api.advise(question, catalog, top=top, threads=threads, as_of=as_of, from_cloudwatch=from_cloudwatch, ray=ray,
                         accept_suspect=accept_suspect, explain=explain)
    if report is not None:
        # Written once the advice is complete or stopped (then marked
        # interrupted), whole or not at all.
        write_report_of(rec, question, report)
    emit(rec, json_out, False, lambda: "", lambda: advice_tables(rec))
    if rec.get("interrupted"):
        err.print("interrupted: the best found so far is above", style="yellow")
        raise typer.Exit(130)
