//! One emulation from start to end: check the machine ([`preflight`]), build the hosts (a
//! namespace and a device each, veth or TUN as [`EmuOptions`] say, and the per-namespace
//! sysctls), open the receivers, start the
//! clock, run each flow's ends on threads of their own and the forwarder on the calling thread,
//! stop everything, and assemble what was seen into the simulator's result types.
//!
//! Teardown is by ownership: every namespace and device lives only as long as the descriptors
//! held here, every thread is scoped (joined before [`emulate`] returns, whatever happened), and
//! nothing is ever named in the host's own namespace, so an error, Ctrl-C (`stop`), a flow that
//! fails or panics, or the process being killed leaves nothing behind.

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::record::RunOutput;
use fairstream_core::{Duration, Instant};
use fairstream_rt::clock::Clock;
use fairstream_scenario::Scenario;
use serde_json::Value;

use crate::EmuError;
use crate::device::{DeviceKind, DeviceSetup};
use crate::flows::cbr::CbrEnd;
use crate::flows::linux_tcp::TcpEnd;
use crate::flows::rt::RtEnd;
use crate::flows::stream_tcp::StreamEnd;
use crate::flows::{self, FlowRecord};
use crate::forward::{self, Core, EmuLive};
use crate::netns::Namespace;
use crate::plan::{FlowKind, FlowPlan, Plan};
use crate::record;

/// What an emulation produced.
#[derive(Debug)]
pub struct EmuReport {
    /// The results, in the simulator's types (the same tables are written).
    pub output: RunOutput,
    /// What `emu.json` holds: per-link departure errors, packets forwarded late, the flows'
    /// ends' own reports, the machine's load.
    pub emu: Value,
    /// Where the run stopped, if before its end (Ctrl-C).
    pub stopped_at: Option<Duration>,
}

/// Whether this machine can emulate with the default [`EmuOptions`]: `Err` names what is
/// missing (root, network namespaces, veth pairs or the TUN device, `ip`).
pub fn preflight() -> Result<(), EmuError> {
    preflight_with(&EmuOptions::default())
}

/// Whether this machine can emulate as `options` say.
pub fn preflight_with(options: &EmuOptions) -> Result<(), EmuError> {
    let ns = Namespace::create("preflight").map_err(|e| {
        EmuError::Unavailable(format!(
            "network namespaces: {e} (the emulator needs root, or CAP_SYS_ADMIN and \
             CAP_NET_ADMIN)"
        ))
    })?;
    if options.device == DeviceKind::Tun && !std::path::Path::new("/dev/net/tun").exists() {
        return Err(EmuError::Unavailable(
            "no /dev/net/tun (the kernel's tun module; `--device veth` needs none)".to_string(),
        ));
    }
    ns.run(|| {
        crate::netns::ip_batch_here("preflight", "link set lo up\n")
            .map_err(|e| EmuError::Unavailable(format!("`ip` (iproute2) in a namespace: {e}")))?;
        match options.device {
            DeviceKind::Tun => {
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/net/tun")
                    .map_err(|e| EmuError::Unavailable(format!("/dev/net/tun: {e}")))?;
                crate::sys::tun_set_iff(std::os::fd::AsFd::as_fd(&f), "fsecheck0", false)
                    .map_err(|e| EmuError::Unavailable(format!("a TUN device: {e}")))
            }
            DeviceKind::Veth => crate::netns::ip_batch_here(
                "preflight",
                "link add fsecheck0 type veth peer name fsecheck1\n",
            )
            .map_err(|e| {
                EmuError::Unavailable(format!(
                    "a veth pair: {e} (the kernel's veth module; `--device tun` uses TUN)"
                ))
            }),
        }
    })
}

/// The ends of one flow, as set up before the clock starts.
enum Ends {
    Cbr(CbrEnd, UdpSocket, UdpSocket),
    Rt(Box<RtEnd>, UdpSocket),
    Tcp(TcpEnd, TcpListener),
    Stream(Box<StreamEnd>, TcpListener),
}

