"""The streamer's playout summary and level figure (`fairstream.reproduce.media`): the example
head-to-head scenario, shortened, writes each player's playout columns into the flow summary and
summary.json alike; the report's playout table and the level figure read them."""

from pathlib import Path

import fairstream
import polars as pl
from fairstream import tomlio
from fairstream.dataset import DatasetWriter
from fairstream.reproduce.media import (
    PLAYOUT_COLUMNS,
    dataset_report_rows,
    level_figure,
    playout_rows,
    report_rows,
    report_rows_of,
)

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


def test_a_datasets_playout_rows_are_its_canonical_points_summaries(tmp_path: Path) -> None:
    # Three points (added out of key order) and a replica of each; the rows must be the
    # canonical points', by key, the flows in each run's order, as from their summaries.
    text = short_h2h().replace('duration = "60s"', 'duration = "25s"')
    writer = DatasetWriter(tmp_path / "data", ["seed"], replicas=True)
    summaries = {}
    for index, (key, seed) in enumerate([("c2", 3), ("c0", 1), ("c1", 2)]):
        for replica in (0, 1):
            doc = tomlio.loads(text)
            doc["seed"] = seed + 100 * replica
            run = fairstream.run(doc)
            tables = {"flow_summary": run.flow_summary}
            writer.add(index, key, {"seed": seed}, run.summary, tables, replica=replica)
            if replica == 0:
                summaries[key] = run.summary
    writer.close()
    expected = report_rows_of(sorted(summaries.items()), limit=5)
    assert dataset_report_rows(tmp_path / "data", limit=5) == expected
    assert expected[1] == 1 and [r["run"] for r in expected[0]] == ["c0", "c0", "c1", "c1", "c2"]
    assert dataset_report_rows(tmp_path / "data", limit=20) == report_rows_of(sorted(summaries.items()))
    (tmp_path / "data" / "flow_summary.parquet").unlink()  # a dataset none of whose runs had a flow
    assert dataset_report_rows(tmp_path / "data") == ([], 0)
