use fairstream_core::{Bitrate, Duration, FlowId, Instant};
use fairstream_media::FrameType;
use proptest::prelude::*;

use super::*;
use crate::closed_loop::{Channel, run};
use crate::media_scaling::{MediaData, MediaFeedback};
use crate::multfrc::MultfrcConfig;
use crate::surestream::StreamReport;
use crate::tfrc::{LossRate, TfrcData, TfrcFeedback};
use crate::vtp::VtpConfig;
use crate::vtp::{VtpData, VtpFeedback};
use crate::{Endpoint, IP_UDP_HEADER, NullSink, Packet, ProtocolConfig};

fn round_trip(h: Header, payload: u32) -> Header {
    let mut buf = [0u8; 2048];
    let n = encode(0xdead_beef, &h, payload, &mut buf).expect("encodes");
    assert_eq!(n, encoded_len(&h, payload).unwrap());
    let f = decode(&buf[..n]).expect("decodes");
    assert_eq!(
        (f.conn_id, f.payload_len()),
        (0xdead_beef, payload as usize)
    );
    match f.body {
        Body::Packet(h) => h,
        Body::Handshake(h) => panic!("a packet decoded as {h:?}"),
    }
}

fn us() -> impl Strategy<Value = u64> {
    0..=u64::from(u32::MAX)
}
fn instant() -> impl Strategy<Value = Instant> {
    us().prop_map(|u| Instant::from_nanos(u * 1_000))
}
fn duration() -> impl Strategy<Value = Duration> {
    us().prop_map(Duration::from_micros)
}
fn rate() -> impl Strategy<Value = Bitrate> {
    us().prop_map(|b| Bitrate::bps(b * 8))
}
fn seq() -> impl Strategy<Value = u64> {
    0..=u64::from(u32::MAX)
}

fn header() -> impl Strategy<Value = Header> {
    let tfrc_data = (any::<u8>(), seq(), instant(), duration(), 0..256u32).prop_map(
        |(conn, seq, timestamp, rtt, round)| {
            Header::TfrcData(TfrcData {
                conn,
                seq,
                timestamp,
                rtt,
                round,
            })
        },
    );
    let tfrc_fb = (any::<u8>(), instant(), duration(), rate(), any::<u32>()).prop_map(
        |(conn, t_recvdata, t_delay, x_recv, p)| {
            Header::TfrcFeedback(TfrcFeedback {
                conn,
                t_recvdata,
                t_delay,
                x_recv,
                p: LossRate::from_raw(p),
            })
        },
    );
    let vtp_data = (seq(), instant(), duration()).prop_map(|(seq, timestamp, rtt)| {
        Header::VtpData(VtpData {
            seq,
            timestamp,
            rtt,
        })
    });
    let vtp_fb = (
        instant(),
        duration(),
        rate(),
        seq(),
        any::<u16>(),
        any::<u16>(),
    )
        .prop_map(|(t_echo, t_delay, achieved_rate, highest_seq, l, r)| {
            Header::VtpFeedback(VtpFeedback {
                t_echo,
                t_delay,
                achieved_rate,
                highest_seq,
                lost: u32::from(l),
                received: u32::from(r),
            })
        });
    let kind = prop_oneof![
        Just(None),
        Just(Some(FrameType::I)),
        Just(Some(FrameType::P)),
        Just(Some(FrameType::B))
    ];
    let media = (
        (seq(), instant(), duration(), seq()),
        (1..=u16::MAX, any::<u16>(), any::<u8>(), kind),
    )
        .prop_map(
            |((seq, timestamp, rtt, frame), (fragments, f, scale, kind))| {
                Header::MediaData(MediaData {
                    seq,
                    timestamp,
                    rtt,
                    frame,
                    fragment: f % fragments,
                    fragments,
                    scale,
                    kind,
                })
            },
        );
    let media_fb = (any::<u8>(), any::<u32>(), instant(), duration(), seq()).prop_map(
        |(scale, number, t_echo, t_delay, highest_seq)| {
            Header::MediaFeedback(MediaFeedback {
                scale,
                number,
                t_echo,
                t_delay,
                highest_seq,
            })
        },
    );
    let stream_report = (
        (any::<u32>(), instant(), duration(), seq()),
        (any::<u16>(), any::<u16>(), rate(), duration()),
    )
        .prop_map(
            |((number, t_echo, t_delay, highest_seq), (received, lost, receive_rate, buffered))| {
                Header::StreamReport(StreamReport {
                    number,
                    t_echo,
                    t_delay,
                    highest_seq,
                    received: u32::from(received),
                    lost: u32::from(lost),
                    receive_rate,
                    buffered,
                })
            },
        );
    prop_oneof![
        tfrc_data,
        tfrc_fb,
        vtp_data,
        vtp_fb,
        media,
        media_fb,
        stream_report
    ]
}

