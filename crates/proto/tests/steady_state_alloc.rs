//! The protocol code allocates nothing per packet in steady state: a counting global allocator
//! (`stats_alloc`)
//! watches every protocol's two ends, joined by a lossy bottleneck with a fixed delay, after a
//! warm-up that lets rings and queues reach their working size.

use std::alloc::System;
use std::collections::VecDeque;

use fairstream_core::{Bitrate, Duration, FlowId, Instant, RngStream};
use fairstream_proto::multfrc::MultfrcConfig;
use fairstream_proto::tfrc::TfrcFlowConfig;
use fairstream_proto::{
    AnyEndpoint, Direction, Endpoint, FlowCtx, NullSink, Packet, ProtocolConfig, TcpFlowConfig,
};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// A sender and a receiver joined by a 10 Mbit/s, 36 ms bottleneck (drop-tail 100 packets,
/// Bernoulli loss) and a 36 ms return path; every queue is allocated up front.
struct Path {
    sender: AnyEndpoint,
    receiver: AnyEndpoint,
    forward: VecDeque<(Instant, Packet)>,
    reverse: VecDeque<(Instant, Packet)>,
    busy_until: Instant,
    rng: RngStream,
    now: Instant,
    packets: u64,
}

const RATE: Bitrate = Bitrate::mbps(10);
const DELAY: Duration = Duration::from_millis(36);
const LIMIT: usize = 100;
const LOSS: f64 = 0.01;

impl Path {
    fn new(protocol: &ProtocolConfig) -> Self {
        let (sender, receiver) = protocol.endpoints(&FlowCtx::at_zero(FlowId(0), 7));
        Self {
            sender,
            receiver,
            forward: VecDeque::with_capacity(4 * LIMIT),
            reverse: VecDeque::with_capacity(1 << 16),
            busy_until: Instant::ZERO,
            rng: RngStream::from_seed(11),
            now: Instant::ZERO,
            packets: 0,
        }
    }

    fn drain(&mut self) {
        let now = self.now;
        while let Some(p) = self.sender.poll_transmit(now) {
            let queued = self.busy_until.saturating_since(now).as_nanos()
                / RATE.transmit_time(p.size).as_nanos().max(1);
            if queued as usize >= LIMIT || self.rng.bernoulli(LOSS) {
                continue;
            }
            let start = self.busy_until.max(now);
            self.busy_until = start + RATE.transmit_time(p.size);
            self.forward.push_back((self.busy_until + DELAY, p));
            self.packets += 1;
        }
        while let Some(p) = self.receiver.poll_transmit(now) {
            self.reverse.push_back((now + DELAY, p));
        }
    }

