"""Hosts' per-core CPU speed figures: each cited (a source with url and
date), positive, on a named basis; one processor's figure shared by every
size of its family; and the ratio of two hosts' figures is what `simulate`
prints against a profile on the same basis."""

from __future__ import annotations

from pathlib import Path

from storlab import api

TABLE = Path(__file__).resolve().parent.parent / "python" / "storlab" / "catalog" / "tables" / "cpu-speed.tsv"


def hosts() -> dict[str, dict]:
    return {h["id"]: h for h in api.load_catalog()["hosts"]}


def figure(h: dict) -> float:
    v = h["cpu_speed"]
    return v["value"] if isinstance(v, dict) else v


def test_every_figure_is_positive_on_a_basis_with_a_dated_source():
    cat = api.load_catalog()
    sources = cat["sources"]
    n = 0
    for h in cat["hosts"]:
        if h.get("cpu_speed") is None:
            continue
        n += 1
        assert figure(h) > 0, h["id"]
        assert h.get("cpu_speed_basis"), h["id"]
        src = h["cpu_speed"].get("src") if isinstance(h["cpu_speed"], dict) else None
        src = src or h.get("src")
        assert src in sources, (h["id"], src)
        assert sources[src]["url"] and sources[src]["date"], (h["id"], src)
    assert n > 100


def test_two_sizes_of_one_family_share_their_processors_figure():
    h = hosts()
    # r5 (Skylake 8175M / Cascade Lake 8259CL): the table's r5.4xlarge row,
    # 1284.445177 bogo ops/s, for the generated sizes and the hand-written r5.large.
    assert figure(h["aws/ec2/r5.2xlarge"]) == figure(h["aws/ec2/r5.16xlarge"]) == figure(h["aws/ec2/r5.large"]) == 1284.445177
    assert figure(h["aws/ec2/x2iedn.24xlarge"]) == figure(h["aws/ec2/x2iedn.xlarge"]) == 1892.444698
    assert figure(h["azure/vm/Standard_E2s_v5"]) == figure(h["azure/vm/Standard_E96s_v5"]) == 1897.540522
    assert {h[i]["cpu_speed_basis"] for i in ("aws/ec2/r5.large", "aws/ec2/m7i.4xlarge", "azure/vm/Standard_D8s_v5")} \
        == {"stress-ng-cpu-div16-1t"}


def test_every_table_row_names_its_own_file():
    rows = [ln.split("\t") for ln in TABLE.read_text().splitlines() if ln and not ln.startswith("#")][1:]
    for family, value, size, url, date, note in rows:
        assert float(value) > 0 and size in url and "stressngsinglecore/stderr@" in url and size in note, family
        assert len(url.rsplit("@", 1)[1]) == 40 and date.startswith("2024-")


def test_the_acu_basis_stays_on_dsv2():
    h = hosts()
    assert h["azure/vm/Standard_DS4_v2"]["cpu_speed_basis"] == "azure-acu/100"
    assert h["azure/vm/Standard_DS4_v2"]["cpu_speed"]["src"] == "azd-dv2-dsv2"
