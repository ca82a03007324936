"""pcap captures open in tshark, hold one record per transmitted packet, and raise no TCP
sequence-analysis warnings for a loss-free flow. Skipped where tshark is not installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import small_scenario
from fairstream import run

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (apt-get install tshark)")


def tshark(*args: str) -> str:
    done = subprocess.run([TSHARK, *args], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def test_capture_of_a_lossless_link_opens_cleanly(tmp_path: Path) -> None:
    doc = small_scenario(duration="2s", udp_rate="0.2Mbps")
    doc["record"]["pcap"] = ["S1->N1", "N1->S1"]
    result = run(doc, output_dir=tmp_path / "out")
    links = {link["name"]: link for link in result.summary["links"]}
    for name, file in [("S1->N1", "S1-%3EN1.pcap"), ("N1->S1", "N1-%3ES1.pcap")]:
        path = result.output_dir / "pcap" / file
        lines = tshark("-r", str(path)).splitlines()
        assert len(lines) == links[name]["packets_forwarded"] > 0
        expert = tshark("-r", str(path), "-q", "-z", "expert")
        assert "Warns" not in expert and "Errors" not in expert, expert
    first = tshark("-r", str(result.output_dir / "pcap" / "S1-%3EN1.pcap"), "-c", "2")
    # Addresses are the flow's end hosts: S1 is node 0 (10.0.0.1), R1 node 4 (10.0.0.5).
    assert "[SYN] Seq=0" in first and "10.0.0.1 → 10.0.0.5" in first


def test_captures_are_written_beside_the_results_and_leave_nothing_behind(tmp_path: Path) -> None:
    doc = small_scenario(duration="1s", udp_rate="0.2Mbps")
    doc["record"]["pcap"] = ["S1->N1"]
    result = run(doc, output_dir=tmp_path / "out")
    path = result.output_dir / "pcap" / "S1-%3EN1.pcap"
    assert len(tshark("-r", str(path)).splitlines()) > 0
    # The capture went to a hidden file beside the results as the run went, and is gone.
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_sack_blocks_and_timestamps_dissect_as_tcp_options(tmp_path: Path) -> None:
    # A linux-preset flow through the lossy bottleneck: its ACKs carry SACK blocks and every
    # segment timestamps, each paid for in the packet's size and written into the capture.
    doc = small_scenario(duration="4s", udp_rate="1.2Mbps")
    doc["flow"][0] |= {"preset": "linux", "window": 200}
    doc["record"]["pcap"] = ["S1->N1", "N1->S1"]
    result = run(doc, output_dir=tmp_path / "out")
    acks = result.output_dir / "pcap" / "N1-%3ES1.pcap"
    data = result.output_dir / "pcap" / "S1-%3EN1.pcap"
    fields = ("-T", "fields", "-e", "tcp.options.sack_le", "-e", "tcp.options.sack_re", "-e", "ip.len")
    sacked = [
        line.split("\t")
        for line in tshark("-r", str(acks), "-Y", "tcp.options.sack_le", *fields).splitlines()
    ]
    assert sacked, "no ACK carried a SACK block"
    for left, right, ip_len in sacked:
        blocks = len(left.split(","))
        assert blocks == len(right.split(",")) <= 3  # beside timestamps
        assert int(ip_len) == 40 + 12 + 4 + 8 * blocks
        # Each block covers whole 1448-byte segments.
        for le, re_ in zip(left.split(","), right.split(","), strict=True):
            assert (int(re_) - int(le)) % 1448 == 0 and int(re_) > int(le)
    ts = tshark(
        "-r",
        str(data),
        "-Y",
        "tcp.len > 0",
        "-T",
        "fields",
        "-e",
        "tcp.options.timestamp.tsval",
        "-e",
        "tcp.len",
    )
    rows = [line.split("\t") for line in ts.splitlines()]
    assert rows and all(val and int(length) <= 1448 for val, length in rows)
    assert "Malformed" not in tshark("-r", str(acks)) + tshark("-r", str(data))
