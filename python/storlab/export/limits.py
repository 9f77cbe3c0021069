"""The `storlab limits` terminal table: configs side by side, one row per
ceiling with the component that binds under it."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from storlab.export.simulate import rule_text
from storlab.units import with_mb_s

MIB = 1024 * 1024

ROWS = [
    ("rand4k_read_iops", "4K random read"),
    ("rand4k_write_iops", "4K random write"),
    ("seq1m_read_bytes_s", "1M sequential read"),
    ("seq1m_write_bytes_s", "1M sequential write"),
]


def fmt_value(key: str, v: float | None) -> str:
    if v is None:
        return "no limit modelled"
    if key.endswith("_bytes_s"):
        return f"{v / 1e6:,.1f} MB/s"
    return f"{v:,.0f} IOPS" if v >= 100 else f"{v:,.2f} IOPS"


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "—"
    if s >= 3600:
        return f"{s / 3600:.1f} h ({s:,.0f} s)"
    if s >= 60:
        return f"{s / 60:.1f} min ({s:,.0f} s)"
    return f"{s:,.0f} s"


def _cell(value: str, binding: str) -> Text:
    t = Text(value, style="bold")
    t.append("\n" + with_mb_s(binding), style="dim")
    return t


def _pool_lines(c: dict[str, Any]) -> Text:
    t = Text()
    for i, p in enumerate(c["pools"]):
        if i:
            t.append("\n")
        size = f"{p['size_gib']:,.0f} GiB"
        extra = []
        if p.get("provisioned_iops"):
            extra.append(f"{p['provisioned_iops']:,.0f} IOPS")
        if p.get("provisioned_throughput_mib_s"):
            extra.append(f"{p['provisioned_throughput_mib_s'] * MIB / 1e6:,.1f} MB/s")
        if p["host_cache"] != "none":
            extra.append(f"cache {p['host_cache']}")
        if p["path"] != "block":
            extra.append(p["path"])
        t.append(f"{p['role']}: {p['count']} × {p['device']} {size}", style="bold")
        if extra:
            t.append(" (" + ", ".join(extra) + ")")
        t.append(f"\n  {p['layout']}; baseline {p['baseline_iops']:,.0f} IOPS")
        if p["burst_s"] is not None:
            t.append(f", burst {p['burst_iops']:,.0f} IOPS for {fmt_seconds(p['burst_s'])}")
        if p.get("throughput_burst_s") is not None:
            t.append(f"; throughput burst {p['burst_bytes_s'] / 1e6:,.1f} MB/s for {fmt_seconds(p['throughput_burst_s'])}")
        if p.get("rds_striped_from_gib"):
            t.append(f"; RDS stripes {p['rds_striped_from_gib']:,.0f} GiB over {p['count']} volumes")
    return t


def _rate(unit: str, v: float) -> str:
    return f"{v:,.0f} IOPS" if unit == "iops" else f"{v / 1e6:,.1f} MB/s"


def _at_load(c: dict[str, Any]) -> Text:
    """Each bucket at the load: "pool all aws/ebs/gp2 I/O credits: 3,000 IOPS
    for 33.3 min (2,000 s), then 300 IOPS"."""
    t = Text()
    for i, b in enumerate(c.get("at_load") or []):
        if i:
            t.append("\n")
        t.append(f"{b['resource']}: {b['bucket']}\n", style="dim")
        if b["lasts_s"] is None:
            t.append(f"{_rate(b['unit'], b['rate_while_full'])} never empties the bucket", style="bold")
        else:
            t.append(f"{_rate(b['unit'], b['rate_while_full'])} for {fmt_seconds(b['lasts_s'])}, then {_rate(b['unit'], b['rate_after'])}", style="bold")
    return t if t.plain else Text("no bucket: the rate holds")


def _cost(c: dict[str, Any]) -> Text:
    missing = [i["item"] for i in c["cost_breakdown"] if i["usd"] is None]
    if c["cost_complete"] or not missing:
        t = Text(f"${c['monthly_cost_usd']:,.2f}", style="bold")
    elif c["monthly_cost_usd"] > 0:
        t = Text(f"${c['monthly_cost_usd']:,.2f} + unpriced: {'; '.join(missing)}", style="bold yellow")
    else:
        # Nothing priced: no total, never "$0.00".
        t = Text(f"unpriced: {'; '.join(missing)}", style="bold yellow")
    for item in c["cost_breakdown"]:
        usd = "—" if item["usd"] is None else f"${item['usd']:,.2f}"
        status = item.get("source_status")
        mark = "" if status == "vendor" else (" †" if status == "secondary" else " *")
        t.append(f"\n{usd}{mark}  {item['item']}", style="dim")
    return t


