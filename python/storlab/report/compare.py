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

from typing import Any

from storlab.report.records import Record, finite, is_db, spread

IO_FIGURES = [("iops", "IOPS"), ("bw_bytes_s", "MB/s"), ("lat_mean_us", "mean latency"), ("lat_p99_us", "p99 latency")]
DB_FIGURES = [("nopm", "NOPM"), ("tpm", "TPM")]
LIMIT_FIGURES = ["rand4k_read_iops", "rand4k_write_iops", "seq1m_read_bytes_s", "seq1m_write_bytes_s"]
# Lower is better for these: the `better` field says which way a change went.
LOWER_IS_BETTER = {"lat_mean_us", "lat_p99_us"}


def _key(r: dict[str, Any], with_config: bool) -> tuple:
    k = (r.get("job"), r.get("vus"))
    return ((r["config"],) + k) if with_config else k


def _pairs(a: Record, b: Record) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Results of A and B that describe the same thing: the same config and
    job (and VU count); where no config name is shared and each record has
    one config (a measured `local` against a simulated `gp3`), the same job."""
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


def compare(a: Record, b: Record) -> dict[str, Any]:
    """The comparison as data: rows of (config, job, vus, figure, a, b,
    ratio, noise, beyond_spread)."""
    rows: list[dict[str, Any]] = []
    if a.kind == "limits" and b.kind == "limits":
        rows = _limits_rows(a, b)
    elif a.kind != "limits" and b.kind != "limits":
        deterministic = a.kind == "simulate" and b.kind == "simulate"
        for ra, rb in _pairs(a, b):
            figs = DB_FIGURES if is_db(ra) else IO_FIGURES
            config = ra["config"] if ra["config"] == rb["config"] else f"{ra['config']} / {rb['config']}"
            for key, name in figs:
                va, vb = finite(ra.get(key)), finite(rb.get(key))
                if va is None and vb is None:
                    continue
                na, nb = spread(a, ra, key), spread(b, rb, key)
                if na is None and nb is None and deterministic and not is_db(ra):
                    na = nb = 0.0
                rows.append(_row(config, ra.get("job"), ra.get("vus"), key, name, va, vb, na, nb))
    return {
        "schema_version": 1,
        "base": {"path": a.path, "engine": a.kind, "tool": a.data.get("tool")},
        "new": {"path": b.path, "engine": b.kind, "tool": b.data.get("tool")},
        "rule": "marked where |new − base| > max(2 × stdev of base's repeats, 2 × stdev of new's repeats)",
        "rows": rows,
        "unmatched": _unmatched(a, b, rows),
    }


def _unmatched(a: Record, b: Record, rows: list[dict[str, Any]]) -> dict[str, int]:
    if a.kind == "limits" or b.kind == "limits":
        return {}
    seen = {(r["job"], r["vus"]) for r in rows}
    return {"base": sum(1 for r in a.results if (r.get("job"), r.get("vus")) not in seen),
            "new": sum(1 for r in b.results if (r.get("job"), r.get("vus")) not in seen)}
