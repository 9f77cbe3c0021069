"""`storlab compare BASE NEW`: the same jobs or VU counts of two records
side by side, the ratio new / base, and a mark where the difference is
larger than the records' own run-to-run spread (storlab.report.compare)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from storlab.cli import app
from storlab.cli.out import console, csv_text, emit, latency, one_of
from storlab.errors import StorlabError
from storlab.report.compare import check_pairs, compare
from storlab.report.records import load

# How each figure prints: scale and format.
_FMT = {"bw_bytes_s": (1e-6, ",.1f", " MB/s"),
        "seq1m_read_bytes_s": (1e-6, ",.1f", " MB/s"), "seq1m_write_bytes_s": (1e-6, ",.1f", " MB/s")}

#: `compare --csv` columns, one row per figure compared (docs/record.md, "CSV").
CSV_FIELDS = ["config", "job", "vus", "figure", "key", "base", "new", "ratio", "noise", "beyond_spread", "better"]


def _fmt(key: str, v: float | None) -> str:
    if v is None:
        return "—"
    if key.startswith("lat_") and key.endswith("_us"):
        return latency(v)
    scale, f, unit = _FMT.get(key, (1, ",.0f", ""))
    return format(v * scale, f) + unit


def compare_table(cmp: dict) -> Table:
    t = Table(title=f"base {cmp['base']['path']} ({cmp['base']['engine']})  vs  new {cmp['new']['path']} ({cmp['new']['engine']})  (MB/s: 10^6 bytes a second)")
    db = any(r["vus"] is not None for r in cmp["rows"])
    cols = ["config", "job"] + (["VUs"] if db else []) + ["figure", "base", "new", "new/base", "noise (2σ)", ""]
    for c in cols:
        t.add_column(c, justify="left" if c in ("config", "job", "figure", "") else "right", no_wrap=c in ("job", "figure"), overflow="fold")
    last = None
    for r in cmp["rows"]:
        key = (r["config"], r["job"], r["vus"])
        head = [r["config"], str(r["job"] or "")] + ([str(r["vus"]) if r["vus"] is not None else ""] if db else [])
        if key == last:
            head = [""] * len(head)
        last = key
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
        noise = "?" if r["noise"] is None else _fmt(r["key"], r["noise"])
        mark = Text("")
        if r["beyond_spread"]:
            mark = Text("◆ better" if r["better"] else "◆ worse", style="green" if r["better"] else "red")
        t.add_row(*head, r["figure"], _fmt(r["key"], r["a"]), _fmt(r["key"], r["b"]), ratio, noise, mark)
    return t


@app.command("compare")
def compare_cmd(
    base: Path = typer.Argument(..., help="The base record (JSON from simulate, bench disk, bench db or limits)."),
    new: Path = typer.Argument(..., help="The new record to hold against it."),
    json_out: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    csv_out: bool = typer.Option(False, "--csv", help="Print one row per figure as CSV (columns: docs/record.md)."),
    pair: list[str] = typer.Option([], "--pair", help="BASE_CONFIG=NEW_CONFIG: compare these two configs, whatever their names (repeatable)."),
) -> None:
    """Base vs new: the same jobs or VU counts of two records, the ratio, and ◆ where the difference exceeds the run-to-run spread."""
    one_of(json_out, csv_out)
    a, b = load(base), load(new)
    for path, rec in ((base, a), (new, b)):
        if rec.kind == "advice":
            raise StorlabError(f"{path}: an advice record (advise --json) — compare takes run or limits records; "
                               f"draw the advice with storlab report {path} -o advice.html")
    if (a.kind == "limits") != (b.kind == "limits"):
        raise StorlabError(f"{new}: a {'limits' if b.kind == 'limits' else 'run'} record beside a "
                           f"{'limits' if a.kind == 'limits' else 'run'} record — compare two run records or two limits records")
    pairs = check_pairs(a, b, pair) if pair else None
    cmp = compare(a, b, pairs)
    if not cmp["rows"]:
        if pairs:
            raise StorlabError(f"--pair {' '.join(pair)}: the paired configs share no job (or VU count) — pair configs that ran the same jobs")
        raise StorlabError(f"{base} and {new} share no config and job (or VU count) — compare records of the same jobs, "
                           "or pair configs of other names with --pair BASE_CONFIG=NEW_CONFIG")
    rows = [{**r, "base": r["a"], "new": r["b"]} for r in cmp["rows"]]
    emit(cmp, json_out, csv_out, lambda: csv_text(CSV_FIELDS, rows), lambda: compare_table(cmp))
    if json_out or csv_out:
        return
    for line in cmp["verdicts"]:
        typer.echo(line)
    notes = ["new/base: new divided by base; noise: twice the standard deviation of the repeats, the larger side's; "
             "◆: the difference exceeds the noise"]
    if any(r["noise"] is None for r in cmp["rows"]):
        notes.append("?: neither record has repeats of this figure — rerun with bench disk --runs 3, bench db --repeat 3 or simulate --repeats 3 to judge it")
    um = cmp.get("unmatched") or {}
    if um.get("base") or um.get("new"):
        notes.append(f"not compared: {um.get('base', 0)} result(s) of base and {um.get('new', 0)} of new have no counterpart")
    console().print(Text("\n".join(notes), style="dim"))
