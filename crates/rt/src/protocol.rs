//! The protocols the driver runs, their numbers in the handshake, and their configuration with
//! a rate cap.

use fairstream_core::Bitrate;
use fairstream_proto::ProtocolConfig;
use fairstream_proto::VtpConfig;
use fairstream_proto::multfrc::MultfrcConfig;
use fairstream_proto::surestream::SurestreamConfig;
use fairstream_proto::tfrc::{TfrcFlowConfig, TfrcWirelessConfig};

use crate::RtError;

/// A protocol the real-time driver runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtProtocol {
    /// TFRC (RFC 5348).
    Tfrc,
    /// TFRC Wireless (TFRC with a loss discrimination algorithm at the receiver).
    TfrcWireless,
    /// MULTFRC (n TFRC connections).
    Multfrc,
    /// VTP.
    Vtp,
    /// The SureStream-like media streamer over UDP (paper 000), with its default clip and
    /// levels: it sends at its level's rate, so it takes no rate cap.
    Surestream,
}

impl RtProtocol {
    /// Every protocol, by handshake number order.
    pub const ALL: [Self; 5] = [
        Self::Tfrc,
        Self::TfrcWireless,
        Self::Multfrc,
        Self::Vtp,
        Self::Surestream,
    ];

    /// The name on the command line and in results.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Tfrc => "tfrc",
            Self::TfrcWireless => "tfrc-wireless",
            Self::Multfrc => "multfrc",
            Self::Vtp => "vtp",
            Self::Surestream => "surestream",
        }
    }

    /// Whether `--rate-cap` applies (the rate-controlled protocols; not the streamer, whose
    /// rates are its levels').
    pub const fn takes_rate_cap(self) -> bool {
        !matches!(self, Self::Surestream)
    }

    /// The protocol a name stands for.
    pub fn parse(name: &str) -> Result<Self, RtError> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| RtError::UnknownProtocol(name.to_string()))
    }

    /// Its number in a `Hello`.
    pub const fn number(self) -> u8 {
        self as u8 + 1
    }

    /// The protocol a `Hello`'s number names, if this build runs it.
    pub fn from_number(n: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.number() == n)
    }

    /// Its default configuration, sending at most `cap` on the wire (IPv4 and UDP headers
    /// included; MULTFRC: its connections together).
    pub fn config(self, cap: Option<Bitrate>) -> ProtocolConfig {
        let mut tfrc = TfrcFlowConfig::default();
        if let Some(c) = cap {
            // TFRC's rates count segments (RFC 5348); the cap counts whole packets on the wire.
            let wire_share = tfrc.sender.segment() / tfrc.sender.packet_size.as_bytes() as f64;
            tfrc.sender.max_rate = Bitrate::from_bps_f64(c.as_bps_f64() * wire_share);
        }
        match self {
            Self::Tfrc => ProtocolConfig::Tfrc(tfrc),
            Self::TfrcWireless => ProtocolConfig::TfrcWireless(TfrcWirelessConfig {
                tfrc,
                ..TfrcWirelessConfig::default()
            }),
            Self::Multfrc => ProtocolConfig::Multfrc(MultfrcConfig {
                tfrc,
                ..MultfrcConfig::default()
            }),
            Self::Vtp => {
                let mut v = VtpConfig::default();
                if let Some(c) = cap {
                    v.max_rate = c;
                }
                ProtocolConfig::Vtp(v)
            }
            Self::Surestream => ProtocolConfig::Surestream(SurestreamConfig::default()),
        }
    }
}
