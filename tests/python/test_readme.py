"""The README's scenario does what its text promises: it validates, runs, and its two TCP flows
fill the 11 Mbps bottleneck between them (not a window-limited third of it)."""

from __future__ import annotations

import re
from pathlib import Path

from fairstream.api import run

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_scenario() -> str:
    blocks = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "README.md has no ```toml block"
    return blocks[0]


def test_readme_scenario_fills_the_link(tmp_path: Path) -> None:
    result = run(readme_scenario(), output_dir=tmp_path / "out")
    links = {link["name"]: link for link in result.summary["links"]}
    bottleneck = links["router_left->router_right"]
    assert bottleneck["utilisation"] > 0.9, bottleneck  # slow start included
    flows = result.summary["flows"]
    assert len(flows) == 2
    assert sum(f["throughput_bps"] for f in flows) > 0.9 * 11e6