/// How to emulate (what the scenario does not say: the machine's side).
#[derive(Clone, Copy, Debug, Default)]
pub struct EmuOptions {
    /// The hosts' devices.
    pub device: DeviceKind,
}

/// Runs `scenario` in real time until its end or `stop`, with the default [`EmuOptions`];
/// `live` gets a line about once a second.
pub fn emulate(
    scenario: &Scenario,
    stop: &AtomicBool,
    live: &mut dyn FnMut(&EmuLive),
) -> Result<EmuReport, EmuError> {
    emulate_with(scenario, &EmuOptions::default(), stop, live)
}

/// Runs `scenario` in real time until its end or `stop`, as `options` say; `live` gets a line
/// about once a second.
pub fn emulate_with(
    scenario: &Scenario,
    options: &EmuOptions,
    stop: &AtomicBool,
    live: &mut dyn FnMut(&EmuLive),
) -> Result<EmuReport, EmuError> {
    let plan = Plan::new(scenario)?;
    preflight_with(options)?;
    let load_before = load_average();
    let setup = DeviceSetup::new(options.device)?;
    let namespaces = plan
        .hosts
        .iter()
        .map(|h| Namespace::create(&h.name))
        .collect::<Result<Vec<_>, _>>()?;
    let mut devices = Vec::with_capacity(plan.hosts.len());
    for (i, (h, ns)) in plan.hosts.iter().zip(&namespaces).enumerate() {
        devices.push(setup.create(ns, i, h.addr, plan.mtu)?);
        // Runs independent of any earlier one: no cached ssthresh or RTT from a past
        // connection (a fresh namespace has none, and keeps none).
        ns.sysctl("net.ipv4.tcp_no_metrics_save", "1")?;
        if let Some(sack) = h.sack {
            ns.sysctl("net.ipv4.tcp_sack", if sack { "1" } else { "0" })?;
        }
        if let Some(ts) = h.timestamps {
            ns.sysctl("net.ipv4.tcp_timestamps", if ts { "1" } else { "0" })?;
        }
    }
    let clock = Clock::start();
    let end = Instant::ZERO + plan.duration;
    let mut ends = Vec::with_capacity(plan.flows.len());
    for (i, f) in plan.flows.iter().enumerate() {
        ends.push(open_ends(&plan, &namespaces, i, f, clock)?);
    }
    let mut core = Core::new(&plan);
    let flows_stop = AtomicBool::new(false);
    let halt = AtomicBool::new(false);
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let n = plan.flows.len();
    let mut records: Vec<(Option<FlowRecord>, Option<FlowRecord>)> =
        (0..n).map(|_| (None, None)).collect();
    let result = std::thread::scope(|s| {
        // However the scope is left, the flows are told to stop first (then joined by it).
        let _stop_flows = SetOnDrop(&flows_stop);
        let mut handles = Vec::with_capacity(2 * n);
        for (i, e) in ends.into_iter().enumerate() {
            let f = &plan.flows[i];
            let (src_ns, dst_ns) = (&namespaces[f.src], &namespaces[f.dst]);
            let (bind, to) = plan.flow_addrs(i);
            let (fl, ha, fa) = (&flows_stop, &halt, &failures);
            let name = f.name.clone();
            let guard = move |what: &'static str, r: Result<FlowRecord, String>| match r {
                Ok(r) => Some(r),
                Err(e) => {
                    fa.lock()
                        .map(|mut v| v.push(format!("flow `{name}`, {what}: {e}")))
                        .ok();
                    ha.store(true, Ordering::Relaxed);
                    None
                }
            };
            let (tx, rx) = ends_jobs(e, f, src_ns, dst_ns, bind, to, fl);
            for (sender, (role, ns, job)) in [(true, tx), (false, rx)] {
                let guard = guard.clone();
                handles.push((
                    i,
                    sender,
                    s.spawn(move || {
                        let _h = HaltOnPanic(ha);
                        let r = match ns {
                            Some(ns) => ns.enter().map_err(|e| e.to_string()).and_then(|()| job()),
                            None => job(),
                        };
                        guard(role, r)
                    }),
                ));
            }
        }
        let fwd = forward::run(&mut core, &devices, clock, end, [stop, &halt], live);
        flows_stop.store(true, Ordering::Relaxed);
        for (i, sender, h) in handles {
            let r = h.join().unwrap_or_else(|_| {
                failures
                    .lock()
                    .map(|mut v| v.push(format!("flow `{}`: an end panicked", plan.flows[i].name)))
                    .ok();
                None
            });
            if sender {
                records[i].0 = r;
            } else {
                records[i].1 = r;
            }
        }
        fwd
    });
    let stopped = result.map_err(|e| EmuError::Forwarder(e.to_string()))?;
    let failed = failures.into_inner().unwrap_or_default();
    if let Some(first) = failed.first() {
        return Err(EmuError::Flow {
            flow: first.clone(),
            detail: if failed.len() > 1 {
                format!("and {} more failures", failed.len() - 1)
            } else {
                "the emulation was stopped".to_string()
            },
        });
    }
    let stopped_at = (stopped < end).then(|| stopped.saturating_since(Instant::ZERO));
    let output = record::output(&plan, &core, &records, stopped);
    let emu = record::emu_json(
        &plan,
        &core,
        &records,
        setup.kind(),
        load_before,
        load_average(),
    );
    drop(devices);
    drop(namespaces);
    drop(setup);
    Ok(EmuReport {
        output,
        emu,
        stopped_at,
    })
}

