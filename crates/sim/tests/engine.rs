//! The engine's own properties, on networks built in Rust (the scenario reader's tests, in
//! `crates/scenario/tests`, check what a TOML file turns into): links are work-conserving FIFOs
//! (a packet never waits beside an idle transmitter), same-instant arrivals are ordered by the
//! tie rule in force, routes are found once when a flow is added and are the fewest hops each
//! way, and the recorder's series add up to its summaries.

use std::collections::HashMap;

use fairstream_core::{Bitrate, DataSize, Duration, Instant, NodeId, RateSchedule};
use fairstream_net::{LimitCounting, QueueConfig, QueueLimit};
use fairstream_proto::cbr::CbrConfig;
use fairstream_proto::tcp::TcpConfig;
use fairstream_proto::{ProtocolConfig, TcpFlowConfig};
use fairstream_records::{PacketEvent, RunOutput};
use fairstream_sim::{FlowSpec, FlowStart, LinkSpec, Network, NetworkError, Simulator, TieRule};

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

/// A CBR flow of 1000-byte packets at `rate`.
fn cbr(rate: Bitrate) -> ProtocolConfig {
    ProtocolConfig::Cbr(CbrConfig {
        rate: rate.into(),
        packet_size: DataSize::bytes(1000),
        ..CbrConfig::default()
    })
}

/// Two CBR sources `a` and `b` into router `r`, which forwards to `c` over the bottleneck
/// `r->c` (1 Mbit/s, 10 ms, `queue`); every other link is 10 Mbit/s. The packet trace is on.
struct FanIn {
    net: Network,
    nodes: [NodeId; 4],
}

impl FanIn {
    fn new(queue: QueueConfig, ties: TieRule) -> Self {
        Self::with_capacity(queue, ties, RateSchedule::constant(Bitrate::mbps(1)))
    }

    /// As [`FanIn::new`], the bottleneck's rate following `capacity`.
    fn with_capacity(queue: QueueConfig, ties: TieRule, capacity: RateSchedule) -> Self {
        let mut net = Network::new(Duration::from_secs(2), 1);
        let nodes = ["a", "b", "r", "c"].map(|n| net.add_node(n));
        let [a, b, r, c] = nodes;
        for (x, y) in [(a, r), (r, a), (b, r), (r, b)] {
            net.add_link(LinkSpec::new(x, y, Bitrate::mbps(10), ms(1)));
        }
        net.add_link(LinkSpec {
            queue,
            capacity,
            ..LinkSpec::new(r, c, Bitrate::mbps(1), ms(10))
        });
        net.add_link(LinkSpec::new(c, r, Bitrate::mbps(10), ms(10)));
        net.record.packets = true;
        net.engine.ties = ties;
        Self { net, nodes }
    }

    /// Adds a CBR flow from `a` (`from_b`: from `b`) to `c` at `rate`, starting at `start`.
    fn flow(mut self, from_b: bool, rate: Bitrate, start: Instant) -> Self {
        let [a, b, _, c] = self.nodes;
        let src = if from_b { b } else { a };
        let spec = FlowSpec {
            start: FlowStart::At(start),
            ..FlowSpec::new(if from_b { "b" } else { "a" }, src, c, cbr(rate))
        };
        self.net.add_flow(spec).expect("a route");
        self
    }

    fn run(self) -> RunOutput {
        Simulator::new(self.net).expect("a valid network").run()
    }
}

fn drop_tail(limit: u32) -> QueueConfig {
    QueueConfig::DropTail {
        limit: QueueLimit::Packets(limit),
        counting: LimitCounting::Waiting,
    }
}

/// `(t_ns, packet_id, size)` of every `event` at link `name`, in trace order.
fn events(out: &RunOutput, name: &str, event: PacketEvent) -> Vec<(u64, u64, u32)> {
    let link = out
        .link_names
        .iter()
        .position(|n| n == name)
        .expect("the link") as u32;
    let tr = out.packet_trace.as_ref().expect("packet trace on");
    (0..tr.t.len())
        .filter(|&i| tr.link_id[i] == link && tr.event[i] == event)
        .map(|i| (tr.t_ns[i], tr.packet_id[i], tr.size[i]))
        .collect()
}

