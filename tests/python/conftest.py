"""Shared pytest setup: headless matplotlib, and the small scenario most tests run."""

from __future__ import annotations

import os

os.environ.setdefault("MPLBACKEND", "Agg")

from typing import Any  # noqa: E402

import pytest  # noqa: E402


def small_scenario(duration: str = "5s", udp_rate: str = "1Mbps") -> dict[str, Any]:
    """TCP and CBR UDP through a 1.5 Mbps bottleneck: quick to run, with losses."""
    access = {"rate": "10Mbps", "delay": "5ms"}
    bottleneck = {"rate": "1.5Mbps", "delay": "10ms", "queue": {"kind": "droptail", "limit": "20 packets"}}
    tcp = {"name": "tcp", "protocol": "tcp", "from": "S1", "to": "R1", "packet_size": "1500B"}
    udp = {"name": "udp", "protocol": "cbr", "from": "S2", "to": "R2", "rate": udp_rate}
    udp["packet_size"] = "1500B"
    return {
        "name": "small",
        "description": "test scenario",
        "duration": duration,
        "seed": 7,
        "topology": {
            "nodes": ["S1", "S2", "N1", "N2", "R1", "R2"],
            "link": [
                {"between": ["S1", "N1"], **access},
                {"between": ["S2", "N1"], **access},
                {"between": ["N1", "N2"], **bottleneck},
                {"between": ["N2", "R1"], **access},
                {"between": ["N2", "R2"], **access},
            ],
        },
        "flow": [tcp, udp],
        "record": {"interval": "100ms"},
    }


@pytest.fixture
def scenario() -> dict[str, Any]:
    return small_scenario()
