"""The benchmarks B1-B3 in ns-3, for `fairstream bench` to compare with on the same machine.

Two halves:

- in the parent, `spec_from_run` turns a fairstream run of a benchmark (its resolved scenario and
  the summary's per-flow ``start_s``/``stop_s``) into a plain JSON *spec* of the same network and
  flows, and refuses (ValueError) anything the ns-3 model below does not reproduce faithfully;
- in a fresh child process, ``python -m fairstream.bench_ns3`` reads a spec as JSON on stdin,
  imports the ns-3 bindings (``from ns import ns``, the ``ns3`` PyPI wheel: cppyy over the ns-3
  C++ libraries), builds the network, runs ``Simulator::Run()`` and prints one JSON line: the
  bindings' import time, set-up time, run time, ns-3's event count, per-flow bytes delivered to
  the application and goodput (and for TCP flows, counted by small C++ trace sinks compiled with
  the bindings: retransmitted segments, timeouts, fast recoveries), the bottleneck's drops, and
  memory (VmRSS/VmHWM from /proc).

How the ns-3 model matches fairstream (each point is a setting, not a correction afterwards):

- topology: the dumbbell of ``[topology]``, one point-to-point link per fairstream link with the
  same rate and propagation delay. ns-3's point-to-point device adds a 2-byte PPP header to each
  IP packet, so a 1500-byte IP packet takes 1502 bytes of link time (0.13 % more; ACKs 42 bytes
  instead of 40). This is left as it is and is why ns-3's goodput through a saturated link is
  about 0.13 % lower.
- queues: every device gets a drop-tail queue with the scenario's limit for that link (the
  access links' limit included, fairstream's default being 50 packets). The devices' flow
  control is off, so ``Ipv4AddressHelper::Assign`` installs no traffic-control queue disc
  (by default an FqCoDel in front of every device): the device queue is the only queue, and a
  packet that finds it full is dropped (and counted) there. Like fairstream's, it holds the
  packets waiting behind the one being transmitted.
- TCP: ``TcpNewReno`` with ``TcpClassicRecovery`` (RFC 6582 NewReno with window inflation, no
  proportional rate reduction), SACK and timestamps off (a 40-byte IP+TCP header, so a
  ``packet_size`` of 1500 B is a 1460-byte segment); or, for ``variant = "sack"`` (which must set
  ``prr = true``), SACK on and ``TcpPrrRecovery``; ``control = "cubic"`` is ``TcpCubic`` (C, β,
  fast convergence, no HyStart: ns-3's is Linux's HyStart, not HyStart++, so ``cubic.hystart``
  must be off), ``control = "bbr"`` is ``TcpBbr`` (paced); ``timestamps`` and ``pacing`` map to
  ns-3's options (Linux's pacing ratios, 200 % and 120 %, are ns-3's defaults too); one ACK per
  segment (``DelAckCount`` 1),
  limited transmit on, the scenario's initial window, minimum RTO and clock granularity (``tick``),
  the initial RTO as the RTT estimator's first estimate, the advertised window as the receive
  buffer and initial slow-start threshold, and a send buffer as large as that window. ns-3 does
  a real three-way handshake where fairstream emulates the SYN (ns-2 ``syn_``): both send the SYN
  at the flow's start and data one round trip later.
- UDP CBR: a ``UdpClient`` sending the flow's payload (its summary's ``payload_bytes``: a
  1500-byte packet less IP and UDP) every ``packet_size / rate`` from the flow's start, into a
  ``PacketSink``.
- flows start at exactly the ``start_s`` fairstream drew for them (taken from its summary).

Goodput is computed as fairstream computes it: application bytes delivered in order to the sink
(``PacketSink::GetTotalRx``) × 8 / (stop - start).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time

from . import _core
from .procstatus import status_kib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

#: Where the bindings come from, for the report.
BUILD_NOTE = "PyPI wheel (cppyy bindings), release build with logging/asserts, generic x86-64"

#: The extra that installs ns-3.
INSTALL_HINT = "pip install 'fairstream[ns3]'"

#: BulkSendApplication write size: a large write costs one Packet object per 64 KiB of send
#: buffer instead of one per 512 bytes (the default); TCP cuts segments of SegmentSize either way.
BULK_SEND_SIZE = 65536

#: Flow keys the ns-3 model reads (their values are passed on or checked below). A key not listed
#: here, such as a setting added to fairstream later, makes `spec_from_run` refuse the scenario
#: rather than compare two simulators that model different things.
_COMMON_KEYS = {"name", "protocol", "from", "to", "start", "stop", "count", "packet_size", "overhead", "atm"}
_TCP_KEYS = {
    "variant",
    "preset",
    "window",
    "max_cwnd",
    "initial_window",
    "initial_ssthresh",
    "min_rto",
    "max_rto",
    "initial_rto",
    "tick",
    "delayed_ack",
    "packets",
    "syn",
    "limited_transmit",
    "max_burst",
    "control",
    "timestamps",
    "pacing",
    "prr",
    "cubic",
}
_CBR_KEYS = {"rate", "on", "off", "random"}

#: The TCP settings of a fairstream flow the ns-3 model reproduces, with the only value it can
#: reproduce (the rest, initial window, RTOs, tick, window, are passed through). ``preset`` only
#: chooses defaults, which the resolved scenario spells out.
_TCP_FIXED = {
    "delayed_ack": False,
    "syn": True,
    "limited_transmit": True,
    "max_burst": 0,
}
#: ns-3 caps the RTO at 60 s (TcpSocketBase::ReTxTimeout), as fairstream's default does.
_NS3_MAX_RTO_S = 60.0
#: The loss recoveries and window controls ns-3 models, by fairstream name.
_NS3_RECOVERY = {"newreno": "ns3::TcpClassicRecovery", "sack": "ns3::TcpPrrRecovery"}
_NS3_CONTROL = {"aimd": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic", "bbr": "ns3::TcpBbr"}


def available() -> bool:
    """True when the ns-3 bindings are installed (checked without importing them: that takes seconds)."""
    try:
        return importlib.util.find_spec("ns3") is not None and importlib.util.find_spec("ns") is not None
    except (ImportError, ValueError):
        return False


def version() -> str | None:
    """The installed ``ns3`` distribution's version (e.g. ``3.44.post0``), or None."""
    from importlib import metadata

    try:
        return metadata.version("ns3")
    except metadata.PackageNotFoundError:
        return None


