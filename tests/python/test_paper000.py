"""Paper 000's head-to-head study (fairstream.reproduce.paper000): the seeded clip population has
the shape EXPERIMENTS.md chooses, each clip becomes a valid scenario with its levels, length, round
trip, loss and bucket, and one run's row holds numbers computed from its series."""

from __future__ import annotations

import math

import pytest
from fairstream.reproduce import EXPERIMENTS, paper000
from fairstream.reproduce.paper000 import clip_scenario, population


def test_population_is_seeded_and_shaped_as_chosen():
    clips = population(400)
    assert clips == population(400)
    assert clips != population(400, seed=1)
    single = sum(len(c.levels_kbps) == 1 for c in clips) / len(clips)
    assert 0.28 < single < 0.42
    assert max(len(c.levels_kbps) for c in clips) == 8
    for c in clips:
        assert list(c.levels_kbps) == sorted(set(c.levels_kbps))
        assert all(20 <= x <= 450 for x in c.levels_kbps)
        assert 20 <= c.rtt_ms <= 200 and 60 <= c.length_s <= 600 and 0 <= c.loss < 0.01
    loss_free = sum(c.loss == 0 for c in clips) / len(clips)
    assert 0.33 < loss_free < 0.47
    short = population(10, time_scale=0.2)
    assert [c.length_s for c in short] == pytest.approx([c.length_s * 0.2 for c in clips[:10]], abs=0.06)


def test_a_clip_becomes_a_valid_scenario():
    from fairstream import validate

    exp = EXPERIMENTS["h2h-share"]
    base = exp.base_scenario()
    clip = paper000.Clip(3, (25, 80, 300), 120.0, 90.0, 0.004)
    s = clip_scenario(base, clip, 150, "10KB", 7)
    validate(s)
    internet, back, bucket, _ = s["topology"]["link"]
    assert internet["delay"] == back["delay"] == "59.00ms"
    assert internet["loss"]["per"] == "0.4000%"
    assert bucket["queue"]["rate"] == "150kbps"
    assert [f["levels"] for f in s["flow"]] == [[25, 80, 300]] * 2
    assert [f["transport"] for f in s["flow"]] == ["udp", "tcp"]
    assert s["seed"] == 7
    lossless = clip_scenario(base, paper000.Clip(0, (50,), 40.0, 60.0, 0.0), 75, "5KB", 1)
    assert "loss" not in lossless["topology"]["link"][0]
    validate(lossless)
    # The base file is not touched.
    assert exp.base_scenario() == base


def test_every_h2h_experiment_streams_the_population():
    quick = {e: EXPERIMENTS[e].points(True) for e in ("h2h-share", "h2h-scaling")}
    assert len(quick["h2h-share"]) == paper000.QUICK_CLIPS * 4
    assert {p.params["rate_kbps"] for p in quick["h2h-scaling"]} == {35}
    full = EXPERIMENTS["h2h-share"].points(False)
    assert len(full) == paper000.CLIPS * 4 >= 320
    assert len({p.key for p in full}) == len(full)
    assert not math.isnan(full[0].params["rtt_ms"])


def test_one_head_to_head_run_gives_a_row_from_its_series():
    from fairstream import run
    from fairstream.reproduce.experiment import Point

    exp = EXPERIMENTS["h2h-share"]
    clip = paper000.Clip(0, (30, 100, 250, 400), 80.0, 60.0, 0.0)
    scenario = clip_scenario(exp.base_scenario(), clip, 150, "10KB", 3)
    result = run(scenario)
    row = paper000.clip_row(Point("x", paper000._params(clip, 150, 1.0), scenario), result)
    summary = {f["name"]: f for f in result.summary["flows"]}
    for flow in ("udp", "tcp"):
        # The metric series' level changes are the flow summary's (the streamer's own count).
        assert row[f"{flow}_changes"] == summary[flow]["level_changes"]
        assert 0 < row[f"{flow}_kbps"] < 150 * 1.2
        assert row[f"{flow}_startup_s"] == summary[flow]["startup_delay_s"]
        # Both start at 400 kbps, above the bucket, and both get below it during the run.
        assert 0 < row[f"{flow}_below_s"] < 60
    assert row["diff"] == pytest.approx((row["tcp_kbps"] - row["udp_kbps"]) / 150)
    assert 0 < row["loss"] < 0.5 and 0.08 <= row["rtt_s"] < 1.0
