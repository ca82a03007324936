"""Every captured link gets its own pcap file: names that differ only in non-ASCII characters
(or in punctuation a file name cannot hold) no longer share one, and a file name decodes back
to its link's name."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

from fairstream import run


def test_links_named_apart_only_by_non_ascii_characters_get_their_own_files(tmp_path: Path) -> None:
    names = ["a→b", "a←b", "a?b", "a-b"]
    doc = {
        "name": "pcap-names",
        "duration": "200ms",
        "topology": {
            "nodes": ["a", "b"],
            "link": [
                {"from": "a", "to": "b", "name": names[0], "rate": "10Mbps", "delay": "1ms"},
                {"from": "b", "to": "a", "name": names[1], "rate": "10Mbps", "delay": "1ms"},
                {"from": "a", "to": "b", "name": names[2], "rate": "1Mbps", "delay": "1ms"},
                {"from": "a", "to": "b", "name": names[3], "rate": "1Mbps", "delay": "1ms"},
            ],
        },
        "flow": [{"protocol": "tcp", "from": "a", "to": "b"}],
        "record": {"pcap": names},
    }
    result = run(doc, output_dir=tmp_path / "out")
    files = sorted(p.name for p in (result.output_dir / "pcap").iterdir())
    assert len(files) == len(names), files
    assert sorted(unquote(f.removesuffix(".pcap")) for f in files) == sorted(names)
    assert "a%E2%86%92b.pcap" in files and "a-b.pcap" in files
