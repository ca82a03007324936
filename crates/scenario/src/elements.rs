//! A link's queue discipline (`queue = { kind = … }`) and loss model (`loss = { kind = … }`).

use fairstream_core::{Bitrate, DataSize, Duration, Probability};
use fairstream_net::{
    EricaPortConfig, ErrorModel, FqConfig, LimitCounting, PacketDiscard, QueueConfig, QueueLimit,
    RedConfig, TbfConfig,
};
use fairstream_proto::abr::{EricaParams, EricaVariant};
use toml::Value;
use toml::de::{DeTable, DeValue};

use crate::reader::{AUTO, Result, Section, a};

/// Largest queue limit in bytes, as for any data size: 1 TB.
const MAX_QUEUE_BYTES: DataSize = DataSize::bytes(1_000_000_000_000);

/// Default queue: drop-tail of 50 packets, ns-2's `Queue limit_` (counted as Linux pfifo does).
const DEFAULT_LIMIT: u32 = 50;

/// Keys only a RED queue takes (`preset` is shared: each kind has its own presets).
const RED_KEYS: &[&str] = &[
    "min_th",
    "max_th",
    "max_p",
    "w_q",
    "gentle",
    "wait",
    "bytes",
    "queue_in_bytes",
    "mean_pktsize",
    "target_delay",
];
/// Keys only a token bucket takes.
const TBF_KEYS: &[&str] = &["rate", "burst", "peak_rate", "mtu"];
/// Keys only a fair queue takes.
const FQ_KEYS: &[&str] = &["quantum", "flow_limit"];
/// Keys only an ERICA port takes.
const ERICA_KEYS: &[&str] = &[
    "target_utilisation",
    "interval",
    "interval_cells",
    "delta",
    "variant",
    "discard",
    "discard_threshold",
];

/// Default limit of an ERICA port, cells: about 50 packets of 1500 bytes (*chosen*).
const DEFAULT_ERICA_LIMIT: u32 = 1600;

/// Every key a queue table may hold: the common ones, then each discipline's.
pub(crate) const QUEUE_KEYS: &[&[&str]] = &[
    &["kind", "limit", "preset"],
    RED_KEYS,
    TBF_KEYS,
    FQ_KEYS,
    ERICA_KEYS,
];

/// Reads `queue` of a link of rate `rate` (a limit in milliseconds is converted at that rate).
pub(crate) fn read_queue(link: &mut Section<'_, '_>, rate: Bitrate) -> Result<QueueConfig> {
    let queue_keys = QUEUE_KEYS.concat();
    let empty = DeTable::new();
    let mut q = match link.opt_table("queue", &queue_keys)? {
        Some(q) => q,
        // No queue: the defaults, resolved as `queue = {}` resolves (one source of them).
        None => link.absent_table("queue", &empty, &queue_keys)?,
    };
    let kind = q.choice(
        "kind",
        &["droptail", "red", "tbf", "fq", "erica"],
        "droptail",
    )?;
    let only = |kinds: &[&str], keys: &[&str], q: &Section<'_, '_>| -> Result<()> {
        if kinds.contains(&kind) {
            return Ok(());
        }
        q.none_of(keys, &format!("a {kind} queue"))
    };
    only(&["red"], RED_KEYS, &q)?;
    only(&["tbf"], TBF_KEYS, &q)?;
    only(&["fq"], FQ_KEYS, &q)?;
    only(&["erica"], ERICA_KEYS, &q)?;
    only(&["red", "droptail"], &["preset"], &q)?;
    let config = match kind {
        "red" => read_red(&mut q, rate)?,
        "fq" => read_fq(&mut q, rate)?,
        "erica" => read_erica(&mut q, rate)?,
        "tbf" => read_tbf(&mut q)?,
        _ => read_droptail(&mut q, rate)?,
    };
    link.set("queue", Value::Table(q.take_resolved()));
    Ok(config)
}