# --------------------------------------------------------------------------- spec (parent side)

#: The dumbbell's links the ns-3 model takes its parameters from, by role (the first host's access
#: links stand for every host's: the dumbbell gives every host the same).
_ROLES = {
    "left_access": "left0->router_left",
    "right_access": "router_right->right0",
    "bottleneck": "router_left->router_right",
}


def _seconds(text: Any) -> float:
    """Seconds of a duration the scenario writes with its unit ("35ms"), by the one parser."""
    return _core.parse_quantity(str(text), "duration") / 1e9


def queue_limit(link: dict[str, Any]) -> str:
    """An ns-3 QueueSize string ("99p", "64000B") for a link's drop-tail queue, from the run's link
    summary (``queue_kind``, ``queue_limit_packets`` / ``queue_limit_bytes``, ``droptail_counting``).

    ns-3's device queue counts the packets waiting, not the one on the wire, as fairstream's
    default (``preset = "pfifo"``) does; a packet limit of ``n`` under ``preset = "ns2"`` holds
    ``n - 1`` waiting, so ns-3 gets ``n - 1``.
    """
    if link.get("queue_kind") != "droptail":
        raise ValueError(f"the ns-3 model has drop-tail queues only, not {link.get('queue_kind')!r}")
    counting = link.get("droptail_counting")
    if counting not in ("pfifo", "ns2"):
        raise ValueError(f"no ns-3 equivalent of drop-tail counting {counting!r}")
    packets = link.get("queue_limit_packets")
    if packets is not None:
        return f"{int(packets) - 1 if counting == 'ns2' else int(packets)}p"
    if counting == "ns2":
        raise ValueError("the ns-3 model has no byte-limited drop-tail queue with ns-2 counting")
    return f"{int(link['queue_limit_bytes'])}B"