/// Checks that every transmission on the constant-rate FIFO link `name` starts at
/// max(its arrival, the previous start + the previous serialisation time, rounded up to the
/// nanosecond); returns how many it checked.
fn assert_work_conserving(out: &RunOutput, name: &str, bps: u64) -> usize {
    let arrivals: HashMap<u64, u64> = events(out, name, PacketEvent::Enqueue)
        .into_iter()
        .map(|(t, id, _)| (id, t))
        .collect();
    let mut free_at = 0;
    let sent = events(out, name, PacketEvent::Transmit);
    for &(t, id, size) in &sent {
        let due = arrivals[&id].max(free_at);
        assert_eq!(
            t, due,
            "packet {id} on {name}: sent at {t} ns, due at {due} ns"
        );
        free_at = t + (u64::from(size) * 8 * 1_000_000_000).div_ceil(bps);
    }
    sent.len()
}

#[test]
fn same_instant_arrivals_leave_back_to_back_under_either_tie_rule() {
    for ties in [TieRule::Random, TieRule::Fifo] {
        let out = FanIn::new(drop_tail(100), ties)
            .flow(false, Bitrate::kbps(80), Instant::ZERO)
            .flow(true, Bitrate::kbps(80), Instant::ZERO)
            .run();
        let sent = events(&out, "r->c", PacketEvent::Transmit);
        assert!(sent.len() >= 38, "{ties:?}: {} packets", sent.len());
        for pair in sent.chunks(2) {
            assert_eq!(pair[1].0, pair[0].0 + 8_000_000, "{ties:?}: {pair:?}");
        }
        assert_eq!(assert_work_conserving(&out, "r->c", 1_000_000), sent.len());
    }
}

#[test]
fn a_packet_that_arrives_mid_transmission_leaves_when_it_ends() {
    // One packet from each source; b's reaches r 4 ms into a's 8 ms transmission.
    let out = FanIn::new(drop_tail(100), TieRule::Random)
        .flow(false, Bitrate::kbps(1), Instant::ZERO)
        .flow(true, Bitrate::kbps(1), Instant::ZERO + ms(4))
        .run();
    let sent = events(&out, "r->c", PacketEvent::Transmit);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1].0, sent[0].0 + 8_000_000);
    assert_eq!(out.flows[1].packets_delivered, 1);
}

#[test]
fn random_ties_share_the_drops_that_fifo_ties_give_to_one_flow() {
    // Both sources send in lock-step, so their packets reach r in the same nanosecond, and the
    // bottleneck carries half of what arrives.
    let delivered = |ties| {
        let out = FanIn::new(drop_tail(2), ties)
            .flow(false, Bitrate::mbps(1), Instant::ZERO)
            .flow(true, Bitrate::mbps(1), Instant::ZERO)
            .run();
        assert_work_conserving(&out, "r->c", 1_000_000);
        (
            out.flows[0].packets_delivered as f64,
            out.flows[1].packets_delivered as f64,
        )
    };
    let (a, b) = delivered(TieRule::Random);
    assert!((0.8..1.25).contains(&(a / b)), "random ties: {a} vs {b}");
    let (a, b) = delivered(TieRule::Fifo);
    assert!(a / b > 1.5 || b / a > 1.5, "fifo ties: {a} vs {b}");
}

#[test]
fn one_tcp_on_a_fat_long_link_is_never_held_back() {
    // 1 Gb/s, 100 ms each way: a data packet was once sent one RTT late here.
    let mut net = Network::new(Duration::from_secs(3), 1);
    let [a, b] = ["n0", "n1"].map(|n| net.add_node(n));
    for (x, y) in [(a, b), (b, a)] {
        net.add_link(LinkSpec {
            queue: drop_tail(1000),
            ..LinkSpec::new(x, y, Bitrate::gbps(1), ms(100))
        });
    }
    let tcp = TcpFlowConfig {
        sender: TcpConfig {
            window: 1000,
            ..TcpConfig::default()
        },
        ..TcpFlowConfig::default()
    };
    net.add_flow(FlowSpec::new("tcp", a, b, ProtocolConfig::Tcp(tcp)))
        .unwrap();
    net.record.packets = true;
    let out = Simulator::new(net).unwrap().run();
    let checked = assert_work_conserving(&out, "n0->n1", 1_000_000_000);
    assert!(checked > 1000, "{checked}");
    assert_work_conserving(&out, "n1->n0", 1_000_000_000);
}