/// Reads a RED queue: a preset, then any parameter that overrides it.
fn read_red(q: &mut Section<'_, '_>, rate: Bitrate) -> Result<QueueConfig> {
    let base = match q.choice("preset", &["ns2", "floyd-jacobson", "ns2-classic"], "ns2")? {
        "floyd-jacobson" => RedConfig::floyd_jacobson_1993(),
        "ns2-classic" => RedConfig::ns2_classic(),
        _ => RedConfig::default(),
    };
    let limit = read_limit(q, rate, base.limit)?;
    // Each of these is a number, "auto" (derived from the link, as ns-2 does), or the preset's.
    let min_th = q
        .opt_float_or_auto("min_th", 0.0, 1e9)?
        .unwrap_or(base.min_th);
    let max_th = q
        .opt_float_or_auto("max_th", 0.0, 1e9)?
        .unwrap_or(base.max_th);
    if let (Some(lo), Some(hi)) = (min_th, max_th)
        && hi <= lo
    {
        return Err(q.error("max_th", format!("must be above min_th ({lo})")));
    }
    let max_p = q.float_or("max_p", 0.0, 1.0, base.max_p)?;
    let q_weight = q
        .opt_float_or_auto("w_q", 0.0, 1.0)?
        .unwrap_or(base.q_weight);
    let gentle = q.bool_or("gentle", base.gentle)?;
    let wait = q.bool_or("wait", base.wait)?;
    let byte_mode = q.bool_or("bytes", base.byte_mode)?;
    let queue_in_bytes = q.bool_or("queue_in_bytes", base.queue_in_bytes)?;
    let mean_pktsize: DataSize = q.unit_or("mean_pktsize", base.mean_pktsize)?;
    if mean_pktsize.as_bytes() == 0 {
        return Err(q.error("mean_pktsize", "must be at least one byte"));
    }
    let target_delay: Duration = q.unit_or("target_delay", base.target_delay)?;
    for (key, v) in [("min_th", min_th), ("max_th", max_th), ("w_q", q_weight)] {
        q.set(
            key,
            v.map_or_else(|| Value::String(AUTO.into()), Value::Float),
        );
    }
    q.set("max_p", Value::Float(max_p));
    Ok(QueueConfig::Red(RedConfig {
        q_weight,
        min_th,
        max_th,
        max_p,
        gentle,
        wait,
        byte_mode,
        queue_in_bytes,
        mean_pktsize,
        target_delay,
        limit,
    }))
}

/// Reads a token bucket filter (Linux `tbf`): rate, burst, limit, optional peak rate and mtu.
fn read_tbf(q: &mut Section<'_, '_>) -> Result<QueueConfig> {
    let tbf_rate: Bitrate = q.req_unit("rate")?;
    let burst: DataSize = q.req_unit("burst")?;
    let limit: DataSize = q.req_unit("limit")?;
    let peak_rate: Option<Bitrate> = q.opt_unit("peak_rate")?;
    let mtu: Option<DataSize> = q.opt_unit("mtu")?;
    if tbf_rate.is_zero() {
        return Err(q.error("rate", "a token bucket's rate must be above zero"));
    }
    if burst.as_bytes() == 0 {
        return Err(q.error("burst", "a token bucket must hold at least one byte"));
    }
    if peak_rate.is_some() != mtu.is_some() {
        return Err(q.error(
            if peak_rate.is_some() {
                "mtu"
            } else {
                "peak_rate"
            },
            "give both `peak_rate` and `mtu`, or neither",
        ));
    }
    Ok(QueueConfig::Tbf(TbfConfig {
        rate: tbf_rate,
        burst,
        limit,
        peak_rate,
        mtu,
    }))
}

/// Reads a drop-tail queue: its limit and which packets count against it.
fn read_droptail(q: &mut Section<'_, '_>, rate: Bitrate) -> Result<QueueConfig> {
    let counting = match q.choice("preset", &["pfifo", "ns2"], "pfifo")? {
        "ns2" => LimitCounting::Ns2,
        _ => LimitCounting::Waiting,
    };
    let limit = read_limit(q, rate, QueueLimit::Packets(DEFAULT_LIMIT))?;
    if counting == LimitCounting::Ns2 && limit == QueueLimit::Packets(1) {
        return Err(q.error(
            "limit",
            "ns-2 counting holds `limit - 1` packets waiting, so a limit of 1 drops \
             every packet that finds the link busy; use at least 2",
        ));
    }
    Ok(QueueConfig::DropTail { limit, counting })
}