def spec_from_run(resolved_toml: str, summary: dict[str, Any]) -> dict[str, Any]:
    """The ns-3 spec of a finished fairstream run: its resolved scenario and its summary (``flows``,
    ``links`` and ``duration_s`` as in summary.json).

    Links, queues, packet sizes and the flows' start times are the numbers the run wrote in its
    summary; the resolved scenario says which settings each flow has (every default filled in),
    the few durations and rates it gives read with `_core.parse_quantity`.

    Raises ValueError for what the ns-3 model does not reproduce (a topology other than a
    dumbbell, lossy links, capacity schedules, queues other than drop-tail, TCP settings such as
    delayed ACKs or Reno).
    """
    from . import tomlio

    doc = tomlio.loads(resolved_toml)
    topo = doc.get("topology", {})
    if topo.get("kind") != "dumbbell":
        raise ValueError("the ns-3 model builds dumbbells only")
    if float(doc.get("engine", {}).get("perturb_delays", 0) or 0) != 0:
        raise ValueError("the ns-3 model has no perturbed link delays (engine.perturb_delays)")
    hosts = int(topo.get("hosts", 1))
    by_name = {link["name"]: link for link in summary["links"]}
    links = {}
    for role, name in _ROLES.items():
        link = by_name.get(name)
        if link is None:
            raise ValueError(f"the dumbbell has no link {name} ({role})")
        if link.get("loss_rate"):
            raise ValueError(f"the ns-3 model has no `loss` on links (topology.{role})")
        if link.get("schedule_t_ns"):
            raise ValueError(f"the ns-3 model has no `schedule` on links (topology.{role})")
        links[role] = {"rate_bps": link["rate_bps"], "delay_s": link["delay_s"], "queue": queue_limit(link)}
    templates = []
    for flow in doc.get("flow", []):
        templates.extend([flow] * int(flow.get("count", 1)))
    results = sorted(summary["flows"], key=lambda f: f["flow_id"])
    if len(templates) != len(results):
        raise ValueError(f"{len(templates)} flows in the scenario but {len(results)} in the summary")
    duration = float(summary["duration_s"])
    flows = [_flow_spec(t, r, hosts, duration) for t, r in zip(templates, results, strict=True)]
    return {
        "name": doc.get("name", summary.get("name")),
        "duration_s": duration,
        "hosts": hosts,
        "links": links,
        "flows": flows,
    }


def _host_index(name: str, side: str, hosts: int) -> int:
    match = re.fullmatch(rf"{side}([0-9]+)", name)
    if not match or int(match.group(1)) >= hosts:
        raise ValueError(f"the ns-3 model runs flows from left hosts to right hosts, not {name!r}")
    return int(match.group(1))


