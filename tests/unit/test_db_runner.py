"""The sweep arithmetic of `bench db`: √2 steps, durations, the tipping point."""

from __future__ import annotations

import pytest

import json

from storlab import _native
from storlab.db.runner import parse_vus
from storlab.units import parse_duration
from storlab.errors import StorlabError


def test_vus_lists_and_auto():
    listed = parse_vus("256,362,512", 1024)
    assert (listed.steps, listed.is_auto) == ([256, 362, 512], False)
    # round(√2^k): 1, 1.41, 2, 2.83, 4, 5.66, 8, 11.31, 16 -> whole, strictly rising.
    auto = parse_vus("auto", 16)
    assert (auto.steps, auto.is_auto) == ([1, 2, 3, 4, 6, 8, 11, 16], True)
    # The sweep engineers use at the top: 256·√2^k.
    assert parse_vus("auto", 1024).steps[-5:] == [256, 362, 512, 724, 1024]
    with pytest.raises(StorlabError):
        parse_vus("0", 10)
    with pytest.raises(StorlabError):
        parse_vus("many", 10)


def test_an_automatic_sweep_stops_two_steps_past_its_knee():
    # NOPM 100, 200, 400, 410, 405 at 1, 2, 3, 4, 6 users: the highest is
    # 410, 95 % of it 389.5, first reached at the third step (400); two steps
    # later the sweep is done — after the fifth, not before.
    sweep = parse_vus("auto", 64)
    done = [sweep.record_step(v, "nopm", json.dumps(step(v, n))) for v, n in zip([1, 2, 3, 4, 6], [100, 200, 400, 410, 405])]
    assert done == [False, False, False, False, True]
    # A listed sweep runs every count.
    listed = parse_vus("8,16", 64)
    assert [listed.record_step(v, "nopm", json.dumps(step(v, 500))) for v in (8, 16)] == [False, True]


@pytest.mark.parametrize("text,seconds", [("30", 30), ("90s", 90), ("5m", 300), ("1h", 3600), ("2m30s", 150), ("1.5", 1.5), ("1d", 86400), ("10min", 600)])
def test_durations(text, seconds):
    assert parse_duration(text, "--duration") == seconds


@pytest.mark.parametrize("text", ["", "abc", "5x", "m5", "nan", "inf", "-5", "400d"])
def test_bad_durations(text):
    with pytest.raises(StorlabError, match="not a duration"):
        parse_duration(text, "--duration")


def step(vus, nopm, sd=None, repeats=1):
    """The runs of one sweep step: one run of `nopm`, or three whose sample
    standard deviation is `sd` (nopm - sd, nopm, nopm + sd)."""
    vals = [nopm] if repeats == 1 else [nopm - sd, nopm, nopm + sd]
    return [{"vus": vus, "nopm": v, "workload": "tpcc", "db": "sqlite", "repeat": k + 1} for k, v in enumerate(vals)]


def tipping_point(steps, metric):
    runs = [r for s in steps for r in s]
    rec = json.loads(_native.db_record_json("c", "tpcc", metric, '{"loaded": true, "load_s": 0}', json.dumps(runs), seed=1))
    (tip,) = rec["tipping_point"]
    return tip


def test_tipping_point_is_where_gains_fall_inside_the_noise():
    # Single runs: noise is 5 %. 16 -> 23 gains 2 % of 100,000 (inside), 32 loses.
    steps = [step(8, 60_000), step(11, 80_000), step(16, 100_000), step(23, 102_000), step(32, 97_000)]
    tip = tipping_point(steps, "nopm")
    assert tip["vus"] == 16 and tip["reached"] is True


def test_tipping_point_uses_the_repeats_spread():
    # With repeats, noise = 2 sd: 11 -> 16 gains 3,000, beyond 2 x 1,000.
    steps = [step(8, 90_000, 1_000, 3), step(11, 97_000, 1_000, 3), step(16, 100_000, 1_000, 3), step(23, 101_000, 1_000, 3)]
    assert tipping_point(steps, "nopm")["vus"] == 16


def test_still_rising_is_not_a_tipping_point():
    steps = [step(1, 10_000), step(2, 20_000), step(4, 40_000)]
    tip = tipping_point(steps, "nopm")
    assert tip["vus"] == 4 and tip["reached"] is False


def test_the_binding_reads_keywords_into_typed_options():
    empty = ('{"loaded": true, "load_s": 0}', "[]")
    # A keyword it does not take is refused with the ones it does.
    with pytest.raises(TypeError, match="unexpected keyword argument 'sed' — one of seed, interrupted"):
        _native.db_record_json("c", "tpcc", "nopm", *empty, sed=1)
    # A value of the wrong type names its keyword.
    with pytest.raises(TypeError, match="keyword argument 'seed'"):
        _native.db_record_json("c", "tpcc", "nopm", *empty, seed="one")
    with pytest.raises(TypeError, match="'seed' is required"):
        _native.db_record_json("c", "tpcc", "nopm", *empty)
    # None is "not given": the default (not interrupted).
    rec = json.loads(_native.db_record_json("c", "tpcc", "nopm", *empty, seed=7, interrupted=None))
    assert rec["interrupted"] is False and rec["seed"] == 7
