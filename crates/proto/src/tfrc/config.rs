//! TFRC's parameters with RFC 5348's defaults, and the `ns2` preset that switches each rule
//! where ns-2's `Agent/TFRC` and `Agent/TFRCSink` differ (PROTOCOLS.md §2.2 and §2.9).

use fairstream_core::{Bitrate, DataSize, Duration};

use super::EquationForm;
use crate::tfrc::{TfrcData, TfrcFeedback};
use crate::{udp_feedback_size, udp_headers};

/// Which rule sets the equation's retransmission timeout `t_RTO`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TimeoutRule {
    /// RFC 5348 §3.1: `t_RTO = 4·R`.
    #[default]
    FourRtt,
    /// ns-2's TFRC (`update_rtt()`): TCP's integer `srtt + 4·rttvar` estimator on samples
    /// rounded to ticks of `tick` (ns-2 `tcp_tick_` 0.1 s), so that for RTTs below 150 ms
    /// t_RTO settles at 3 ticks.
    Ns2Ticks {
        /// The clock tick.
        tick: Duration,
    },
}

/// How the allowed rate grows in congestion avoidance when the equation allows more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IncreaseRule {
    /// RFC 5348 §4.3: the rate jumps to the equation's (capped by the receive limit).
    #[default]
    Immediate,
    /// ns-2: at most `s/R · min(2, Δt/R)` per report, Δt the time since the last change.
    Gradual,
}

/// What the sender does when its no-feedback timer expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum NoFeedbackRule {
    /// RFC 5348 §4.4: halve through the receive limit; restart after `max(4R, 2s/X)`.
    #[default]
    Rfc5348,
    /// ns-2: halve the rate; restart after `max(2R, 2s/X)`.
    Ns2,
}

/// How the rate grows before the first loss event (and leaves that phase).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SlowStartRule {
    /// RFC 5348 §4.3: `X = max(min(2X, recv_limit), initial_rate)` at most once per RTT; the
    /// first report with p > 0 sets the rate by the congestion-avoidance rule.
    #[default]
    Rfc5348,
    /// ns-2's `slowstart()`: the first two reports raise the rate to the RFC 3390 initial rate
    /// (`k·s/R`, k = 4 for s ≤ 1095 B); from the third, with `ss_max = 2·X_recv` of the latest
    /// report (0 in the first or when X_recv is 0): doubled (at least s/R, at most `ss_max`)
    /// when more than R since the last change, halved to `ss_max/2` when above `ss_max`, set to
    /// s/R when `ss_max` is 0; the first report with p > 0 sets the rate to the equation's,
    /// without the receive cap (`recv()`, `OUT_OF_SLOW_START`).
    Ns2,
}

/// Which receive rates cap the allowed rate in congestion avoidance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReceiveLimit {
    /// RFC 5348 §4.3: twice the largest X_recv reported in the last two RTTs.
    #[default]
    Set,
    /// ns-2 (`maxrate_`): twice the X_recv of the latest report, at least s/R (0, so s/R,
    /// in the first report or when X_recv is 0).
    Latest,
}

/// The named sets of defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TfrcPreset {
    /// RFC 5348 throughout.
    #[default]
    Rfc5348,
    /// ns-2.35's TFRC agent and sink (for reproducing results built on ns-2).
    Ns2,
}

impl TfrcPreset {
    /// The preset's name in scenarios.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Rfc5348 => "rfc5348",
            Self::Ns2 => "ns2",
        }
    }
}

/// Sender parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TfrcConfig {
    /// Size of a data packet on the wire, headers included.
    pub packet_size: DataSize,
    /// Bytes of `packet_size` that are headers: the segment size `s` of the equation is
    /// `packet_size − header` (RFC 5348 §3.1 excludes headers). Default: what the wire format
    /// puts before the payload (`udp_headers` of the TFRC data header: IPv4 + UDP + frame
    /// header + fields, 52 bytes); ns-2 adds a 32-byte `headersize_` to its `packetSize_`.
    pub header: DataSize,
    /// The equation's form.
    pub equation: EquationForm,
    /// How `t_RTO` is set.
    pub timeout: TimeoutRule,
    /// RTT filter constant q: `R = q·R + (1 − q)·sample` (RFC 5348 0.9; ns-2 `df_` 0.95).
    pub rtt_filter: f64,
    /// Maximum back-off interval t_mbi: the rate never falls below `s / t_mbi` (64 s) while
    /// `t_mbi_floor` holds.
    pub t_mbi: Duration,
    /// Whether `s / t_mbi` floors the rate (RFC 5348; ns-2's agent has no such floor).
    pub t_mbi_floor: bool,
    /// Rate before the first RTT sample (RFC 5348 §4.2: one segment per second; ns-2
    /// `InitRate_` 300 B/s). `None`: `s` per second.
    pub first_rate: Option<Bitrate>,
    /// Congestion-avoidance increase rule.
    pub increase: IncreaseRule,
    /// Slow-start rule.
    pub slow_start: SlowStartRule,
    /// ns-2's `slow_increase_`: in slow start (from the third report on) the packet rate moves
    /// from the old rate to the new one by `(new − old)/(new·R/s)` per packet sent, spreading
    /// each doubling over about an RTT (with [`SlowStartRule::Ns2`]).
    pub slow_increase: bool,
    /// ns-2 sends a packet at once on each slow-start report and on each no-feedback expiry
    /// (`nextpkt()`), restarting its send timer from there.
    pub send_on_report: bool,
    /// The receive limit in congestion avoidance.
    pub receive_limit: ReceiveLimit,
    /// No-feedback timer rule.
    pub no_feedback: NoFeedbackRule,
    /// RFC 5348 §4.5 oscillation reduction (`X_inst = X·R_sqmean/√R_sample`; ns-2 `ca_` = 1).
    pub oscillation_reduction: bool,
    /// Filter constant q2 of `R_sqmean` (0.9).
    pub sqrt_rtt_filter: f64,
    /// A ceiling on the allowed rate (what the application could ever send).
    pub max_rate: Bitrate,
}