/// Reads a fair queue's `quantum`, `flow_limit` and `limit` (both in packets).
fn read_fq(q: &mut Section<'_, '_>, rate: Bitrate) -> Result<QueueConfig> {
    let base = FqConfig::default();
    let quantum: DataSize = q.unit_or("quantum", base.quantum)?;
    if quantum.as_bytes() == 0 {
        return Err(q.error("quantum", "the quantum must be at least one byte"));
    }
    let limit = match read_limit(q, rate, QueueLimit::Packets(base.limit))? {
        QueueLimit::Packets(n) => n,
        QueueLimit::Bytes(_) => {
            return Err(q.error(
                "limit",
                "a fair queue's limit counts packets, such as \"10000 packets\"",
            ));
        }
    };
    let flow_limit = q.int_or(
        "flow_limit",
        1,
        i64::from(u32::MAX),
        i64::from(base.flow_limit),
    )? as u32;
    Ok(QueueConfig::Fq(FqConfig {
        quantum,
        limit,
        flow_limit,
    }))
}

/// Reads an ERICA port: its FIFO's limit in cells and ERICA's parameters.
fn read_erica(q: &mut Section<'_, '_>, rate: Bitrate) -> Result<QueueConfig> {
    let base = EricaParams::default();
    let limit = read_limit(q, rate, QueueLimit::Packets(DEFAULT_ERICA_LIMIT))?;
    let target_utilisation = q.float_or(
        "target_utilisation",
        f64::MIN,
        f64::MAX,
        base.target_utilisation,
    )?;
    if !(target_utilisation > 0.0 && target_utilisation <= 1.0) {
        return Err(q.error(
            "target_utilisation",
            format!("{target_utilisation} is out of range; expected a number in (0, 1]"),
        ));
    }
    let interval: Duration = q.unit_or("interval", base.interval)?;
    if interval.is_zero() {
        return Err(q.error("interval", "the averaging interval must be longer than 0"));
    }
    let interval_cells = q.int_or(
        "interval_cells",
        1,
        i64::from(u32::MAX),
        i64::from(base.interval_cells),
    )? as u32;
    let delta = q.float_or("delta", 0.0, 1e6, base.delta)?;
    let variant = match q.choice("variant", &["complete", "basic"], "complete")? {
        "basic" => EricaVariant::Basic,
        _ => EricaVariant::Complete,
    };
    let discard = match q.choice("discard", &["none", "partial", "early"], "none")? {
        "partial" => PacketDiscard::Partial,
        "early" => {
            let limit_cells = match limit {
                QueueLimit::Packets(n) => i64::from(n),
                QueueLimit::Bytes(b) => {
                    (b.as_bytes() / fairstream_proto::abr::CELL_SIZE.as_bytes()) as i64
                }
            };
            let threshold = q.int_or("discard_threshold", 0, limit_cells, limit_cells * 3 / 4)?;
            PacketDiscard::Early {
                threshold: threshold as u32,
            }
        }
        _ => PacketDiscard::None,
    };
    if !matches!(discard, PacketDiscard::Early { .. }) && q.raw("discard_threshold").is_some() {
        return Err(q.error("discard_threshold", "applies only with discard = \"early\""));
    }
    Ok(QueueConfig::Erica(EricaPortConfig {
        limit,
        erica: EricaParams {
            target_utilisation,
            interval,
            interval_cells,
            delta,
            variant,
        },
        discard,
    }))
}