    /// Runs until `until`, event by event.
    fn run(&mut self, until: Instant) {
        loop {
            self.drain();
            let next = [
                self.sender.poll_timeout(),
                self.receiver.poll_timeout(),
                self.forward.front().map(|x| x.0),
                self.reverse.front().map(|x| x.0),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next.filter(|&t| t <= until) else {
                self.now = until;
                return;
            };
            self.now = next.max(self.now);
            let now = self.now;
            while self.forward.front().is_some_and(|x| x.0 <= now) {
                let (_, p) = self.forward.pop_front().expect("checked");
                debug_assert_eq!(p.direction, Direction::Forward);
                self.receiver.handle_packet(now, &p, &mut NullSink);
            }
            while self.reverse.front().is_some_and(|x| x.0 <= now) {
                let (_, p) = self.reverse.pop_front().expect("checked");
                self.sender.handle_packet(now, &p, &mut NullSink);
            }
            self.sender.handle_timeout(now, &mut NullSink);
            self.receiver.handle_timeout(now, &mut NullSink);
        }
    }
}

/// After a 60 s warm-up, the fewest allocations counted in one of three 20 s stretches, and the
/// packets sent in all three. The counter is the whole process's: the test harness's own thread
/// may allocate now and then while it waits (seen under load); a protocol that allocates per
/// packet does so in every stretch, thousands of times.
fn allocations_in_steady_state(protocol: ProtocolConfig) -> (u64, u64) {
    let mut path = Path::new(&protocol);
    path.run(Instant::from_nanos(60_000_000_000));
    let before = path.packets;
    let fewest = (1..=3u64)
        .map(|k| {
            let region = Region::new(GLOBAL);
            path.run(Instant::from_nanos((60 + 20 * k) * 1_000_000_000));
            let stats = region.change();
            (stats.allocations + stats.reallocations) as u64
        })
        .min()
        .unwrap_or(u64::MAX);
    (fewest, path.packets - before)
}

/// A streamer over `transport` whose levels straddle the path's rate.
fn streamer(transport: fairstream_proto::surestream::Transport) -> ProtocolConfig {
    use fairstream_proto::surestream::SurestreamConfig;
    let rates = [1, 3, 6, 9, 12].map(Bitrate::mbps);
    ProtocolConfig::Surestream(SurestreamConfig {
        transport,
        encoding: std::sync::Arc::new(SurestreamConfig::synthetic_encoding(&rates, 30.0).unwrap()),
        clip_length: Duration::from_secs(300),
        ..Default::default()
    })
}

/// A TCP flow with `sender`, its receiver matching it (delayed ACKs of 40 ms when `delack`).
fn tcp(sender: fairstream_proto::tcp::TcpConfig, delack: bool) -> ProtocolConfig {
    let delayed = delack.then_some(Duration::from_millis(40));
    ProtocolConfig::Tcp(TcpFlowConfig {
        sender,
        sink: fairstream_proto::tcp::TcpSinkConfig::for_sender(&sender, delayed),
    })
}

/// `inner` on ABR virtual circuits with their default parameters (PCR 10 Mbit/s).
fn abr(inner: ProtocolConfig) -> ProtocolConfig {
    use fairstream_proto::abr::{AbrFlowConfig, AbrParams};
    ProtocolConfig::Abr(AbrFlowConfig::new(inner, AbrParams::default()))
}

/// One test for all protocols: the counter is global, so they must not run concurrently.
#[test]
fn no_protocol_allocates_per_packet_in_steady_state() {
    let protocols = [
        ProtocolConfig::Tcp(TcpFlowConfig {
            sender: fairstream_proto::tcp::TcpConfig {
                window: 1000,
                ..Default::default()
            },
            ..Default::default()
        }),
        // Today's TCP: the linux preset (SACK with PRR, CUBIC with HyStart++, timestamps,
        // delayed ACKs), BBR (pacing, rate samples), and CUBIC on NewReno paced.
        tcp(fairstream_proto::tcp::TcpConfig::default().linux(), true),
        tcp(
            fairstream_proto::tcp::TcpConfig {
                variant: fairstream_proto::tcp::TcpVariant::Sack,
                control: fairstream_proto::tcp::Control::Bbr(Default::default()),
                window: 1000,
                ..Default::default()
            },
            false,
        ),
        tcp(
            fairstream_proto::tcp::TcpConfig {
                control: fairstream_proto::tcp::Control::Cubic(Default::default()),
                pacing: true,
                window: 1000,
                ..Default::default()
            },
            false,
        ),
        ProtocolConfig::Tfrc(TfrcFlowConfig::default()),
        ProtocolConfig::Tfrc(TfrcFlowConfig::preset(
            fairstream_proto::tfrc::TfrcPreset::Ns2,
        )),
        ProtocolConfig::TfrcWireless(fairstream_proto::tfrc::TfrcWirelessConfig::default()),
        ProtocolConfig::Vtp(fairstream_proto::vtp::VtpConfig::default()),
        ProtocolConfig::Multfrc(MultfrcConfig {
            // n stays put (a connection opening allocates its receiver's queue of holes).
            initial: 3.0,
            max_connections: 3,
            ..Default::default()
        }),
        // The media-scaling applications at rates that fill the path's 10 Mbit/s, so that the
        // scale moves (and with MM_APP's dither drawn per packet).
        ProtocolConfig::MmApp(fairstream_proto::media_scaling::MmAppConfig {
            rates: [1, 3, 5, 8, 12].map(Bitrate::mbps),
            random: true,
            ..Default::default()
        }),
        ProtocolConfig::MpegApp(fairstream_proto::media_scaling::MpegAppConfig {
            trace: fairstream_proto::media_scaling::MpegTrace::Synthetic {
                gop: fairstream_media::SyntheticGop {
                    // 300 frame/s with size noise: about 10 Mbit/s at scale 4.
                    frame_rate: 300.0,
                    size_noise: 0.3,
                    ..Default::default()
                },
                gops: 20,
            },
            ..Default::default()
        }),
        // The streamer with levels around the path's 10 Mbit/s, so that the level moves, for a
        // clip longer than the test.
        streamer(fairstream_proto::surestream::Transport::Udp),
        streamer(fairstream_proto::surestream::Transport::Tcp),
        // CBR carried on ABR virtual circuits: cells, RM cells, reassembly (1 % of cells lost
        // loses about a quarter of the packets), the source buffer's discards. (TCP on ABR runs
        // the same VC code; through this path's cell loss it sends too little to measure.)
        abr(ProtocolConfig::Cbr(fairstream_proto::cbr::CbrConfig {
            rate: Bitrate::mbps(5).into(),
            packet_size: fairstream_core::DataSize::bytes(1500),
            ..Default::default()
        })),
    ];
    for protocol in protocols {
        let name = protocol.name();
        let (allocations, packets) = allocations_in_steady_state(protocol);
        assert!(packets > 5_000, "{name}: only {packets} packets in 60 s");
        assert_eq!(
            allocations, 0,
            "{name}: {allocations} allocations over {packets} packets"
        );
    }
}