impl Default for TfrcConfig {
    fn default() -> Self {
        Self {
            packet_size: DataSize::bytes(1000),
            header: DataSize::bytes(udp_headers(TfrcData::WIRE_LEN)),
            equation: EquationForm::Rfc5348,
            timeout: TimeoutRule::FourRtt,
            rtt_filter: 0.9,
            t_mbi: Duration::from_secs(64),
            t_mbi_floor: true,
            first_rate: None,
            increase: IncreaseRule::Immediate,
            slow_start: SlowStartRule::Rfc5348,
            slow_increase: false,
            send_on_report: false,
            receive_limit: ReceiveLimit::Set,
            no_feedback: NoFeedbackRule::Rfc5348,
            oscillation_reduction: false,
            sqrt_rtt_filter: 0.9,
            max_rate: Bitrate::gbps(10),
        }
    }
}

impl TfrcConfig {
    /// The defaults of `preset`.
    pub fn preset(preset: TfrcPreset) -> Self {
        match preset {
            TfrcPreset::Rfc5348 => Self::default(),
            TfrcPreset::Ns2 => Self {
                packet_size: DataSize::bytes(1032),
                header: DataSize::bytes(32),
                equation: EquationForm::Ns2,
                timeout: TimeoutRule::Ns2Ticks {
                    tick: Duration::from_millis(100),
                },
                first_rate: Some(Bitrate::bps(2400)),
                rtt_filter: 0.95,
                increase: IncreaseRule::Gradual,
                slow_start: SlowStartRule::Ns2,
                slow_increase: true,
                send_on_report: true,
                receive_limit: ReceiveLimit::Latest,
                t_mbi_floor: false,
                no_feedback: NoFeedbackRule::Ns2,
                oscillation_reduction: true,
                sqrt_rtt_filter: 0.95,
                ..Self::default()
            },
        }
    }

    /// The segment size `s` in bytes (at least one).
    pub fn segment(&self) -> f64 {
        self.packet_size
            .as_bytes()
            .saturating_sub(self.header.as_bytes())
            .max(1) as f64
    }

    /// A full data packet: `packet_size`, of which the segment `s` is the payload.
    pub fn data_packet(&self) -> crate::DataPacket {
        let size = self.packet_size;
        crate::DataPacket::new(size, size.as_bytes().saturating_sub(self.segment() as u64))
    }
}

/// Receiver parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TfrcReceiverConfig {
    /// Packets that must arrive after a gap before its packets count as lost (RFC 5348 §5.1:
    /// 3; ns-2 `numPkts_` 1).
    pub ndupack: u32,
    /// RFC 5348 §5.5 history discounting (ns-2 `discount_` = 1).
    pub discounting: bool,
    /// Feedback timer as a multiple of the sender's RTT (RFC 5348 §6.2: 1; ns-2 1.5).
    pub feedback_timer: f64,
    /// Also report on a data arrival once an RTT has passed since the last report (ns-2's
    /// sink does; RFC 5348 reports on its timer).
    pub report_on_arrival: bool,
    /// ns-2's `PreciseLoss_`: a lost packet starts a new loss event only if, besides being
    /// sent more than an RTT after the previous event's start, the packet that revealed it
    /// carries a later sender round (reports received plus no-feedback expiries) than the one
    /// that revealed the previous event; then one hole starts at most one event.
    pub precise_loss: bool,
    /// Size of a feedback packet on the wire (IPv4 + UDP + the 20-byte report; ns-2 40 B).
    pub feedback_size: DataSize,
}

impl Default for TfrcReceiverConfig {
    fn default() -> Self {
        Self {
            ndupack: 3,
            discounting: false,
            feedback_timer: 1.0,
            report_on_arrival: false,
            precise_loss: false,
            feedback_size: udp_feedback_size(TfrcFeedback::WIRE_LEN),
        }
    }
}

impl TfrcReceiverConfig {
    /// The defaults of `preset`.
    pub fn preset(preset: TfrcPreset) -> Self {
        match preset {
            TfrcPreset::Rfc5348 => Self::default(),
            TfrcPreset::Ns2 => Self {
                ndupack: 1,
                discounting: true,
                feedback_timer: 1.5,
                report_on_arrival: true,
                precise_loss: true,
                feedback_size: DataSize::bytes(40),
            },
        }
    }
}
