"""`bench disk/db --emulate` start `storlab emulate` in a process of its own;
STORLAB_EMULATE_OPTIONS adds options to its command line (docs/emulate.md)."""

from __future__ import annotations

import pytest

from storlab import emulated
from storlab.errors import StorlabError

SCENARIO = """
[configs.gp2]
host = "aws/ec2/r5.large"
[[configs.gp2.pools]]
device = "aws/ebs/gp2"
size_gib = 100
"""


def test_the_options_reach_the_emulator(tmp_path, monkeypatch):
    # 150 % is out of --initial-credits' range (0-100): the emulator refuses it
    # before mounting anything, so its refusal shows the option arrived.
    sc = tmp_path / "gp2.toml"
    sc.write_text(SCENARIO)
    monkeypatch.setenv("STORLAB_EMULATE_OPTIONS", "--initial-credits 150")
    with pytest.raises(StorlabError, match=r"--initial-credits 150(\.0)?: a percentage from 0 to 100"):
        with emulated.mounted(f"{sc}:gp2", tmp_path / "work" / "a", [None]):
            pass
    # The folders it made for the work folder are gone again ...
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gp2.toml"]
    # ... and a work folder that was there stays, with nothing left in it.
    (tmp_path / "mine").mkdir()
    with pytest.raises(StorlabError, match=r"--initial-credits 150"):
        with emulated.mounted(f"{sc}:gp2", tmp_path / "mine", [None]):
            pass
    assert list((tmp_path / "mine").iterdir()) == []
