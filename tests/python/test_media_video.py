"""Real video through ffprobe (`fairstream._core.import_video`, and `trace = { video = ... }` in an
MPEG_APP scenario): ffmpeg's test source encoded with two codecs, imported, checked against an
independent ffprobe call, and streamed. Skipped, saying why, without ffmpeg (``.ci/run`` installs
it when it can); the missing-ffprobe error itself is tested in Rust (crates/media)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from fairstream import _core, run

pytestmark = pytest.mark.skipif(
    not (shutil.which("ffmpeg") and shutil.which("ffprobe")),
    reason="ffmpeg/ffprobe not installed (Debian: apt-get install ffmpeg): real-video import not tested",
)


def encode(tmp: Path, codec: str, q: int) -> Path:
    """3 s of ffmpeg's testsrc at 25 frame/s, GOP 12 with 2 B frames, at quantiser `q`."""
    path = tmp / f"{codec}.mpg"
    subprocess.run(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi"]
        + ["-i", "testsrc=duration=3:size=320x240:rate=25"]
        + ["-c:v", codec, "-q:v", str(q), "-g", "12", "-bf", "2", str(path)],
        check=True,
    )
    return path


def ffprobe_frames(path: Path) -> list[tuple[str, int]]:
    """(type, bytes) per frame from ffprobe's compact output, independent of the importer's JSON."""
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pict_type,pkt_size"]
        + ["-of", "compact=p=0:nk=0", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    frames = []
    for line in out.splitlines():
        fields = dict(kv.split("=", 1) for kv in line.strip().split("|") if "=" in kv)
        if "pict_type" in fields:
            frames.append((fields["pict_type"], int(fields["pkt_size"])))
    return frames


def test_two_encodings_import_as_ffprobe_reports_and_stream(tmp_path: Path) -> None:
    sizes = {}
    for codec, q in (("mpeg1video", 10), ("mpeg2video", 2)):
        path = encode(tmp_path, codec, q)
        frames = _core.import_video(path)
        assert [(k, b) for _, k, b in frames] == ffprobe_frames(path), codec
        assert len(frames) == 75
        assert frames[0][:2] == (0.0, "I")
        assert {k for _, k, _ in frames} == {"I", "P", "B"}
        assert frames[25][0] == pytest.approx(1.0, abs=1e-6)
        sizes[codec] = sum(b for _, _, b in frames)

        scenario = {
            "name": "video",
            "duration": "6s",
            "topology": {
                "nodes": ["a", "b"],
                "link": [{"between": ["a", "b"], "rate": "10Mbps", "delay": "20ms"}],
            },
            "flow": [{"protocol": "mpegapp", "from": "a", "to": "b", "trace": {"video": str(path)}}],
        }
        result = run(scenario)
        delivered = int(result.flow_summary["bytes_delivered"][0])
        # All frames once at scale 4 (after about a second's climb), looped over 6 s: at most
        # twice the clip's bytes plus headers, at least most of it.
        assert 0.75 * 2 * sizes[codec] < delivered < 1.1 * 2 * sizes[codec], (codec, delivered)
    assert sizes["mpeg2video"] > 1.5 * sizes["mpeg1video"]


def test_a_file_ffprobe_cannot_read_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-video.mp4"
    bad.write_text("hello")
    with pytest.raises(ValueError, match="not-a-video.mp4: ffprobe could not read the video"):
        _core.import_video(bad)