#[test]
fn a_capacity_pause_holds_packets_until_the_rate_returns() {
    let pause = RateSchedule::new(
        Bitrate::mbps(1),
        vec![
            (Instant::ZERO + ms(500), Bitrate::ZERO),
            (Instant::ZERO + ms(800), Bitrate::mbps(1)),
        ],
    );
    let out = FanIn::with_capacity(drop_tail(1000), TieRule::Random, pause)
        .flow(false, Bitrate::kbps(400), Instant::ZERO)
        .flow(true, Bitrate::kbps(400), Instant::ZERO)
        .run();
    let sent = events(&out, "r->c", PacketEvent::Transmit);
    // Nothing starts during the pause; the backlog starts the instant it ends, back to back.
    assert!(
        !sent
            .iter()
            .any(|&(t, _, _)| (500_000_000..800_000_000).contains(&t))
    );
    let resumed: Vec<u64> = sent
        .iter()
        .map(|&(t, _, _)| t)
        .filter(|&t| t >= 800_000_000)
        .take(5)
        .collect();
    assert_eq!(resumed[0], 800_000_000);
    for w in resumed.windows(2) {
        assert_eq!(w[1] - w[0], 8_000_000);
    }
}

/// A ring `n0 -> n1 -> n2 -> n3 -> n0` and a chord `n0 -> n2`, all one-way, plus `island`.
fn ring() -> (Network, Vec<NodeId>) {
    let mut net = Network::new(Duration::from_secs(1), 1);
    let n: Vec<NodeId> = ["n0", "n1", "n2", "n3", "island"]
        .iter()
        .map(|name| net.add_node(*name))
        .collect();
    for (x, y) in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)] {
        net.add_link(LinkSpec::new(n[x], n[y], Bitrate::mbps(10), ms(1)));
    }
    (net, n)
}

#[test]
fn a_route_is_found_once_when_the_flow_is_added_with_the_fewest_hops_each_way() {
    let (mut net, n) = ring();
    let tcp = ProtocolConfig::Tcp(TcpFlowConfig::default());
    net.add_flow(FlowSpec::new("tcp", n[0], n[3], tcp)).unwrap();
    net.add_flow(FlowSpec::new("cbr", n[1], n[0], cbr(Bitrate::kbps(100))))
        .unwrap();
    let names = |links: &[fairstream_core::LinkId]| -> Vec<String> {
        links.iter().map(|&l| net.link_name(l)).collect()
    };
    let routes = net.routes();
    // n0 -> n3 takes the chord (2 hops, not 3); its ACKs come straight back.
    assert_eq!(names(&routes[0].forward), ["n0->n2", "n2->n3"]);
    assert_eq!(names(&routes[0].back), ["n3->n0"]);
    // CBR's receiver answers nothing: no way back is needed, or looked for.
    assert_eq!(names(&routes[1].forward), ["n1->n2", "n2->n3", "n3->n0"]);
    assert!(routes[1].back.is_empty());
    // The simulator walks the routes the network holds: the TCP flow's packets cross the
    // chord, and nothing crosses n0->n1.
    let out = Simulator::new(net).unwrap().run();
    let forwarded = |name: &str| {
        let i = out.link_names.iter().position(|n| n == name).unwrap();
        out.links[i].packets_forwarded
    };
    assert!(forwarded("n0->n2") > 0 && forwarded("n3->n0") > 0);
    assert_eq!(forwarded("n0->n1"), 0);
}

#[test]
fn a_flow_the_network_cannot_route_is_refused_with_its_nodes_named() {
    let (mut net, n) = ring();
    let to_island = net.add_flow(FlowSpec::new("lost", n[0], n[4], cbr(Bitrate::kbps(1))));
    assert_eq!(
        to_island,
        Err(NetworkError::NoRoute {
            flow: "lost".into(),
            from: "n0".into(),
            to: "island".into(),
        })
    );
    let same = net.add_flow(FlowSpec::new("loop", n[2], n[2], cbr(Bitrate::kbps(1))));
    assert!(
        matches!(same, Err(NetworkError::SameNode { .. })),
        "{same:?}"
    );
    // Neither was added; a flow added after them gets id 0.
    assert!(net.flows().is_empty() && net.routes().is_empty());
    let id = net
        .add_flow(FlowSpec::new("ok", n[0], n[1], cbr(Bitrate::kbps(1))))
        .unwrap();
    assert_eq!(id.0, 0);
}