/// Reads `limit`: `50` or `"50 packets"`, `"64KB"`, or `"20ms"` (bytes at the link rate).
fn read_limit(q: &mut Section<'_, '_>, rate: Bitrate, default: QueueLimit) -> Result<QueueLimit> {
    const EXPECTED: &str = "a queue limit such as \"50 packets\", \"64KB\" or \"20ms\"";
    let limit = match q.raw("limit").map(|v| v.get_ref()) {
        None => default,
        Some(DeValue::Integer(_)) => {
            QueueLimit::Packets(q.opt_int("limit", 1, i64::from(u32::MAX))?.unwrap_or(0) as u32)
        }
        Some(DeValue::String(s)) => {
            let s = s.trim();
            let packets = ["packets", "packet", "pkts", "pkt", "p"]
                .iter()
                .find_map(|unit| s.strip_suffix(unit))
                .map(|n| n.trim().parse::<u32>());
            match packets {
                Some(Ok(n)) => QueueLimit::Packets(n),
                Some(Err(_)) => return Err(q.error("limit", format!("`{s}` is not {EXPECTED}"))),
                None => match (s.parse::<Duration>(), s.parse::<DataSize>()) {
                    (Ok(d), _) => match rate.data_in(d) {
                        Some(b) if b <= MAX_QUEUE_BYTES => QueueLimit::Bytes(b),
                        _ => {
                            return Err(q.error(
                                "limit",
                                format!(
                                    "`{s}` at {rate} is more than 1 TB, the largest queue limit"
                                ),
                            ));
                        }
                    },
                    (_, Ok(b)) => QueueLimit::Bytes(b),
                    (Err(e), _) | (_, Err(e)) if e.is_out_of_range() => {
                        return Err(q.error("limit", e.to_string()));
                    }
                    _ => return Err(q.error("limit", format!("`{s}` is not {EXPECTED}"))),
                },
            }
        }
        Some(other) => {
            return Err(q.error(
                "limit",
                format!("expected {EXPECTED}, found {}", a(other.type_str())),
            ));
        }
    };
    let text = match limit {
        QueueLimit::Packets(0) | QueueLimit::Bytes(DataSize::ZERO) => {
            return Err(q.error("limit", "a queue must hold at least one packet"));
        }
        QueueLimit::Packets(n) => format!("{n} packets"),
        QueueLimit::Bytes(b) => b.to_string(),
    };
    q.set("limit", Value::String(text));
    Ok(limit)
}

/// Reads `loss` (absent: no errors).
pub(crate) fn read_loss(link: &mut Section<'_, '_>) -> Result<ErrorModel> {
    let keys = &[
        "kind",
        "per",
        "p_good_to_bad",
        "p_bad_to_good",
        "loss_good",
        "loss_bad",
    ];
    let Some(mut l) = link.opt_table("loss", keys)? else {
        return Ok(ErrorModel::None);
    };
    let kind = l.choice(
        "kind",
        &["none", "bernoulli", "gilbert-elliott"],
        "bernoulli",
    )?;
    const GILBERT_ELLIOTT: &[&str] = &["p_good_to_bad", "p_bad_to_good", "loss_good", "loss_bad"];
    let model = match kind {
        "none" => {
            l.none_of(&keys[1..], "a link without loss (kind = \"none\")")?; // all but `kind`
            ErrorModel::None
        }
        "bernoulli" => {
            l.none_of(
                GILBERT_ELLIOTT,
                "Bernoulli loss (a Gilbert-Elliott model's: kind = \"gilbert-elliott\")",
            )?;
            ErrorModel::bernoulli(l.req_unit::<Probability>("per")?)
        }
        _ => {
            l.none_of(&["per"], "Gilbert-Elliott loss (its keys: p_good_to_bad, p_bad_to_good, loss_good, loss_bad)")?;
            let gb: Probability = l.req_unit("p_good_to_bad")?;
            let bg: Probability = l.req_unit("p_bad_to_good")?;
            let lg: Probability = l.unit_or("loss_good", Probability::ZERO)?;
            let lb: Probability = l.unit_or("loss_bad", Probability::ONE)?;
            ErrorModel::gilbert_elliott(gb, bg, lg, lb)
        }
    };
    link.set("loss", Value::Table(l.take_resolved()));
    Ok(model)
}