def _flow_spec(
    template: dict[str, Any], result: dict[str, Any], hosts: int, duration: float
) -> dict[str, Any]:
    protocol = template.get("protocol", "tcp")
    known = _COMMON_KEYS | {"tcp": _TCP_KEYS, "cbr": _CBR_KEYS}.get(protocol, set())
    unknown = sorted(set(template) - known)
    if unknown:
        raise ValueError(
            f"flow {result['name']}: the ns-3 model does not know flow key(s) {', '.join(unknown)}"
        )
    if _seconds(template["overhead"]) != 0:
        raise ValueError(f"flow {result['name']}: the ns-3 model has no host overhead")
    if template.get("atm", "none") != "none":
        raise ValueError(f"flow {result['name']}: the ns-3 model has no ATM (atm = {template['atm']!r})")
    out: dict[str, Any] = {
        "name": result["name"],
        "protocol": protocol,
        "src": _host_index(result["src"], "left", hosts),
        "dst": _host_index(result["dst"], "right", hosts),
        "start_s": float(result["start_s"]),
        "stop_s": float(result.get("stop_s") or duration),
        "packet_size": int(result["packet_size_bytes"]),
        "payload": int(result["payload_bytes"]),
    }
    if protocol == "cbr":
        if template.get("on") or template.get("off") or template.get("random"):
            raise ValueError(f"flow {result['name']}: the ns-3 model has constant-rate CBR only")
        out["rate_bps"] = _core.parse_quantity(str(template["rate"]), "rate")
        return out
    if protocol != "tcp":
        raise ValueError(f"flow {result['name']}: no ns-3 model of protocol {protocol!r}")
    for key, wanted in _TCP_FIXED.items():
        if template.get(key, wanted) != wanted:
            raise ValueError(
                f"flow {result['name']}: the ns-3 model needs {key} = {wanted!r}, the scenario has "
                f"{template.get(key)!r}"
            )
    variant, control = template["variant"], template["control"]
    if variant not in _NS3_RECOVERY:
        raise ValueError(f"flow {result['name']}: no ns-3 model of variant {variant!r}")
    if control not in _NS3_CONTROL:
        raise ValueError(f"flow {result['name']}: no ns-3 model of control {control!r}")
    if variant == "sack" and not template["prr"]:
        raise ValueError(
            f"flow {result['name']}: ns-3's SACK recovery is PRR (TcpClassicRecovery inflates the window "
            "besides counting the pipe): set prr = true"
        )
    cubic = template["cubic"] if control == "cubic" else None  # the resolved scenario has it then
    if cubic is not None and cubic["hystart"]:
        raise ValueError(
            f"flow {result['name']}: ns-3's TcpCubic has Linux's HyStart, not HyStart++: "
            "set cubic.hystart = false"
        )
    if template.get("packets") is not None or template.get("max_cwnd") is not None:
        raise ValueError(f"flow {result['name']}: the ns-3 model runs unlimited bulk flows without max_cwnd")
    if _seconds(template["max_rto"]) != _NS3_MAX_RTO_S:
        raise ValueError(f"flow {result['name']}: ns-3's maximum RTO is fixed at 60 s")
    out |= {
        "variant": variant,
        "control": control,
        "timestamps": bool(template["timestamps"]),
        "pacing": bool(template["pacing"]),
        "cubic": None
        if cubic is None
        else {
            "c": float(cubic["c"]),
            "beta": float(cubic["beta"]),
            "fast_convergence": bool(cubic["fast_convergence"]),
        },
        "initial_window": int(template["initial_window"]),
        "window": int(template["window"]),
        "initial_ssthresh": template.get("initial_ssthresh"),
        "min_rto_s": _seconds(template["min_rto"]),
        "initial_rto_s": _seconds(template["initial_rto"]),
        "tick_s": _seconds(template["tick"]),
    }
    return out


def settings(spec: dict[str, Any]) -> dict[str, Any]:
    """The ns-3 attributes a spec sets, for the report (one entry per distinct TCP setting)."""
    tcp = [f for f in spec["flows"] if f["protocol"] == "tcp"]
    out: dict[str, Any] = {
        "links": {
            role: f"{link['rate_bps'] / 1e6:g} Mbps, {link['delay_s'] * 1e3:g} ms, DropTail {link['queue']}"
            for role, link in spec["links"].items()
        },
        "traffic_control": "none (flow control off, no queue disc)",
    }
    if tcp:
        shapes = {_tcp_attributes_key(f) for f in tcp}
        if len(shapes) > 1:
            out["tcp"] = "per flow"
        else:
            out["tcp"] = dict(_tcp_attributes(tcp[0]))
    cbr = [f for f in spec["flows"] if f["protocol"] == "cbr"]
    if cbr:
        f = cbr[0]
        out["cbr"] = {
            "UdpClient::PacketSize": f["payload"],
            "UdpClient::Interval": f"{f['packet_size'] * 8 / f['rate_bps'] * 1e6:g}us",
        }
    return out


