"""`storlab catalog list|show ID`: browse the catalog and its sources."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from storlab import api
from storlab.cli.out import console, csv_text, emit, one_of
from storlab.errors import StorlabError
from storlab.export import to_json

app = typer.Typer(help="Browse the catalog: devices, hosts, prices and their sources.", no_args_is_help=True)

CatalogOpt = typer.Option(None, "--catalog", help="Extra catalog file or folder (repeatable).")


@app.command("list")
def list_cmd(
    kind: Optional[str] = typer.Option(None, "--kind", help="Only 'device' or 'host' entries."),
    json_out: bool = typer.Option(False, "--json", help="Print as JSON."),
    csv_out: bool = typer.Option(False, "--csv", help="Print as CSV: type, id, title, file."),
    catalog: Optional[list[Path]] = CatalogOpt,
) -> None:
    """Every device and host id, with its title and file."""
    one_of(json_out, csv_out)
    if kind not in (None, "device", "host"):
        raise StorlabError(f"--kind '{kind}' — use 'device' or 'host'")
    cat = api.load_catalog(catalog)
    rows = []
    if kind in (None, "device"):
        rows += [{"type": "device", "id": d["id"], "title": d["title"], "file": d["file"]} for d in cat["devices"]]
    if kind in (None, "host"):
        rows += [{"type": "host", "id": h["id"], "title": h["title"], "file": h["file"]} for h in cat["hosts"]]

    def table() -> Table:
        t = Table(show_edge=False)
        for col in ("type", "id", "title", "file"):
            t.add_column(col, overflow="fold")
        for r in rows:
            t.add_row(r["type"], r["id"], r["title"], r["file"])
        return t

    doc = {"schema_version": 1, "tool": api.tool_info(), "entries": rows, "regions": cat["regions"]}
    emit(doc, json_out, csv_out, lambda: csv_text(["type", "id", "title", "file"], rows), table)
    if not (json_out or csv_out):
        console().print(f"regions with prices: {', '.join(cat['regions'])}", style="dim")


def _sources_used(value, default: str | None, out: set[str]) -> None:
    if isinstance(value, dict):
        if "value" in value and "verified" in value:
            key = value.get("src") or default
            if key:
                out.add(key)
            return
        local = value.get("src") if isinstance(value.get("src"), str) else default
        for v in value.values():
            _sources_used(v, local, out)
    elif isinstance(value, list):
        for v in value:
            _sources_used(v, default, out)


@app.command("show")
def show_cmd(
    entry_id: str = typer.Argument(..., metavar="ID", help="A catalog id, e.g. aws/ebs/gp2."),
    json_out: bool = typer.Option(False, "--json", help="Print as JSON."),
    catalog: Optional[list[Path]] = CatalogOpt,
) -> None:
    """One device or host: its rules, prices and the sources behind every number."""
    e = api.catalog_entry(entry_id, catalog)
    used: set[str] = set()
    _sources_used(e["entry"], e["entry"].get("src"), used)
    for p in e["prices"]:
        _sources_used(p, p.get("src"), used)
    sources = {k: v for k, v in e["sources"].items() if k in used}
    if json_out:
        typer.echo(to_json({"schema_version": 1, "tool": api.tool_info(), "id": e["id"], "type": e["type"], "file": e["file"], "entry": e["entry"], "prices": e["prices"], "sources": sources}), nl=False)
        return
    con = console()
    con.print(f"[bold]{e['id']}[/bold] — {e['entry']['title']}  [dim]({e['type']}, {e['file']})[/dim]")
    for k, v in e["entry"].items():
        if k in ("id", "title", "src") or v in (None, [], {}, False):
            continue
        # The value is printed as text: a list such as [iscsi, smb, nfs]
        # would otherwise be read as markup and vanish.
        con.print(f"  [cyan]{k}[/cyan] = {escape(_plain(v))}")
    if e["prices"]:
        con.print("[bold]prices[/bold]")
        for p in e["prices"]:
            rng = "".join([f" above {p['above']}" if p.get("above") else "", f" up to {p['upto']}" if p.get("upto") else ""])
            lic = f" {p['license']}" if p.get("license") else ""
            con.print(f"  {p['region']}{lic}: ${p['usd']['value']} per {p['unit']}{rng}" + ("" if p["usd"]["verified"] else " (unverified)"))
    con.print("[bold]sources[/bold]")
    for k, s in sources.items():
        con.print(f"  [cyan]{k}[/cyan]: {s['url']} ({s['date']}, {s['status']})" + (f" — {s['note']}" if s.get("note") else ""))


def _plain(v) -> str:
    """A catalog value without its source bookkeeping."""
    if isinstance(v, dict):
        if "value" in v and "verified" in v:
            return f"{v['value']:g}" + ("" if v["verified"] else " (unverified)")
        return "{ " + ", ".join(f"{k} = {_plain(x)}" for k, x in v.items() if k != "src" and x is not None) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(_plain(x) for x in v) + "]"
    return str(v)