def _cpu_line(c: dict[str, Any]) -> str:
    """The host's processor and its sustained all-core clock, where the
    catalog names them."""
    cpu = c.get("host_cpu")
    if not cpu:
        return ""
    ghz = cpu.get("all_core_ghz")
    clock = f", {ghz:g} GHz all-core" if ghz else ", all-core clock not published"
    return f"\n{cpu['model']}{clock}"


def limits_table(record: dict[str, Any]) -> Group:
    configs = record["configs"]
    title = record.get("title") or record.get("scenario")
    table = Table(title=f"{title}  (MB/s: 10^6 bytes a second)", show_lines=True, expand=False)
    table.add_column("", style="cyan", no_wrap=True)
    for c in configs:
        table.add_column(c["name"], overflow="fold", min_width=24)
    table.add_row("host", *[Text(f"{c['host']}\n{c['region']}{_cpu_line(c)}") for c in configs])
    table.add_row("pools", *[_pool_lines(c) for c in configs])
    for key, label in ROWS:
        table.add_row(f"{label}\nbuckets full", *[_cell(fmt_value(key, c["ceilings"][key]), c["binding"][key]) for c in configs])
        table.add_row(f"{label}\nbuckets empty", *[_cell(fmt_value(key, c["sustained"][key]), c["sustained_binding"][key]) for c in configs])
    hb = [c.get("host_burst") for c in configs]
    if any(hb):
        table.add_row(
            "host burst",
            *[Text("—") if h is None else Text(f"{h['burst_iops']:,.0f} IOPS / {h['burst_bytes_s'] / 1e6:,.0f} MB/s for {fmt_seconds(h['burst_s'])}\n(baseline {h['baseline_iops']:,.0f} IOPS / {h['baseline_bytes_s'] / 1e6:,.0f} MB/s)") for h in hb],
        )
    if any("at_load" in c for c in configs) or record.get("inputs", {}).get("at_iops") or record.get("inputs", {}).get("at_mb_s"):
        inp = record.get("inputs", {})
        load = f"{inp['at_iops']:,.0f} IOPS" if inp.get("at_iops") else f"{inp.get('at_mb_s') or 0:,.1f} MB/s"
        table.add_row(f"at {load}\nper pool", *[_at_load(c) for c in configs])
    table.add_row("monthly cost", *[_cost(c) for c in configs])
    notes = Text()
    unverified = sorted({u for c in configs for u in c["unverified"]})
    assumptions = sorted({a for c in configs for a in c["assumptions"]})
    for a in assumptions:
        notes.append(f"assumes: {a}\n", style="dim")
    for w in sorted({w for c in configs for w in c.get("warnings", [])}):
        notes.append(f"warning: {w}\n", style="yellow")
    rules = {rule_text(r) for c in configs for r in c.get("rules_applied", [])}
    for line in sorted(rules):
        notes.append(f"rules: {line}\n", style="dim")
    if any(i.get("source_status") == "secondary" for c in configs for i in c["cost_breakdown"]):
        notes.append("† price from a secondary source: the vendor's price list as reproduced by a third party\n", style="dim")
    if unverified or any(i["usd"] is None for c in configs for i in c["cost_breakdown"]):
        notes.append("* not confirmed by any source: " + ("; ".join(unverified) or "items without a price") + "\n", style="dim yellow")
    return Group(table, notes)


#: `limits --csv` columns, one row per config (docs/record.md, "CSV"): each
#: ceiling with buckets full, its binding component, and the same with
#: buckets empty (`_sustained`); rates in IOPS or bytes a second.
CSV_FIELDS = ["config", "host", "region"] + [
    f"{key}{suffix}" for key, _ in ROWS for suffix in ("", "_binding", "_sustained", "_sustained_binding")
] + ["monthly_cost_usd", "cost_complete"]


def limits_rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for c in record["configs"]:
        row: dict[str, Any] = {"config": c["name"], "host": c["host"], "region": c["region"],
                               "monthly_cost_usd": c["monthly_cost_usd"], "cost_complete": c["cost_complete"]}
        for key, _ in ROWS:
            row[key] = c["ceilings"][key]
            row[f"{key}_binding"] = c["binding"][key]
            row[f"{key}_sustained"] = c["sustained"][key]
            row[f"{key}_sustained_binding"] = c["sustained_binding"][key]
        rows.append(row)
    return rows