#[test]
fn the_series_add_up_to_the_summaries() {
    // Starts off the 11.43 ms packet grid of the run's end (the next test sends at that
    // instant).
    let mut fan = FanIn::new(drop_tail(5), TieRule::Random)
        .flow(false, Bitrate::kbps(700), Instant::ZERO + ms(1))
        .flow(true, Bitrate::kbps(700), Instant::ZERO + ms(300));
    fan.net.record.interval = ms(250);
    fan.net.record.packets = false;
    let out = fan.run();
    // 2 s in 250 ms bins: 8 rows per flow and per link, in bin order.
    let flows = out.flows.len();
    assert_eq!(out.flow_series.flow_id.len(), 8 * flows);
    assert_eq!(out.link_series.link_id.len(), 8 * out.links.len());
    for (i, f) in out.flows.iter().enumerate() {
        let rows =
            (0..out.flow_series.flow_id.len()).filter(|&r| out.flow_series.flow_id[r] == i as u32);
        let sum = |col: &Vec<u64>| rows.clone().map(|r| col[r]).sum::<u64>();
        assert_eq!(sum(&out.flow_series.packets_sent), f.packets_sent);
        assert_eq!(sum(&out.flow_series.bytes_delivered), f.bytes_delivered);
        assert_eq!(sum(&out.flow_series.packets_dropped), f.packets_dropped);
    }
    for (i, l) in out.links.iter().enumerate() {
        let rows =
            (0..out.link_series.link_id.len()).filter(|&r| out.link_series.link_id[r] == i as u32);
        let sum = |col: &Vec<u64>| rows.clone().map(|r| col[r]).sum::<u64>();
        assert_eq!(sum(&out.link_series.packets_forwarded), l.packets_forwarded);
        assert_eq!(sum(&out.link_series.bytes_forwarded), l.bytes_forwarded);
    }
    // The bottleneck drops what 1.4 Mbit/s of arrivals leaves over 1 Mbit/s, and its flows'
    // rates are per second of their active time: b's from its start at 300 ms.
    let bottleneck = &out.links[out.link_names.iter().position(|n| n == "r->c").unwrap()];
    assert!(bottleneck.packets_dropped > 0);
    assert!(
        (bottleneck.utilisation - 1.0).abs() < 0.2,
        "{}",
        bottleneck.utilisation
    );
    let b = &out.flows[1];
    let active = 2.0 - 0.3;
    assert_eq!(b.start_s, 0.3);
    assert!((b.throughput_bps - b.bytes_delivered as f64 * 8.0 / active).abs() < 1e-6);
}

/// Sums `col` over the rows of `ids` equal to `id`.
fn column_sum(ids: &[u32], id: usize, col: &[u64]) -> u64 {
    ids.iter()
        .zip(col)
        .filter(|&(&i, _)| i == id as u32)
        .map(|(_, &v)| v)
        .sum()
}

#[test]
fn a_packet_sent_at_the_runs_very_end_is_in_its_last_bin() {
    // 800 kbit/s of 1000-byte packets from time 0: one every 10 ms, the last sent at 2 s, the
    // run's end, after the last bin's close in the order of same-instant events.
    let mut fan =
        FanIn::new(drop_tail(50), TieRule::Fifo).flow(false, Bitrate::kbps(800), Instant::ZERO);
    fan.net.record.interval = ms(250);
    fan.net.record.packets = false;
    let out = fan.run();
    assert_eq!(out.flows[0].packets_sent, 201, "0, 10 ms, ..., 2 s");
    for (i, f) in out.flows.iter().enumerate() {
        let ids = &out.flow_series.flow_id;
        assert_eq!(
            column_sum(ids, i, &out.flow_series.packets_sent),
            f.packets_sent
        );
        assert_eq!(
            column_sum(ids, i, &out.flow_series.packets_delivered),
            f.packets_delivered
        );
    }
    for (i, l) in out.links.iter().enumerate() {
        let ids = &out.link_series.link_id;
        assert_eq!(
            column_sum(ids, i, &out.link_series.packets_forwarded),
            l.packets_forwarded,
            "{}",
            out.link_names[i]
        );
    }
}
