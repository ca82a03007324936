"""The streamer's playout summary and level figure (`fairstream.reproduce.media`): the example
head-to-head scenario, shortened, writes each player's playout columns into the flow summary and
summary.json alike; the report's playout table and the level figure read them."""

from pathlib import Path

import fairstream
import polars as pl
from fairstream.reproduce.media import PLAYOUT_COLUMNS, level_figure, playout_rows, report_rows

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "surestream-h2h.toml"


def short_h2h() -> str:
    # 20 s clips in a 60 s run (long enough for both to play out): the same file, shortened.
    text = SCENARIO.read_text(encoding="utf-8")
    return text.replace('clip_length = "120s"', 'clip_length = "20s"').replace(
        'duration = "150s"', 'duration = "60s"'
    )


def test_playout_summary_lands_in_parquet_and_summary_json(tmp_path: Path) -> None:
    run = fairstream.run(short_h2h(), output_dir=tmp_path / "run")
    rows = playout_rows(run.summary)
    assert [r["flow"] for r in rows] == ["udp", "tcp"]
    table = run.flow_summary.sort("flow_id")
    for row in rows:
        parquet = table.filter(pl.col("name") == row["flow"]).to_dicts()[0]
        for c in PLAYOUT_COLUMNS:
            assert parquet[c] == row[c], (row["flow"], c)
        # 20 s at 15 frame/s, every frame sent; no more delivered or decodable than sent.
        assert row["frames_sent"] == 300
        assert row["frames_decodable"] <= row["frames_delivered"] <= row["frames_sent"]
        assert row["startup_delay_s"] > 0
        assert row["level_changes"] >= 1
    # The TCP player loses nothing: every frame it got was decodable or late.
    tcp = rows[1]
    assert tcp["frames_decodable"] + tcp["frames_late"] == tcp["frames_delivered"]
    # The report's table names the run; the level figure is drawn.
    table_rows, more = report_rows([tmp_path / "run"])
    assert (len(table_rows), more, table_rows[0]["run"]) == (2, 0, "run")
    png = level_figure(run, tmp_path / "levels.png", title="levels", bottleneck_kbps=300)
    assert png.stat().st_size > 1000


def test_a_run_without_media_flows_has_null_playout_columns(tmp_path: Path) -> None:
    run = fairstream.run(
        {
            "name": "tcp",
            "duration": "1s",
            "topology": {
                "nodes": ["a", "b"],
                "link": [{"between": ["a", "b"], "rate": "1Mbps", "delay": "1ms"}],
            },
            "flow": [{"from": "a", "to": "b"}],
        }
    )
    assert playout_rows(run.summary) == []
    assert run.flow_summary["frames_sent"].null_count() == 1
