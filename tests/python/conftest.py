"""Shared pytest setup: headless matplotlib, a run cache of the test's own, SIGINT deliverable and
left by every test as it was found, and the small scenario most tests run."""

from __future__ import annotations

import os
import signal

os.environ.setdefault("MPLBACKEND", "Agg")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The run cache of the session (module fixtures, such as a quick reproduction, use it): never
    the user's own (`fairstream.cache`)."""
    path = tmp_path_factory.mktemp("run-cache")
    saved = os.environ.get("FAIRSTREAM_CACHE")
    os.environ["FAIRSTREAM_CACHE"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("FAIRSTREAM_CACHE", None)
    else:
        os.environ["FAIRSTREAM_CACHE"] = saved


@pytest.fixture(autouse=True)
def run_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own run cache (a run of one test is never served to another), in
    FAIRSTREAM_CACHE, which subprocesses inherit."""
    path = tmp_path_factory.mktemp("test-run-cache")
    monkeypatch.setenv("FAIRSTREAM_CACHE", str(path))
    return path


@pytest.fixture(scope="session", autouse=True)
def sigint_deliverable() -> Iterator[None]:
    """Ctrl-C reaches this process and the commands it starts, as at a terminal. A shell without
    job control starts a background job (`pytest &`) with SIGINT ignored, which the process and
    every child inherit: the interrupt tests then failed as if fairstream had lost the signal
    (the signal never came). Python's handler is installed for the session in that case."""
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if ignored:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture(autouse=True)
def sigint_as_found() -> Iterator[None]:
    """Every test leaves SIGINT's disposition as it found it: a test that left another behind
    (ignored, or a handler of its own) would make a later test's Ctrl-C vanish. Such a test fails
    here, by name, and the disposition is put back."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"the test left SIGINT's disposition changed: {before!r} -> {after!r}")


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
