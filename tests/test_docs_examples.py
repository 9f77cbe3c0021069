"""Every number of every worked example in docs/ and README.md, checked
against what the tool returns for the same example today, so the docs
cannot drift from the code. Each test reads the doc's own sentence or
table, runs the example in process through the API, and compares; a
tolerance only where the doc rounds (to the digits it prints)."""

from __future__ import annotations

import re

import pytest

from conftest import EXAMPLES, ROOT
from storlab import api

DOCS = ROOT / "docs"


def num(text: str) -> float:
    """A number as the docs print it: `11,800`, `0.0459`, `$62.98`."""
    return float(text.replace(",", "").replace("$", ""))


def find(doc: str, pattern: str) -> re.Match:
    """The doc's sentence; its words may wrap onto the next line."""
    text = (ROOT / doc).read_text()
    m = re.search(pattern.replace(" ", r"\s+"), text)
    assert m, f"{doc}: no longer says /{pattern}/ — update the doc and this test together"
    return m


def rounded(value: float, shown: str) -> bool:
    """`value` printed with as many decimals as `shown` has is `shown`."""
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return round(value, decimals) == round(num(shown), decimals)


def config(record: dict, name: str) -> dict:
    return next(c for c in record["configs"] if c["name"] == name)


# -- README: host cache None vs ReadOnly -------------------------------------

def test_readme_host_cache_example():
    m = find("README.md", r"lifts 4 KiB reads from ([\d,]+) IOPS \(four P30s\) to ([\d,]+) \(`([^`]+)`\) "
                          r"but caps 1 MiB reads at the VM's cached ([\d,]+) MB/s, below the uncached ([\d,]+)\.")
    rec = api.limits(EXAMPLES / "azure-ds4-p30-host-cache.toml")
    none, ro = config(rec, "none"), config(rec, "readonly")
    assert none["ceilings"]["rand4k_read_iops"] == num(m[1])
    assert ro["ceilings"]["rand4k_read_iops"] == num(m[2])
    assert " ".join(m[3].split()) == ro["binding"]["rand4k_read_iops"]
    assert ro["ceilings"]["seq1m_read_bytes_s"] == num(m[4]) * 1e6
    assert none["ceilings"]["seq1m_read_bytes_s"] == num(m[5]) * 1e6


# -- docs/report.md: the pictures' limits record ------------------------------

def test_report_ceilings_example():
    m = find("docs/report.md", r"the five small volumes promise ([\d,]+) IOPS while their credits last, ([\d,]+) after")
    five = config(api.limits(EXAMPLES / "aws-t3-gp2-one-vs-five.toml"), "five-20gib")
    assert five["ceilings"]["rand4k_read_iops"] == num(m[1])
    assert five["sustained"]["rand4k_read_iops"] == num(m[2])


# -- docs/scenario.md and docs/catalog.md: how long gp2's bucket lasts --------

GP2_100 = """title = "gp2 100 GiB"
[configs.a]
host = "aws/ec2/r5.large"
[[configs.a.pools]]
device = "aws/ebs/gp2"
size_gib = 100
"""


def gp2_credits(tmp_path, at_iops: float) -> dict:
    f = tmp_path / "gp2.toml"
    f.write_text(GP2_100)
    at = config(api.limits(f, at_iops=at_iops), "a")["at_load"]
    return next(b for b in at if b["bucket"] == "aws/ebs/gp2 I/O credits")


def test_scenario_bucket_duration_example(tmp_path):
    m = find("docs/scenario.md", r"gp2 100 GiB at ([\d,]+) IOPS: 5\.4 M / \(([\d,]+) − 300\) = ([\d,]+) s, then "
                                 r"([\d,]+) IOPS; at ([\d,]+) IOPS: 5\.4 M / ([\d,]+) = ([\d,]+) s")
    full = gp2_credits(tmp_path, num(m[1]))
    assert rounded(full["lasts_s"], m[3]) and full["rate_after"] == num(m[4])
    half = gp2_credits(tmp_path, num(m[5]))
    assert rounded(half["lasts_s"], m[7])
    # The doc's arithmetic: 5.4 M credits (EBS user guide, gp2) over the load less the 300 IOPS baseline.
    assert num(m[2]) == num(m[1]) and num(m[6]) == num(m[5]) - 300


def test_catalog_bucket_duration_example(tmp_path):
    m = find("docs/catalog.md", r"\(gp2 100 GiB: 5\.4 M / ([\d,]+) = ([\d,]+) s\)")
    # 2,700 = the 3,000 IOPS burst less the 300 IOPS baseline of 100 GiB (3 IOPS/GiB).
    assert rounded(gp2_credits(tmp_path, num(m[1]) + 300)["lasts_s"], m[2])


# -- docs/dbmodel.md: TPC-C on FSx vs io2 --------------------------------------

@pytest.fixture(scope="module")
def fsx_io2() -> dict:
    return api.simulate(EXAMPLES / "db-tpcc-fsx-vs-io2.toml")


def rows(record: dict, cfg: str) -> dict[int, dict]:
    return {int(r["vus"]): r for r in record["results"] if r["config"] == cfg}