/// What one end of a flow runs on its thread: its role in messages, the namespace the thread
/// enters first (none when its socket was made there already), and the work.
type Job<'a> = (
    &'static str,
    Option<&'a Namespace>,
    Box<dyn FnOnce() -> Result<FlowRecord, String> + Send + 'a>,
);

/// The sender's and the receiver's jobs of a flow's `ends`, the sender bound to `bind` and
/// sending to `to`, both stopping at `stop`.
fn ends_jobs<'a>(
    ends: Ends,
    f: &'a FlowPlan,
    src_ns: &'a Namespace,
    dst_ns: &'a Namespace,
    bind: SocketAddr,
    to: SocketAddr,
    stop: &'a AtomicBool,
) -> (Job<'a>, Job<'a>) {
    match ends {
        Ends::Cbr(end, tx, rx) => {
            let end2 = end.clone();
            let cfg = match &f.kind {
                FlowKind::Cbr(c) => c.clone(),
                _ => unreachable!("a CBR flow's ends"),
            };
            (
                (
                    "sender",
                    None,
                    Box::new(move || flows::cbr::send(&end, &cfg, &tx, to, stop)),
                ),
                (
                    "receiver",
                    None,
                    Box::new(move || flows::cbr::receive(&end2, &rx, stop)),
                ),
            )
        }
        Ends::Rt(end, rx) => {
            let end2 = end.clone();
            (
                (
                    "sender",
                    Some(src_ns),
                    Box::new(move || flows::rt::send(&end, bind, to, stop)),
                ),
                (
                    "receiver",
                    Some(dst_ns),
                    Box::new(move || flows::rt::receive(&end2, &rx, to, stop)),
                ),
            )
        }
        Ends::Stream(end, listener) => {
            let end2 = TcpEnd {
                clock: end.clock,
                interval: end.interval,
                duration: end.duration,
                start: end.start,
                stop: end.stop,
                tcp: Default::default(),
            };
            let serve = move || {
                flows::stream_tcp::server_socket(&end.config, bind)
                    .and_then(|sock| flows::stream_tcp::send(&end, sock, to, stop))
            };
            (
                ("server", Some(src_ns), Box::new(serve)),
                (
                    "player",
                    None,
                    Box::new(move || flows::linux_tcp::receive(&end2, &listener, stop)),
                ),
            )
        }
        Ends::Tcp(end, listener) => {
            let end2 = end.clone();
            let send = move || {
                flows::linux_tcp::sender_socket(&end.tcp, bind)
                    .and_then(|sock| flows::linux_tcp::send(&end, sock, to, stop))
            };
            (
                ("sender", Some(src_ns), Box::new(send)),
                (
                    "receiver",
                    None,
                    Box::new(move || flows::linux_tcp::receive(&end2, &listener, stop)),
                ),
            )
        }
    }
}

