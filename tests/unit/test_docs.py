"""The scenario and catalog references document every field the model's
schema accepts, so the docs cannot drift from the code."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT

SRC = ROOT / "crates" / "storlab-model" / "src"


def struct_fields(path, name):
    text = path.read_text()
    m = re.search(rf"pub (?:struct|enum) {name} \{{(.*?)\n\}}", text, re.S)
    assert m, name
    return re.findall(r"^\s+pub (\w+):", m.group(1), re.M)


@pytest.mark.parametrize("doc,src,structs", [
    ("scenario.md", "scenario.rs", ["ScenarioFile", "ConfigSpec", "PoolSpec"]),
    # [[alarms]] entries are the record's own alarm type.
    ("scenario.md", "../../storlab-record/src/alarms.rs", ["AlarmRule"]),
    ("catalog.md", "catalog.rs", ["DeviceSpec", "HostSpec", "PriceSpec", "SourceSpec", "FsStorage", "BurstRule", "LatencyProfile"]),
])
def test_every_field_is_documented(doc, src, structs):
    text = (ROOT / "docs" / doc).read_text()
    for s in structs:
        fields = struct_fields(SRC / src, s)
        assert fields, s
        for f in fields:
            assert f"`{f}`" in text or re.search(rf"\b{f}\b", text), f"{s}.{f} is not in docs/{doc}"


def const_names(src: str, const: str) -> list[str]:
    """The strings of a Rust `pub const NAME: [&str; N]` or `&[&str]` list."""
    m = re.search(rf"pub const {const}: &?\[&str(?:; \d+)?\] = &?\[(.*?)\];", src, re.S)
    assert m, const
    return re.findall(r'"(\w+)"', m.group(1))


def test_workload_fields_are_documented():
    text = (ROOT / "docs" / "workloads.md").read_text()
    src = (ROOT / "crates" / "storlab-workload" / "src" / "spec.rs").read_text()
    for const in ("FIELDS", "JOB_FIELDS"):
        for f in const_names(src, const):
            assert f"`{f}`" in text, f"{const} {f} is not in docs/workloads.md"


def test_db_workload_fields_and_generators_are_documented():
    text = (ROOT / "docs" / "db.md").read_text()
    src = (ROOT / "crates" / "storlab-db" / "src" / "custom" / "parse.rs").read_text()
    for const in ("GENERATORS", "FIELDS", "LOAD_FIELDS", "TRANSACTION_FIELDS", "METRIC_FIELDS"):
        for name in const_names(src, const):
            assert f"`{name}" in text, f"{const} {name} is not in docs/db.md"


def test_bench_db_flags_are_documented():
    import subprocess
    import sys

    text = (ROOT / "docs" / "db.md").read_text()
    out = subprocess.run([sys.executable, "-m", "storlab.cli", "bench", "db", "--help"], capture_output=True, text=True,
                         env={"COLUMNS": "300", "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}).stdout
    flags = set(re.findall(r"(--[a-z][a-z-]+)", out)) - {"--help"}
    assert len(flags) > 15, out
    for f in flags:
        assert f"`{f}" in text, f"{f} is not in docs/db.md"


def test_docs_hold_no_lab_notes():
    """User docs say what a feature does, not how it was found: no rounds,
    no dates of runs, no paths into a benchmark's history (STYLE.md, Comments
    and docs). An ISO timestamp (a documented default) is not a run's date."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for pattern in (r"\bround \d+", r"\bbench/runs\b", r"\b20\d\d-\d\d-\d\d\b(?!T)"):
            m = re.search(pattern, text)
            assert not m, f"{path.name}: lab note {m[0]!r} at offset {m.start()}"
