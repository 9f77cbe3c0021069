"""`storlab compare A B`: base vs new. The same jobs (or VU counts) of two
records, figure by figure, with the ratio new / base and a mark where the
difference is larger than the records' own run-to-run spread.

The spread rule, the one storlab's tipping point uses: a figure's noise is
twice the standard deviation of its repeats (bench disk's runs per job,
bench db's repeats per VU count). A difference is marked when it exceeds
the larger noise of the two sides. A side with no repeats has no noise of
its own and borrows the other's; when neither side has repeats the
difference cannot be judged (no mark, `beyond_spread: null`). A simulated
database sweep's repeats are its runs with other seeds (`simulate
--repeats N`): the model's own seed-to-seed spread. Simulated I/O jobs are
the exception: their figures average every I/O of a run and a seed gives
the same record each time, so between two simulated I/O records any
difference is real (noise 0)."""

from __future__ import annotations

import statistics
from difflib import get_close_matches
from typing import Any

from storlab.errors import StorlabError
from storlab.report.records import Record, finite, is_db, latency_us, spread

IO_FIGURES = [("iops", "IOPS"), ("bw_bytes_s", "MB/s"), ("lat_mean_us", "mean latency"), ("lat_p99_us", "p99 latency")]
DB_FIGURES = [("nopm", "NOPM"), ("tpm", "TPM")]
LIMIT_FIGURES = ["rand4k_read_iops", "rand4k_write_iops", "seq1m_read_bytes_s", "seq1m_write_bytes_s"]
# Lower is better for these: the `better` field says which way a change went.
LOWER_IS_BETTER = {"lat_mean_us", "lat_p99_us"}


def _key(r: dict[str, Any], with_config: bool) -> tuple:
    k = (r.get("job"), r.get("vus"))
    return ((r["config"],) + k) if with_config else k