def _tcp_attributes(f: dict[str, Any]) -> list[tuple[str, Any]]:
    variant, control, timestamps = f["variant"], f["control"], f["timestamps"]
    mss = f["payload"]
    window_bytes = f["window"] * mss
    ssthresh = f["initial_ssthresh"]
    attrs: list[tuple[str, Any]] = [
        ("TcpL4Protocol::SocketType", _NS3_CONTROL[control]),
        ("TcpL4Protocol::RecoveryType", _NS3_RECOVERY[variant]),
        ("TcpSocket::SegmentSize", mss),
        ("TcpSocketBase::Sack", variant == "sack"),
        ("TcpSocketBase::Timestamp", timestamps),
        ("TcpSocketBase::LimitedTransmit", True),
        ("TcpSocket::DelAckCount", 1),
        ("TcpSocket::InitialCwnd", f["initial_window"]),
        ("TcpSocket::InitialSlowStartThreshold", window_bytes if ssthresh is None else int(ssthresh) * mss),
        ("TcpSocketBase::MinRto", f"{f['min_rto_s'] * 1e3:g}ms"),
        ("TcpSocketBase::ClockGranularity", f"{f['tick_s'] * 1e3:g}ms"),
        ("RttEstimator::InitialEstimation", f"{f['initial_rto_s'] * 1e3:g}ms"),
        ("TcpSocket::RcvBufSize", window_bytes),
        ("TcpSocket::SndBufSize", window_bytes),
        ("TcpSocketState::EnablePacing", f["pacing"]),
        ("BulkSendApplication::SendSize", BULK_SEND_SIZE),
    ]
    if f["cubic"] is not None:
        attrs += [
            ("TcpCubic::C", f["cubic"]["c"]),
            ("TcpCubic::Beta", f["cubic"]["beta"]),
            ("TcpCubic::FastConvergence", f["cubic"]["fast_convergence"]),
            ("TcpCubic::HyStart", False),
            ("TcpCubic::TcpFriendliness", True),
        ]
    return attrs


