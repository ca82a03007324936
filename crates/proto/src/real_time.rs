//! The protocols the real-time driver (`fairstream send` / `recv`) runs: those the protocol list
//! marks `real_time N` (N, their number in a handshake), each building its configuration for a
//! real run through [`RealTime`], implemented in its folder. [`RtProtocol`] follows from the list.

use fairstream_core::Bitrate;

use crate::{FlowProtocol, ProtocolConfig};

/// A protocol's configuration for a real run.
pub trait RealTime: FlowProtocol + Sized {
    /// Whether a rate cap applies (the rate-controlled protocols; not the streamer, whose rates
    /// are its levels').
    const TAKES_RATE_CAP: bool = true;

    /// Its default configuration, sending at most `cap` on the wire (IPv4 and UDP headers
    /// included).
    fn real_time(cap: Option<Bitrate>) -> Self;
}

/// One protocol the driver runs: its number, its name and how its configuration is built.
struct Row {
    number: u8,
    name: &'static str,
    takes_rate_cap: bool,
    config: fn(Option<Bitrate>) -> ProtocolConfig,
}

/// Generates [`RtProtocol`] from the protocol list's `real_time` entries.
macro_rules! real_time_protocols {
    ($( $(#[$pdoc:meta])* $proto:ident($config:ty) $(real_time $rt:literal)? {
        endpoints { $( $(#[$edoc:meta])* $ep:ident($ety:ty) ),+ $(,)? }
        headers { $( $(#[$hdoc:meta])* $hv:ident($hty:ty) ),* $(,)? }
        wire { $( $(#[$wdoc:meta])* $wv:ident($wty:ty) = $num:literal ),* $(,)? }
    } )+) => {
        /// A protocol the real-time driver runs.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum RtProtocol {
            $( $(
                #[doc = concat!("`", stringify!($proto), "` (handshake number ", stringify!($rt), ").")]
                $proto = $rt,
            )? )+
        }

        /// The rows of the protocols the driver runs, in the list's order.
        const ROWS: &[Row] = &[
            $( $(
                Row {
                    number: $rt,
                    name: <$config as FlowProtocol>::NAME,
                    takes_rate_cap: <$config as RealTime>::TAKES_RATE_CAP,
                    config: |cap| ProtocolConfig::$proto(<$config as RealTime>::real_time(cap)),
                },
            )? )+
        ];

        impl RtProtocol {
            /// Every protocol, in the list's order.
            pub const ALL: [Self; [$( $( $rt, )? )+].len()] = [$( $( { let _ = $rt; Self::$proto }, )? )+];
        }
    };
}

crate::protocols::protocol_list!(real_time_protocols);

impl RtProtocol {
    fn row(self) -> &'static Row {
        ROWS.iter()
            .find(|r| r.number == self as u8)
            .expect("every protocol has its row")
    }

    /// The name on the command line and in results.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Whether `--rate-cap` applies.
    pub fn takes_rate_cap(self) -> bool {
        self.row().takes_rate_cap
    }

    /// The protocol a name stands for, if the driver runs it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The names of every protocol the driver runs, comma-separated (for messages).
    pub fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }

    /// Its number in a `Hello`.
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// The protocol a `Hello`'s number names, if this build runs it.
    pub fn from_number(n: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.number() == n)
    }

    /// Its default configuration, sending at most `cap` on the wire (IPv4 and UDP headers
    /// included; MULTFRC: its connections together).
    pub fn config(self, cap: Option<Bitrate>) -> ProtocolConfig {
        (self.row().config)(cap)
    }
}