def _pairs(a: Record, b: Record, pairs: list[tuple[str, str]] | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Results of A and B that describe the same thing: the same config and
    job (and VU count); where no config name is shared and each record has
    one config (a measured `local` against a simulated `gp3`), the same job.
    With `pairs` ((config of A, config of B), ...), those configs' results
    of the same job (and VU count), whatever their names."""
    if pairs:
        out = []
        for base_config, new_config in pairs:
            ja = {_key(r, False): r for r in a.results if r["config"] == base_config}
            jb = {_key(r, False): r for r in b.results if r["config"] == new_config}
            out += [(ja[k], jb[k]) for k in ja if k in jb]
        return out
    ka = {_key(r, True): r for r in a.results}
    kb = {_key(r, True): r for r in b.results}
    common = [k for k in ka if k in kb]
    if common:
        return [(ka[k], kb[k]) for k in common]
    ca = {r["config"] for r in a.results}
    cb = {r["config"] for r in b.results}
    if len(ca) == 1 and len(cb) == 1:
        ja = {_key(r, False): r for r in a.results}
        jb = {_key(r, False): r for r in b.results}
        return [(ja[k], jb[k]) for k in ja if k in jb]
    return []


def _limits_rows(a: Record, b: Record) -> list[dict[str, Any]]:
    ca = {c["name"]: c for c in a.data["configs"]}
    cb = {c["name"]: c for c in b.data["configs"]}
    names = [n for n in ca if n in cb]
    if not names and len(ca) == 1 and len(cb) == 1:
        names = [None]
    rows = []
    for n in names:
        x, y = (ca[n], cb[n]) if n is not None else (next(iter(ca.values())), next(iter(cb.values())))
        for part in ("ceilings", "sustained"):
            for f in LIMIT_FIGURES:
                va, vb = finite((x.get(part) or {}).get(f)), finite((y.get(part) or {}).get(f))
                if va is None and vb is None:
                    continue
                rows.append(_row(x["name"] if n is not None else f"{x['name']} / {y['name']}", f"{part}", None,
                                 f, f, va, vb, 0.0, 0.0))
    return rows


def _row(config: str, job: Any, vus: Any, key: str, figure: str, va: float | None, vb: float | None,
         na: float | None, nb: float | None) -> dict[str, Any]:
    ratio = (vb / va) if (va not in (None, 0) and vb is not None) else None
    if va is None or vb is None:
        beyond = None
        noise = None
    else:
        noise = None if na is None and nb is None else max(n for n in (na, nb) if n is not None)
        beyond = None if noise is None else abs(vb - va) > noise
    better = None
    if beyond and ratio is not None:
        better = (vb < va) if key in LOWER_IS_BETTER else (vb > va)
    return {"config": config, "job": job, "vus": vus, "figure": figure, "key": key, "a": va, "b": vb,
            "ratio": ratio, "noise": noise, "beyond_spread": beyond, "better": better}


def check_pairs(a: Record, b: Record, pairs: list[str]) -> list[tuple[str, str]]:
    """`--pair BASE_CONFIG=NEW_CONFIG` values as (config of A, config of B),
    each name checked against its record."""
    out = []
    for text in pairs:
        ca, sep, cb = text.partition("=")
        if not sep or not ca or not cb:
            raise StorlabError(f"--pair '{text}': give BASE_CONFIG=NEW_CONFIG — e.g. gp3=io2")
        for rec, name, side in ((a, ca, "base"), (b, cb, "new")):
            have = list(dict.fromkeys(r["config"] for r in rec.results))
            if name not in have:
                near = get_close_matches(name, have, n=1)
                hint = f"nearest valid value '{near[0]}'" if near else f"its configs: {', '.join(have)}"
                raise StorlabError(f"--pair '{text}': {rec.path} (the {side}) has no config '{name}' — {hint}")
        out.append((ca, cb))
    return out


def verdicts(cmp: dict[str, Any]) -> list[str]:
    """One line a compared config pair: the main figure's ratio (NOPM for a
    database sweep, IOPS for I/O jobs; the median over its jobs or VU
    counts), how many of them differ beyond the noise and which way, and
    $ per 1,000 TPM on both sides where both records carry it."""
    lines = []
    by: dict[str, list[dict[str, Any]]] = {}
    for r in cmp["rows"]:
        by.setdefault(r["config"], []).append(r)
    for config, rows in by.items():
        key = "nopm" if any(r["key"] == "nopm" for r in rows) else "iops"
        main = [r for r in rows if r["key"] == key and r["ratio"] is not None]
        if not main:
            continue
        ratio = statistics.median(r["ratio"] for r in main)
        what = "VU counts" if key == "nopm" else "jobs"
        better = sum(1 for r in main if r["beyond_spread"] and r["better"])
        worse = sum(1 for r in main if r["beyond_spread"] and not r["better"])
        unjudged = sum(1 for r in main if r["beyond_spread"] is None)
        judged = (f"{better} better and {worse} worse beyond the noise" if unjudged < len(main)
                  else "no repeats to judge the noise")
        line = (f"{config}: new {ratio:.2f}× base's {'NOPM' if key == 'nopm' else 'IOPS'} "
                f"(median of {len(main)} {what}; {judged})")
        usd = [(float(r["usd_a"]), float(r["usd_b"])) for r in main if r.get("usd_a") and r.get("usd_b")]
        if usd:
            ua = statistics.median(u[0] for u in usd)
            ub = statistics.median(u[1] for u in usd)
            line += f"; $ per 1,000 TPM {ua:,.2f} → {ub:,.2f} ({ub / ua:.2f}×)"
        lines.append(line)
    return lines


def compare(a: Record, b: Record, pairs: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """The comparison as data: rows of (config, job, vus, figure, a, b,
    ratio, noise, beyond_spread); `pairs` pairs configs of other names."""
    rows: list[dict[str, Any]] = []
    if a.kind == "limits" and b.kind == "limits":
        rows = _limits_rows(a, b)
    elif a.kind != "limits" and b.kind != "limits":
        deterministic = a.kind == "simulate" and b.kind == "simulate"
        for ra, rb in _pairs(a, b, pairs):
            figs = DB_FIGURES if is_db(ra) else IO_FIGURES
            config = ra["config"] if ra["config"] == rb["config"] else f"{ra['config']} / {rb['config']}"
            for key, name in figs:
                read = latency_us if key in LOWER_IS_BETTER else finite
                va, vb = read(ra.get(key)), read(rb.get(key))
                if va is None and vb is None:
                    continue
                na, nb = spread(a, ra, key), spread(b, rb, key)
                if na is None and nb is None and deterministic and not is_db(ra):
                    na = nb = 0.0
                row = _row(config, ra.get("job"), ra.get("vus"), key, name, va, vb, na, nb)
                if key == "nopm":
                    row["usd_a"], row["usd_b"] = finite(ra.get("usd_per_1000_tpm")), finite(rb.get("usd_per_1000_tpm"))
                rows.append(row)
    out: dict[str, Any] = {
        "schema_version": 1,
        "base": {"path": a.path, "engine": a.kind, "tool": a.data.get("tool")},
        "new": {"path": b.path, "engine": b.kind, "tool": b.data.get("tool")},
        "rule": "marked where |new − base| > max(2 × stdev of base's repeats, 2 × stdev of new's repeats)",
        "rows": rows,
        "unmatched": _unmatched(a, b, rows),
    }
    out["verdicts"] = verdicts(out)
    return out


def _unmatched(a: Record, b: Record, rows: list[dict[str, Any]]) -> dict[str, int]:
    if a.kind == "limits" or b.kind == "limits":
        return {}
    seen = {(r["job"], r["vus"]) for r in rows}
    return {"base": sum(1 for r in a.results if (r.get("job"), r.get("vus")) not in seen),
            "new": sum(1 for r in b.results if (r.get("job"), r.get("vus")) not in seen)}