def test_dbmodel_worked_example_table(fsx_io2):
    text = (DOCS / "dbmodel.md").read_text()
    example = text[text.index("## A worked example"):]
    table = re.findall(r"^\| (fsx|io2) \| ([\d,]+) \| ([\d,]+) \| ([^|]+) \| (\d+) VUs \| ([\d,]+) \| ([\d,]+) \| ([\d.]+) \|$",
                       example, re.M)
    assert [t[0] for t in table] == ["fsx", "io2"], "the worked example's table changed shape — update this test"
    tips = {t["config"]: t for t in fsx_io2["tipping_point"]}
    for cfg, at64, at1024, binding, tip, nopm_tip, usd, per_1000 in table:
        r = rows(fsx_io2, cfg)
        assert round(r[64]["nopm"]) == num(at64), cfg
        assert round(r[1024]["nopm"]) == num(at1024), cfg
        assert r[1024]["binding"].startswith(binding.strip()), (cfg, r[1024]["binding"])
        assert tips[cfg]["vus"] == int(tip) and round(tips[cfg]["value"]) == num(nopm_tip), cfg
        at_tip = r[int(tip)]
        assert round(at_tip["monthly_cost_usd"]) == num(usd), cfg
        assert rounded(at_tip["usd_per_1000_tpm"], per_1000), cfg


def test_dbmodel_worked_example_prose(fsx_io2):
    doc = "docs/dbmodel.md"
    m = find(doc, r"The cache is ([\d,]+) GiB \((\d+) % of ([\d,]+) GiB\) for ([\d,]+) GiB of data, ([\d.]+) of it; "
                  r"the TPC-C curve gives a miss ratio of ([\d.]+), so a transaction reads about (\d+) pages")
    said = next(a for a in fsx_io2["inputs"]["assumptions"] if a.startswith("config fsx: database cache"))
    a = re.search(r"database cache ([\d.]+) GiB \((\d+) % of (\d+) GiB host memory\) for ([\d.]+) GiB of data .*?: "
                  r"([\d.]+) of the data cached, miss ratio ([\d.]+)", said)
    assert a, said
    assert num(m[1]) == float(a[1]) and m[2] == a[2] and num(m[3]) == float(a[3])
    assert rounded(float(a[4]), m[4]) and rounded(float(a[5]), m[5]) and m[6] == a[6]
    reads = re.search(r"([\d.]+) reads per transaction", rows(fsx_io2, "fsx")[64]["binding"])
    assert reads and round(float(reads[1])) == int(m[7])

    fsx, io2 = rows(fsx_io2, "fsx"), rows(fsx_io2, "io2")
    m = find(doc, r"disk IOPS bind from (\d+) users \(([\d,]+) each[^)]*\), at ([\d.]+)–([\d.]+) GB/s")
    smb = [v for v, r in sorted(fsx.items()) if r["binding"].startswith("data pool: file system aws/fsx/windows")
           and f"disk {num(m[2]):.0f} IOPS each" in r["binding"]]
    assert smb and smb[0] == int(m[1]) and smb == [v for v in fsx if v >= int(m[1])]
    gbs = [(fsx[v]["pools"]["data"]["read_bytes_s"] + fsx[v]["pools"]["data"]["write_bytes_s"]) / 1e9 for v in smb]
    assert rounded(min(gbs), m[3]) and rounded(max(gbs), m[4])
    m = find(doc, r"The io2 stripe is held to the instance's ([\d,]+) EBS IOPS from (\d+) users on")
    assert all(r["binding"] == f"host r5dn.24xlarge: EBS {num(m[1]):.0f} IOPS, 100 % busy" for v, r in io2.items()
               if v >= int(m[2]))
    m = find(doc, r"FSx's tipping point is at (\d+) users although NOPM still rises past it")
    assert max(r["nopm"] for r in fsx.values()) > fsx[int(m[1])]["nopm"]
    m = find(doc, r"the tipping point is the\s+fewest users reaching (\d+) % of the highest NOPM")
    assert f"reaches {m[1]} % of the sweep's highest" in " ".join(fsx_io2["inputs"]["assumptions"])
    m = find(doc, r"At the highest NOPM FSx gives ([\d.]+) times the io2 stripe's throughput for ([\d.]+) times its "
                  r"monthly cost")
    best = {c: max(rs.values(), key=lambda r: r["nopm"]) for c, rs in (("fsx", fsx), ("io2", io2))}
    assert rounded(best["fsx"]["nopm"] / best["io2"]["nopm"], m[1])
    assert rounded(best["fsx"]["monthly_cost_usd"] / best["io2"]["monthly_cost_usd"], m[2])


def test_advise_worked_example(tmp_path):
    """docs/advise.md's question, run as the doc shows it: the cheapest
    answer and the Over-provisioned config's saving are the doc's."""
    text = (DOCS / "advise.md").read_text()
    question = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    cheapest = find("docs/advise.md", r"\*\*\$([\d,.]+) a month\*\*\.").group(1)
    saving = find("docs/advise.md", r"a saving of\n?\*\*\$([\d,.]+) a month\*\*\.").group(1)
    p = tmp_path / "q.toml"
    p.write_text(question)
    rec = api.advise(p)
    assert rounded(rec["recommendations"][0]["monthly_cost_usd"], cheapest)
    big = next(f for f in rec["findings"] if f["config"] == "big")
    assert big["finding"] == "Over-provisioned" and rounded(big["saving_usd_month"], saving)
    # "up to three options — the cheapest recommendations, ranked", each saving against the config
    assert 1 <= len(big["options"]) <= 3
    assert rounded(big["options"][0]["saving_usd_month"], saving)
