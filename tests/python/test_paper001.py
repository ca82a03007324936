"""Paper 001's reproductions (``mm-share``, ``mm-jitter``) in their quick form, and the media model's
tables that mm-share prints: Table 2 for both GOP patterns and the MPEG_APP rate of each scale."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fairstream import _core
from fairstream.reproduce import EXPERIMENTS
from fairstream.reproduce.media import playout_rows
from fairstream.reproduce.paper001 import FIG4, MEDIA, PUBLISHED_SCALE_KBPS, TABLE2, gaps, scale_rates
from fairstream.reproduce.runner import reproduce
from fairstream.results import RunResult

IDS = ["mm-share", "mm-jitter"]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("paper001")
    reproduce(IDS, out, quick=True, quiet=True, replicas=0)
    return out


def result(out: Path, exp_id: str) -> dict[str, Any]:
    return json.loads((out / exp_id / "result.json").read_text(encoding="utf-8"))


def test_registered_with_scenarios_and_links() -> None:
    for exp_id in IDS:
        exp = EXPERIMENTS[exp_id]
        assert exp.paper == "001" and exp.scenario_path().is_file()
        link = ROOT / "scenarios" / "papers" / exp.scenario_file
        assert link.is_symlink() and link.resolve() == exp.scenario_path().resolve()


def test_table2_both_patterns() -> None:
    for pattern, rows in TABLE2.items():
        assert tuple(_core.mpeg_policy_table(pattern)) == rows
    # The paper's rows, as printed (scale 4 first, blanks where a frame is not sent).
    assert [r.replace(".", " ") for r in reversed(TABLE2["IBBPBBPBB"])] == [
        "IBBPBBPBB",
        "I BP BP B",
        "I  P  P  ",
        "I  P     ",
        "I        ",
    ]
    with pytest.raises(ValueError, match="starts with its I frame"):
        _core.mpeg_policy_table("BBI")


def test_scale_rates_of_the_paper_stream() -> None:
    encoded, wire = scale_rates()
    # Per 0.3 s GOP: I 11000 B; + P 8000; + P 8000; + 3 B of 2000; + 3 more B.
    for got, gop_bytes in zip(encoded, (11_000, 19_000, 27_000, 33_000, 39_000), strict=True):
        assert got == pytest.approx(gop_bytes * 8 / 0.3 / 1e3, abs=0.001)
    # On the wire: 58 B of headers (IPv4 20, UDP 8, frame 8, media 22) per packet of at most
    # 1500 B (I: 8 packets, P: 6, B: 2).
    assert wire[0] == pytest.approx((11_000 + 8 * 58) * 8 / 0.3 / 1e3, abs=0.001)
    assert wire[4] == pytest.approx((39_000 + 32 * 58) * 8 / 0.3 / 1e3, abs=0.001)
    assert all(w > e for w, e in zip(wire, encoded, strict=True))
    assert list(PUBLISHED_SCALE_KBPS) == [352, 544, 736, 896, 1056]
    with pytest.raises(ValueError, match="frame_rate"):
        _core.mpeg_scale_rates("IBBPBBPBB", 0.0, 1, 1, 1)


@pytest.mark.parametrize("exp_id", IDS)
def test_quick_result_checks_and_figures(reproduced: Path, exp_id: str) -> None:
    res = result(reproduced, exp_id)
    # mm-share reports its share checks again with the FTP flows as the linux preset.
    points, judged, reported = {"mm-share": (10, 4, 4), "mm-jitter": (2, 2, 0)}[exp_id]
    assert res["quick"] is True and res["published"] and res["comparison"]
    assert len(res["points"]) == points and (res["total"], res["reported"]) == (judged, reported)
    assert res["passed"] == res["total"], json.dumps(res["checks"], indent=1)
    figures = EXPERIMENTS[exp_id].figures(res, reproduced / exp_id, reproduced / "figures")
    assert figures
    for fig in figures:
        assert fig.path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and fig.caption


def test_mm_share_prints_fig4_and_the_scale_rates_beside_ours(reproduced: Path) -> None:
    res = result(reproduced, "mm-share")
    rows = {r["flow"]: r for r in res["points"]}
    assert set(rows) == set(FIG4)
    for flow, (early, late) in FIG4.items():
        assert rows[flow]["published_0"] == early and rows[flow]["published_1"] == late
        # The flows of 15 s have no throughput in 5-15 s; every other flow has some in each window.
        assert (rows[flow]["kbps_0"] is None) == (early is None)
        assert rows[flow]["kbps_1"] > 0
    quantities = {c["quantity"]: c for c in res["comparison"]}
    assert quantities["MPEG_APP scale 4 rate, kbit/s: encoded frames (on the wire)"]["published"] == 1056
    assert quantities["MPEG_APP scale 0 rate, kbit/s: encoded frames (on the wire)"]["ours"].startswith(
        "293.3 ("
    )
    assert quantities["Table 2, IBBPBBPBBPBB, scale 3: frames sent"]["ours"] == "I.BP.BP.BP.B"
    assert "352 / 544 / 736 / 896 / 1056" in res["explanation"]


def test_media_flows_are_greedier_than_tcp_once_the_others_join(reproduced: Path) -> None:
    rows = {r["flow"]: r for r in result(reproduced, "mm-share")["points"]}
    media = [rows[f]["kbps_1"] for f in MEDIA]
    tcp = [r["kbps_1"] for f, r in rows.items() if f.startswith("ftp")]
    assert min(media) > sum(tcp) / len(tcp)
    for flow in MEDIA:
        assert 0 <= rows[flow]["scale_1"] <= 4
    # The whole bottleneck is in use: the ten flows deliver close to 6 Mbit/s in 15-25 s.
    assert 5400 < sum(r["kbps_1"] for r in rows.values()) <= 6000


def test_mm_jitter_tcp_times_out_only_under_congestion(reproduced: Path) -> None:
    rows = {r["setting"]: r for r in result(reproduced, "mm-jitter")["points"]}
    assert rows["pair"]["tcp_dropped"] == 0 and rows["pair"]["tcp_timeouts"] == 0
    assert rows["mix"]["tcp_timeouts"] > 0
    assert rows["mix"]["tcp_max_ms"] > 10 * rows["mix"]["media_max_ms"]
    # MM_APP at scale 4 most of the time alone: 1000 B at 1100 kbit/s every 7.27 ms.
    assert rows["pair"]["media_mean_ms"] == pytest.approx(8000 / 1100, rel=0.01)


def test_gaps() -> None:
    assert gaps([1.0, 1.5, 3.0]) == [0.5, 1.5]
    assert gaps([2.0]) == []


def test_the_media_flows_play_out_through_a_player(reproduced: Path) -> None:
    # MM_APP's and MPEG_APP's receivers play through the streamer's model: the flow summary's
    # media columns (decodable, late, stalls) are filled, and mm-share prints them.
    res = result(reproduced, "mm-share")
    rows = {
        r["flow"]: r for r in playout_rows(RunResult(reproduced / "mm-share" / res["runs"]["mix"]).summary)
    }
    for flow in MEDIA:
        r = rows[flow]
        assert r["frames_decodable"] is not None and 0 < r["frames_decodable"] <= r["frames_delivered"]
        assert r["frames_late"] is not None and r["stalls"] is not None and r["jitter_s"] is not None
        assert r["startup_delay_s"] is not None and r["startup_delay_s"] >= 1.0  # the 1 s prebuffer
    assert any("decodable at their turn" in c["quantity"] for c in res["comparison"])
    jitter = result(reproduced, "mm-jitter")
    assert all(p["media_frames_decodable"] for p in jitter["points"])