def _tcp_attributes_key(f: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(v for _, v in _tcp_attributes(f))


# --------------------------------------------------------------------------- the child


def _value(ns: Any, value: Any) -> Any:
    if isinstance(value, bool):
        return ns.BooleanValue(value)
    if isinstance(value, int):
        return ns.UintegerValue(value)
    if isinstance(value, float):
        return ns.DoubleValue(value)
    return ns.StringValue(str(value))


def simulate(spec: dict[str, Any]) -> dict[str, Any]:
    """Imports ns-3, builds `spec` and runs it; returns the report (see the module docstring)."""
    started = time.perf_counter()
    rss_before = status_kib("VmRSS")
    from ns import ns

    counters = _counters()  # compiled with the bindings, before the set-up is timed
    imported = time.perf_counter()
    rss_imported = status_kib("VmRSS")
    hwm_imported = status_kib("VmHWM")
    sinks, bottleneck = _build(ns, spec, counters)
    built = time.perf_counter()
    ns.Simulator.Stop(ns.Seconds(spec["duration_s"]))
    ns.Simulator.Run()
    ran = time.perf_counter()
    events = int(ns.Simulator.GetEventCount())
    flows = []
    for k, (f, sink) in enumerate(zip(spec["flows"], sinks, strict=True)):
        rx = int(sink.GetTotalRx())
        active = min(f["stop_s"], spec["duration_s"]) - f["start_s"]
        flow = {"name": f["name"], "goodput_bytes": rx, "goodput_bps": rx * 8 / active if active > 0 else 0.0}
        if f["protocol"] == "tcp":
            flow |= {
                "retransmits": int(counters.retransmits(k)),
                "timeouts": int(counters.timeouts(k)),
                "recoveries": int(counters.recoveries(k)),
            }
        flows.append(flow)
    queue = bottleneck.GetQueue()
    report = {
        "import_s": imported - started,
        "setup_s": built - imported,
        "run_s": ran - built,
        "wall_s": ran - imported,
        "events": events,
        "flows": flows,
        "bottleneck_drops": int(queue.GetTotalDroppedPackets()),
        "bottleneck_packets": int(queue.GetTotalReceivedPackets()),
        "rss_start_kib": rss_before,
        "rss_imported_kib": rss_imported,
        "hwm_imported_kib": hwm_imported,
        "rss_end_kib": status_kib("VmRSS"),
        "vmhwm_kib": status_kib("VmHWM"),
        "ns3_version": version(),
    }
    ns.Simulator.Destroy()
    return report


#: C++ trace sinks that count, per TCP flow, retransmitted segments (the socket's
#: ``Retransmission`` trace), timeouts (entries into CA_LOSS) and fast recoveries (entries into
#: CA_RECOVERY). A sink runs only on those events, a few thousand per run; counting them from
#: Python callbacks would cost a call into the interpreter each time.
_COUNTERS_CPP = r"""
#include <vector>
namespace fairstream_bench {
struct Counts { uint64_t retransmits = 0, timeouts = 0, recoveries = 0; };
std::vector<Counts> counts;
void OnState(uint32_t k, ns3::TcpSocketState::TcpCongState_t, ns3::TcpSocketState::TcpCongState_t now) {
    if (now == ns3::TcpSocketState::CA_LOSS) counts[k].timeouts++;
    if (now == ns3::TcpSocketState::CA_RECOVERY) counts[k].recoveries++;
}
void OnRetransmit(uint32_t k, ns3::Ptr<const ns3::Packet>, const ns3::TcpHeader&, const ns3::Address&,
                  const ns3::Address&, ns3::Ptr<const ns3::TcpSocketBase>) {
    counts[k].retransmits++;
}
void Hook(ns3::Ptr<ns3::Application> app, uint32_t k) {
    auto bulk = ns3::DynamicCast<ns3::BulkSendApplication>(app);
    auto socket = ns3::DynamicCast<ns3::TcpSocketBase>(bulk->GetSocket());
    socket->TraceConnectWithoutContext("CongState", ns3::MakeBoundCallback(&OnState, k));
    socket->TraceConnectWithoutContext("Retransmission", ns3::MakeBoundCallback(&OnRetransmit, k));
}
// The socket exists once the application has started: hook it 1 ns later.
void Arm(ns3::Ptr<ns3::Application> app, uint32_t k, int64_t start_ns) {
    if (counts.size() <= k) counts.resize(k + 1);
    ns3::Simulator::Schedule(ns3::NanoSeconds(start_ns + 1), &Hook, app, k);
}
uint64_t retransmits(uint32_t k) { return k < counts.size() ? counts[k].retransmits : 0; }
uint64_t timeouts(uint32_t k) { return k < counts.size() ? counts[k].timeouts : 0; }
uint64_t recoveries(uint32_t k) { return k < counts.size() ? counts[k].recoveries : 0; }
}
"""


def _counters() -> Any:
    import cppyy

    cppyy.cppdef(_COUNTERS_CPP)
    return cppyy.gbl.fairstream_bench


def _build(ns: Any, spec: dict[str, Any], counters: Any = None) -> tuple[list[Any], Any]:
    """Builds the dumbbell and its applications; returns the sinks (flow order) and the bottleneck device."""
    tcp = [f for f in spec["flows"] if f["protocol"] == "tcp"]
    if tcp:
        if len({_tcp_attributes_key(f) for f in tcp}) > 1:
            raise ValueError("the ns-3 model needs the same TCP settings for every flow")
        for name, value in _tcp_attributes(tcp[0]):
            if name in ("TcpL4Protocol::RecoveryType", "TcpL4Protocol::SocketType"):
                ns.Config.SetDefault(f"ns3::{name}", ns.TypeIdValue(ns.TypeId.LookupByName(value)))
            elif name.startswith("BulkSendApplication::"):
                continue  # set on the helper below
            else:
                ns.Config.SetDefault(f"ns3::{name}", _value(ns, value))

    hosts = spec["hosts"]
    routers = ns.NodeContainer()
    routers.Create(2)
    left = ns.NodeContainer()
    left.Create(hosts)
    right = ns.NodeContainer()
    right.Create(hosts)
    stack = ns.InternetStackHelper()
    stack.Install(routers)
    stack.Install(left)
    stack.Install(right)

    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.252"))

    def connect(a: Any, b: Any, link: dict[str, Any]) -> tuple[Any, Any]:
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(round(link["rate_bps"]))))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(round(link["delay_s"] * 1e9))))
        p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(link["queue"]))
        # No flow control: Assign then installs no queue disc, and a full device queue drops
        # (and counts) the packet itself.
        p2p.DisableFlowControl()
        devices = p2p.Install(a, b)
        interfaces = addresses.Assign(devices)
        addresses.NewNetwork()
        for k in range(devices.GetN()):
            device = devices.Get(k)
            layer = device.GetNode().GetObject[ns.TrafficControlLayer]()
            if layer and layer.GetRootQueueDiscOnDevice(device):
                raise RuntimeError("ns-3 installed a queue disc; the queue limits would not match")
        return devices, interfaces

    links = spec["links"]
    bottleneck, _ = connect(routers.Get(0), routers.Get(1), links["bottleneck"])
    right_addresses = []
    for i in range(hosts):
        connect(left.Get(i), routers.Get(0), links["left_access"])
    for i in range(hosts):
        _, interfaces = connect(routers.Get(1), right.Get(i), links["right_access"])
        right_addresses.append(interfaces.GetAddress(1))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    sinks = []
    for k, f in enumerate(spec["flows"]):
        port = 10000 + k
        factory = "ns3::TcpSocketFactory" if f["protocol"] == "tcp" else "ns3::UdpSocketFactory"
        local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        sink_apps = ns.PacketSinkHelper(factory, local).Install(right.Get(f["dst"]))
        sink_apps.Start(ns.Seconds(0.0))
        remote = ns.InetSocketAddress(right_addresses[f["dst"]], port).ConvertTo()
        if f["protocol"] == "tcp":
            helper = ns.BulkSendHelper(factory, remote)
            helper.SetAttribute("SendSize", ns.UintegerValue(BULK_SEND_SIZE))
            helper.SetAttribute("MaxBytes", ns.UintegerValue(0))
        else:
            helper = ns.UdpClientHelper(remote)
            helper.SetAttribute("MaxPackets", ns.UintegerValue(0))
            helper.SetAttribute("PacketSize", ns.UintegerValue(f["payload"]))
            interval_ns = round(f["packet_size"] * 8 / f["rate_bps"] * 1e9)
            helper.SetAttribute("Interval", ns.TimeValue(ns.NanoSeconds(interval_ns)))
        apps = helper.Install(left.Get(f["src"]))
        start_ns = round(f["start_s"] * 1e9)
        apps.Start(ns.NanoSeconds(start_ns))
        if counters is not None and f["protocol"] == "tcp":
            counters.Arm(apps.Get(0), k, start_ns)
        if f["stop_s"] < spec["duration_s"]:
            apps.Stop(ns.NanoSeconds(round(f["stop_s"] * 1e9)))
        sinks.append(ns.DynamicCast[ns.PacketSink](sink_apps.Get(0)))
    device = ns.DynamicCast[ns.PointToPointNetDevice](bottleneck.Get(0))
    return sinks, device


def main() -> int:
    """``python -m fairstream.bench_ns3``: a spec as JSON on stdin, the report as one JSON line on stdout."""
    spec = json.load(sys.stdin)
    report = simulate(spec)
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