/// Sets up the ends of flow `i` that must exist before the clock starts: the receivers' sockets
/// (listening, so that no first packet is refused) and the CBR sender's socket.
fn open_ends(
    plan: &Plan,
    namespaces: &[Namespace],
    i: usize,
    f: &FlowPlan,
    clock: Clock,
) -> Result<Ends, EmuError> {
    let (bind, listen) = plan.flow_addrs(i);
    let step = |what: &str| format!("open the {what} of flow `{}`", f.name);
    Ok(match &f.kind {
        FlowKind::Cbr(_) => {
            let rx = namespaces[f.dst].run(|| {
                UdpSocket::bind(listen).map_err(|e| EmuError::setup(step("receiver"), e))
            })?;
            let tx = namespaces[f.src]
                .run(|| UdpSocket::bind(bind).map_err(|e| EmuError::setup(step("sender"), e)))?;
            let path = f
                .route
                .forward
                .iter()
                .map(|l| {
                    let spec = &plan.links[l.index()];
                    (spec.delay, spec.capacity.base())
                })
                .collect();
            Ends::Cbr(
                CbrEnd {
                    clock,
                    index: i,
                    seed: plan.seed,
                    interval: plan.interval,
                    duration: plan.duration,
                    start: f.start,
                    stop: f.stop,
                    path,
                },
                tx,
                rx,
            )
        }
        FlowKind::Rt(p, c) => {
            let mut cfg = fairstream_rt::RecvConfig::new(listen);
            cfg.protocols = vec![*p];
            let rx = namespaces[f.dst].run(|| {
                fairstream_rt::bind_receiver(&cfg).map_err(|e| EmuError::setup(step("receiver"), e))
            })?;
            Ends::Rt(
                Box::new(RtEnd {
                    clock,
                    interval: plan.interval,
                    duration: plan.duration,
                    start: f.start,
                    stop: f.stop,
                    protocol: *p,
                    config: (**c).clone(),
                }),
                rx,
            )
        }
        FlowKind::StreamTcp(c) => {
            let listener = namespaces[f.dst].run(|| {
                TcpListener::bind(listen).map_err(|e| EmuError::setup(step("player"), e))
            })?;
            Ends::Stream(
                Box::new(StreamEnd {
                    clock,
                    interval: plan.interval,
                    duration: plan.duration,
                    start: f.start,
                    stop: f.stop,
                    config: (**c).clone(),
                }),
                listener,
            )
        }
        FlowKind::LinuxTcp(t) => {
            let listener = namespaces[f.dst].run(|| {
                TcpListener::bind(listen).map_err(|e| EmuError::setup(step("receiver"), e))
            })?;
            Ends::Tcp(
                TcpEnd {
                    clock,
                    interval: plan.interval,
                    duration: plan.duration,
                    start: f.start,
                    stop: f.stop,
                    tcp: t.clone(),
                },
                listener,
            )
        }
    })
}

/// Sets its flag when dropped.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Sets its flag when dropped by a panicking thread.
struct HaltOnPanic<'a>(&'a AtomicBool);

impl Drop for HaltOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// The 1-minute load average, from `/proc/loadavg`.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
