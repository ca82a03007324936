//! A `protocol = "tfrc"` flow: TFRC (RFC 5348), or ns-2's agent with `preset = "ns2"`. Its
//! keys are shared by the protocols built on TFRC (`tfrc-wireless`, `multfrc`).

use fairstream_core::{Bitrate, DataSize, Duration};
use fairstream_proto::ProtocolConfig;
use fairstream_proto::tfrc::{
    EquationForm, IncreaseRule, NoFeedbackRule, ReceiveLimit, SlowStartRule, TfrcFlowConfig,
    TfrcPreset, TimeoutRule,
};

use super::read_packet_size;
use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The keys of a TFRC flow (`packet_size` is every protocol's).
pub(crate) const KEYS: &[&str] = &[
    "preset",
    "header",
    "equation",
    "timeout",
    "timeout_tick",
    "rtt_filter",
    "t_mbi",
    "t_mbi_floor",
    "first_rate",
    "increase",
    "slow_start",
    "slow_increase",
    "send_on_report",
    "receive_limit",
    "no_feedback",
    "oscillation_reduction",
    "max_rate",
    "ndupack",
    "discounting",
    "feedback_timer",
    "report_on_arrival",
    "precise_loss",
    "feedback_size",
];

/// Reads a TFRC flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    _warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    Ok(ProtocolConfig::Tfrc(read_tfrc(f)?))
}

/// Reads the TFRC keys of a flow table.
pub(crate) fn read_tfrc(f: &mut Section<'_, '_>) -> Result<TfrcFlowConfig> {
    let preset = match f.choice("preset", &["rfc5348", "ns2"], "rfc5348")? {
        "ns2" => TfrcPreset::Ns2,
        _ => TfrcPreset::Rfc5348,
    };
    let mut c = TfrcFlowConfig::preset(preset);
    let s = &mut c.sender;
    s.packet_size = read_packet_size(
        f,
        s.packet_size,
        29,
        "a TFRC data packet (its IP and UDP headers and at least one byte)",
    )?;
    s.header = f.unit_or("header", s.header)?;
    if s.header >= s.packet_size {
        return Err(f.error(
            "header",
            format!(
                "the headers must be smaller than the packet ({})",
                s.packet_size
            ),
        ));
    }
    s.equation = match f.choice("equation", &["rfc5348", "ns2"], equation_name(s.equation))? {
        "ns2" => EquationForm::Ns2,
        _ => EquationForm::Rfc5348,
    };
    let ns2_tick = match s.timeout {
        TimeoutRule::Ns2Ticks { tick } => tick,
        TimeoutRule::FourRtt => Duration::from_millis(100),
    };
    s.timeout = match f.choice("timeout", &["4rtt", "ns2"], timeout_name(s.timeout))? {
        "ns2" => {
            let tick = f.unit_or("timeout_tick", ns2_tick)?;
            if tick.is_zero() {
                return Err(f.error("timeout_tick", "the tick must be longer than zero"));
            }
            TimeoutRule::Ns2Ticks { tick }
        }
        _ => TimeoutRule::FourRtt,
    };
    s.rtt_filter = f.open_fraction_or("rtt_filter", s.rtt_filter)?;
    s.t_mbi = f.unit_or("t_mbi", s.t_mbi)?;
    if s.t_mbi < Duration::from_millis(1) {
        return Err(f.error("t_mbi", "the maximum back-off interval is at least 1ms"));
    }
    s.t_mbi_floor = f.bool_or("t_mbi_floor", s.t_mbi_floor)?;
    s.first_rate = f.opt_unit::<Bitrate>("first_rate")?;
    s.increase = match f.choice(
        "increase",
        &["immediate", "gradual"],
        increase_name(s.increase),
    )? {
        "gradual" => IncreaseRule::Gradual,
        _ => IncreaseRule::Immediate,
    };
    s.slow_start = match f.choice(
        "slow_start",
        &["rfc5348", "ns2"],
        slow_start_name(s.slow_start),
    )? {
        "ns2" => SlowStartRule::Ns2,
        _ => SlowStartRule::Rfc5348,
    };
    s.slow_increase = f.bool_or("slow_increase", s.slow_increase)?;
    s.send_on_report = f.bool_or("send_on_report", s.send_on_report)?;
    s.receive_limit = match f.choice(
        "receive_limit",
        &["set", "latest"],
        receive_limit_name(s.receive_limit),
    )? {
        "latest" => ReceiveLimit::Latest,
        _ => ReceiveLimit::Set,
    };
    s.no_feedback = match f.choice(
        "no_feedback",
        &["rfc5348", "ns2"],
        no_feedback_name(s.no_feedback),
    )? {
        "ns2" => NoFeedbackRule::Ns2,
        _ => NoFeedbackRule::Rfc5348,
    };
    s.oscillation_reduction = f.bool_or("oscillation_reduction", s.oscillation_reduction)?;
    s.max_rate = f.unit_or("max_rate", s.max_rate)?;
    let r = &mut c.receiver;
    r.ndupack = f.int_or("ndupack", 1, 1000, i64::from(r.ndupack))? as u32;
    r.discounting = f.bool_or("discounting", r.discounting)?;
    r.feedback_timer = f.float_or("feedback_timer", 0.1, 100.0, r.feedback_timer)?;
    r.report_on_arrival = f.bool_or("report_on_arrival", r.report_on_arrival)?;
    r.precise_loss = f.bool_or("precise_loss", r.precise_loss)?;
    r.feedback_size = f.unit_or("feedback_size", r.feedback_size)?;
    if r.feedback_size < DataSize::bytes(28) || r.feedback_size > DataSize::bytes(65_535) {
        return Err(f.error(
            "feedback_size",
            "a feedback packet is 28 to 65535 bytes (its IP and UDP headers at least)",
        ));
    }
    Ok(c)
}

fn equation_name(e: EquationForm) -> &'static str {
    match e {
        EquationForm::Rfc5348 => "rfc5348",
        EquationForm::Ns2 => "ns2",
    }
}

fn timeout_name(t: TimeoutRule) -> &'static str {
    match t {
        TimeoutRule::FourRtt => "4rtt",
        TimeoutRule::Ns2Ticks { .. } => "ns2",
    }
}

fn increase_name(i: IncreaseRule) -> &'static str {
    match i {
        IncreaseRule::Immediate => "immediate",
        IncreaseRule::Gradual => "gradual",
    }
}

fn slow_start_name(r: SlowStartRule) -> &'static str {
    match r {
        SlowStartRule::Rfc5348 => "rfc5348",
        SlowStartRule::Ns2 => "ns2",
    }
}

fn receive_limit_name(r: ReceiveLimit) -> &'static str {
    match r {
        ReceiveLimit::Set => "set",
        ReceiveLimit::Latest => "latest",
    }
}

fn no_feedback_name(n: NoFeedbackRule) -> &'static str {
    match n {
        NoFeedbackRule::Rfc5348 => "rfc5348",
        NoFeedbackRule::Ns2 => "ns2",
    }
}