proptest! {
    #[test]
    fn every_header_round_trips(h in header(), payload in 0..1500u32) {
        let payload = if packet_type(&h).unwrap().carries_payload() { payload } else { 0 };
        prop_assert_eq!(round_trip(h, payload), h);
    }

    #[test]
    fn decode_never_panics_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode(&bytes);
    }

    #[test]
    fn every_prefix_of_a_datagram_is_short(h in header()) {
        let mut buf = [0u8; 64];
        let n = encode(1, &h, 0, &mut buf).unwrap();
        for cut in 0..n {
            prop_assert!(matches!(decode(&buf[..cut]), Err(WireError::Short { .. })), "cut {}", cut);
        }
    }
}

#[test]
fn typed_errors_name_what_is_wrong() {
    let h = Header::VtpFeedback(VtpFeedback {
        t_echo: Instant::ZERO,
        t_delay: Duration::ZERO,
        achieved_rate: Bitrate::ZERO,
        highest_seq: 0,
        lost: 0,
        received: 0,
    });
    let mut buf = [0u8; 64];
    let n = encode(7, &h, 0, &mut buf).unwrap();
    assert_eq!(n, FRAME_HEADER_LEN + 20 + ECHO_LEN);
    let mut bad = buf;
    bad[0] = b'X';
    assert_eq!(decode(&bad[..n]), Err(WireError::BadMagic(0x5853)));
    let mut bad = buf;
    bad[2] = 2;
    assert_eq!(decode(&bad[..n]), Err(WireError::UnknownVersion(2)));
    let mut bad = buf;
    bad[3] = 99;
    assert_eq!(decode(&bad[..n]), Err(WireError::UnknownType(99)));
    assert_eq!(
        decode(&buf[..n + 1]),
        Err(WireError::BadLength {
            expected: n,
            got: n + 1
        })
    );
    assert_eq!(
        decode(&buf[..5]),
        Err(WireError::Short { needed: 8, got: 5 })
    );
    let big = Header::VtpFeedback(VtpFeedback {
        lost: 70_000,
        ..match h {
            Header::VtpFeedback(f) => f,
            _ => unreachable!(),
        }
    });
    assert_eq!(
        encode(7, &big, 0, &mut buf),
        Err(WireError::FieldOutOfRange("lost"))
    );
    assert_eq!(
        encode(7, &h, 0, &mut buf[..10]),
        Err(WireError::Short { needed: n, got: 10 })
    );
    assert_eq!(
        encoded_len(&h, 1),
        Err(WireError::FieldOutOfRange("payload"))
    );
    // A feedback report ends with an echo, and nothing else.
    let echo = Echo {
        from_seq: 30,
        highest_seq: 41,
        nonce_sum: 0xfeed,
    };
    echo.write(&mut buf[n - ECHO_LEN..n]).unwrap();
    let f = decode(&buf[..n]).unwrap();
    assert_eq!((Echo::read(f.trailer), f.payload_len()), (Some(echo), 0));
    for cut in [n - 1, n - ECHO_LEN] {
        assert_eq!(
            decode(&buf[..cut]),
            Err(WireError::Short {
                needed: n,
                got: cut
            })
        );
    }
    // A media packet whose fragment is not below its fragment count means nothing.
    let m = Header::MediaData(MediaData {
        seq: 0,
        timestamp: Instant::ZERO,
        rtt: Duration::ZERO,
        frame: 0,
        fragment: 0,
        fragments: 1,
        scale: 0,
        kind: Some(FrameType::I),
    });
    let n = encode(7, &m, 0, &mut buf).unwrap();
    buf[FRAME_HEADER_LEN + 16..FRAME_HEADER_LEN + 18].copy_from_slice(&1u16.to_be_bytes());
    assert_eq!(
        decode(&buf[..n]),
        Err(WireError::FieldOutOfRange("fragment"))
    );
    buf[FRAME_HEADER_LEN + 16..FRAME_HEADER_LEN + 18].copy_from_slice(&0u16.to_be_bytes());
    buf[FRAME_HEADER_LEN + 21] = 4;
    assert_eq!(
        decode(&buf[..n]),
        Err(WireError::FieldOutOfRange("frame type"))
    );
}

