//! `protocol = "linux-tcp"` flows: the kernel's own TCP, which only the emulator
//! (`fairstream-emu`) runs. The reader checks their keys like any flow's and keeps them apart
//! from the simulated flows ([`crate::Scenario::kernel_flows`]); a simulation of a scenario that
//! holds one is refused at the flow's `protocol` line ([`crate::Scenario::check_simulable`]).

use fairstream_core::{Bitrate, DataSize, Instant, NodeId};
use fairstream_proto::tcp::options::header_len;
use fairstream_proto::{DataPacket, IP_TCP_HEADER};
use fairstream_sim::{FlowRoute, FlowStart};
use toml::Value;

use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The protocol name of a kernel TCP flow.
pub const LINUX_TCP: &str = "linux-tcp";

/// The keys only a `linux-tcp` flow takes (`packet_size` is every protocol's; `rate` is also
/// CBR's).
pub(crate) const KEYS: &[&str] = &["congestion", "sack", "timestamps", "rate"];

/// Where the kernel lists the congestion controls it offers.
const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// What a kernel TCP flow runs.
#[derive(Clone, Debug, PartialEq)]
pub struct LinuxTcpConfig {
    /// The congestion control (`TCP_CONGESTION`): a name the kernel offers.
    pub congestion: String,
    /// Selective acknowledgements (`net.ipv4.tcp_sack` of both hosts' namespaces).
    pub sack: bool,
    /// TCP timestamps (`net.ipv4.tcp_timestamps` of both hosts' namespaces).
    pub timestamps: bool,
    /// A full data packet on the wire, IPv4 and TCP headers included: the MSS is this less
    /// 40 bytes (less 12 more with timestamps, as the kernel takes them from the MSS).
    pub packet_size: DataSize,
    /// The application's rate (`None`: a bulk source that always has data to send).
    pub rate: Option<Bitrate>,
}

impl Default for LinuxTcpConfig {
    /// The reader's defaults: cubic, SACK and timestamps on, 1500-byte packets, a bulk source.
    fn default() -> Self {
        Self {
            congestion: "cubic".to_string(),
            sack: true,
            timestamps: true,
            packet_size: DataSize::bytes(1500),
            rate: None,
        }
    }
}

impl LinuxTcpConfig {
    /// The MSS to ask of the socket (`TCP_MAXSEG`): the packet less IPv4 and TCP headers.
    pub fn mss(&self) -> u32 {
        (self.packet_size.as_bytes() - IP_TCP_HEADER) as u32
    }

    /// A full data segment on the wire: its headers are IPv4 and TCP's and, with timestamps,
    /// the option's (which the kernel takes out of the MSS).
    pub fn data_packet(&self) -> DataPacket {
        DataPacket::new(self.packet_size, header_len(self.timestamps))
    }
}

/// A kernel TCP flow of the scenario.
#[derive(Clone, Debug)]
pub struct KernelFlow {
    /// Name shown in results.
    pub name: String,
    /// Its position among all the scenario's flows (simulated ones included), in file order.
    pub order: usize,
    /// Sender's node.
    pub src: NodeId,
    /// Receiver's node.
    pub dst: NodeId,
    /// When the application starts.
    pub start: FlowStart,
    /// When it stops (`None`: at the end of the run).
    pub stop: Option<Instant>,
    /// Links crossed each way.
    pub route: FlowRoute,
    /// The TCP settings.
    pub tcp: LinuxTcpConfig,
    /// An error located at the flow's `protocol` field, for a run that cannot hold it.
    pub at: ScenarioError,
}

/// The congestion controls the kernel offers (`None` where the kernel does not say, off Linux).
pub fn available_congestion() -> Option<Vec<String>> {
    let text = std::fs::read_to_string(AVAILABLE).ok()?;
    Some(text.split_whitespace().map(str::to_string).collect())
}

/// Reads a `linux-tcp` flow's own keys.
pub(crate) fn read(f: &mut Section<'_, '_>) -> Result<LinuxTcpConfig> {
    let congestion = f
        .opt_str("congestion", "a congestion control name such as \"cubic\"")?
        .unwrap_or("cubic")
        .to_string();
    if let Some(offered) = available_congestion()
        && !offered.contains(&congestion)
    {
        return Err(f.error(
            "congestion",
            format!(
                "`{congestion}` is not offered by this kernel; it offers: {} \
                 (net.ipv4.tcp_available_congestion_control)",
                offered.join(", ")
            ),
        ));
    }
    f.set("congestion", Value::String(congestion.clone()));
    let sack = f.bool_or("sack", true)?;
    let timestamps = f.bool_or("timestamps", true)?;
    let packet_size = super::protocols::read_packet_size(
        f,
        DataSize::bytes(1500),
        IP_TCP_HEADER + 88,
        "a kernel TCP packet (40 bytes of headers and the kernel's least MSS of 88)",
    )?;
    let rate: Option<Bitrate> = f.opt_unit("rate")?;
    if rate.is_some_and(Bitrate::is_zero) {
        return Err(f.error(
            "rate",
            "the application's rate must be above zero (leave it out for a bulk source)",
        ));
    }
    Ok(LinuxTcpConfig {
        congestion,
        sack,
        timestamps,
        packet_size,
        rate,
    })
}