/// A channel that sends every packet through the wire format: it checks the datagram against
/// the size the simulator charges and delivers what the decoder read, 10 ms later. It counts
/// datagrams per packet type.
#[derive(Default)]
struct WireChannel {
    seen: std::collections::HashMap<u8, u64>,
}

impl WireChannel {
    fn carry(&mut self, now: Instant, p: Packet) -> (Instant, Packet) {
        let mut buf = [0u8; 2048];
        let n = encode(42, &p.header, p.payload, &mut buf).expect("every packet encodes");
        // The simulator charges the datagram and the IPv4 and UDP headers, nothing else.
        assert_eq!(
            n as u64 + IP_UDP_HEADER,
            p.size.as_bytes(),
            "{:?}",
            p.header
        );
        let f = decode(&buf[..n]).expect("decodes");
        assert_eq!(f.payload_len(), p.payload as usize);
        *self.seen.entry(buf[3]).or_default() += 1;
        let arrive = now + Duration::from_millis(10);
        (
            arrive,
            Packet {
                header: match f.body {
                    Body::Packet(h) => h,
                    Body::Handshake(h) => panic!("{h:?}"),
                },
                ..p
            },
        )
    }
}

impl Channel for WireChannel {
    fn forward(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        let (at, p) = self.carry(now, p);
        out.push((at, p, true));
    }
    fn reverse(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        let (at, p) = self.carry(now, p);
        out.push((at, p, false));
    }
}

#[test]
fn every_protocol_runs_over_the_wire_format_at_the_size_it_is_charged() {
    let protocols = [
        ProtocolConfig::Tfrc(Default::default()),
        ProtocolConfig::TfrcWireless(Default::default()),
        ProtocolConfig::Multfrc(MultfrcConfig::default()),
        ProtocolConfig::Vtp(VtpConfig::default()),
        ProtocolConfig::MmApp(Default::default()),
        ProtocolConfig::MpegApp(Default::default()),
        ProtocolConfig::Rap(<crate::rap::RapConfig as crate::RealTime>::real_time(None)),
        ProtocolConfig::Surestream(crate::surestream::SurestreamConfig {
            report_interval: Duration::from_millis(100),
            ..Default::default()
        }),
    ];
    let mut types = std::collections::HashMap::<u8, u64>::new();
    for config in protocols {
        let (mut s, mut r) = config.endpoints(&crate::FlowCtx::at_zero(FlowId(0), 1));
        let mut ch = WireChannel::default();
        let end = Instant::ZERO + Duration::from_secs(2);
        run(&mut s, &mut r, &mut ch, end, &mut NullSink, |_, _, _| {});
        let (sent, got) = (s.stats(), r.stats());
        assert!(
            got.packets_received > 100 && got.packets_sent > 5,
            "{}: {sent:?} {got:?}",
            config.name()
        );
        for (t, n) in ch.seen {
            *types.entry(t).or_default() += n;
        }
    }
    let all: std::collections::HashSet<u8> = PacketType::ALL
        .iter()
        .filter(|t| !matches!(t, PacketType::Hello | PacketType::HelloAck))
        .map(|t| *t as u8)
        .collect();
    let seen: std::collections::HashSet<u8> = types.keys().copied().collect();
    assert_eq!(seen, all, "every packet type went over the wire: {types:?}");
}

#[test]
fn handshakes_round_trip_and_an_ack_never_outweighs_its_hello() {
    let mut buf = [0u8; 128];
    let hello = Handshake::Hello {
        protocol: 4,
        token: 0x0123_4567_89ab_cdef,
    };
    let n = encode_handshake(9, &hello, &mut buf).unwrap();
    let f = decode(&buf[..n]).unwrap();
    assert_eq!((f.conn_id, f.body), (9, Body::Handshake(hello)));
    let ack = Handshake::Ack {
        status: super::super::AckStatus::UnknownProtocol,
        token: 77,
    };
    let m = encode_handshake(9, &ack, &mut buf).unwrap();
    assert_eq!(decode(&buf[..m]).unwrap().body, Body::Handshake(ack));
    assert!(m <= n, "ack {m} bytes, hello {n}");
    buf[FRAME_HEADER_LEN] = 9; // no status 9
    assert_eq!(
        decode(&buf[..m]),
        Err(WireError::FieldOutOfRange("ack status"))
    );
}
