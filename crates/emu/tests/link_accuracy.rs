//! Link accuracy (docs/VALIDATION.md, "The emulator's links"): one emulation of three
//! independent paths, each a CBR flow through one link, against a simulation of the same
//! scenario, then the light path alone; once with the hosts on veth pairs (the default) and
//! once on TUN devices, never at the same time.
//!
//! - **overload**: 150 Mbit/s of 1500-byte packets into a 100 Mbit/s, 10 ms link with a
//!   5000-packet drop-tail queue (600 ms: a stall of the sender on a busy machine does not
//!   empty it): delivered at the link's rate within 1 %, and the link's drops within 2 % of the
//!   simulator's;
//! - **light**: 10 Mbit/s through a 100 Mbit/s, 10 ms link: each packet's one-way delay less the
//!   link's delay and transmission time (the emulator's own overhead, from the sender's stamp
//!   to the receiving kernel's, and to the receiving thread) and the link's departure error are
//!   printed with the load, not judged: issue
//!   21's goal of a p99 ≤ 100 µs is not met beside the overload on the 2-core VM we test on,
//!   quiet or loaded, and only on a quiet one for the light path alone (docs/VALIDATION.md has
//!   the numbers); a test must not pass or fail by the machine's idle states; what is asserted
//!   is that no packet arrives earlier than the links allow;
//! - **lossy**: 5 Mbit/s through a 10 Mbit/s link with Bernoulli loss of 1 %: the fraction lost
//!   within its 99 % confidence interval.
//!
//! The rates and drops are properties of the link model on logical time, so they hold however
//! late the forwarder wakes (as long as it keeps up); only the delay excess depends on the
//! machine. Both devices must deliver wire-size packets and lose none before the emulator.
//! Skips, saying why, where the emulator cannot run. About 9 s each.

use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use fairstream_emu::{DeviceKind, EmuOptions};

static ALONE: Mutex<()> = Mutex::new(());

const SCENARIO: &str = r#"
name = "link-accuracy"
duration = "4s"
[topology]
nodes = ["a0", "b0", "a1", "b1", "a2", "b2"]
[[topology.link]]
between = ["a0", "b0"]
rate = "100Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = "5000 packets" }
[[topology.link]]
between = ["a1", "b1"]
rate = "100Mbps"
delay = "10ms"
[[topology.link]]
between = ["a2", "b2"]
rate = "10Mbps"
delay = "10ms"
loss = { kind = "bernoulli", per = "1%" }
[[flow]]
name = "overload"
protocol = "cbr"
rate = "150Mbps"
packet_size = "1500B"
from = "a0"
to = "b0"
[[flow]]
name = "light"
protocol = "cbr"
rate = "10Mbps"
packet_size = "1500B"
from = "a1"
to = "b1"
[[flow]]
name = "lossy"
protocol = "cbr"
rate = "5Mbps"
packet_size = "1500B"
from = "a2"
to = "b2"
"#;

#[test]
fn emulated_links_carry_what_the_model_says_through_veth_pairs() {
    links_carry_what_the_model_says(DeviceKind::Veth);
}

#[test]
fn emulated_links_carry_what_the_model_says_through_tun_devices() {
    links_carry_what_the_model_says(DeviceKind::Tun);
}

fn links_carry_what_the_model_says(device: DeviceKind) {
    let options = EmuOptions { device };
    if let Err(e) = fairstream_emu::preflight_with(&options) {
        eprintln!("skipped: {e}");
        return;
    }
    let scenario = fairstream_scenario::load(SCENARIO, "link-accuracy.toml", None).unwrap();
    let sim = fairstream_sim::Simulator::new(scenario.network.clone())
        .unwrap()
        .run();
    let emu = emulate_alone(&scenario, &options);
    let load = fairstream_emu::run::load_average();
    let out = &emu.output;
    eprintln!("load average {load:?}; emu.json: {}", emu.emu);
    assert_eq!(emu.emu["device"], device.name());
    assert_eq!(
        emu.emu["device_drops"], 0,
        "no packet lost before the emulator"
    );
    assert!(
        emu.emu["largest_packet_bytes"].as_u64().unwrap() <= 1500,
        "wire-size packets"
    );

    // Overload: the link busy all the time from the first packet, at its rate.
    let link = &out.links[0];
    let secs = out.duration.as_secs_f64();
    let rate = (link.bytes_forwarded * 8) as f64 / secs;
    assert!(
        (rate / 100e6 - 1.0).abs() < 0.01,
        "forwarded at {rate} bit/s, not 100 Mbit/s within 1 %"
    );
    let (emu_drops, sim_drops) = (
        link.packets_dropped as f64,
        sim.links[0].packets_dropped as f64,
    );
    assert!(
        (emu_drops / sim_drops - 1.0).abs() < 0.02,
        "{emu_drops} drops emulated, {sim_drops} simulated"
    );

    eprintln!(
        "overload: forwarded {:.4} Mbit/s; drops emulated {emu_drops} simulated {sim_drops} ({:+.3} %)",
        rate / 1e6,
        (emu_drops / sim_drops - 1.0) * 100.0
    );

    // Lossy: Bernoulli 1 % within its 99 % confidence interval.
    let lossy = &out.links[4];
    let n = lossy.packets_forwarded as f64;
    let p = lossy.packets_corrupted as f64 / n;
    let half = 2.576 * (0.01 * 0.99 / n).sqrt();
    assert!((p - 0.01).abs() <= half, "lost {p} of {n}, 1 % ± {half}");
    eprintln!(
        "lossy: lost {:.4} % of {n} (1 % ± {:.4} %)",
        p * 100.0,
        half * 100.0
    );

    print_light_excess(&emu, 1, device, "beside the overload");

    // The light path again, alone in its emulation: what the emulator adds when only its own
    // work and one sender's share the machine.
    let light =
        fairstream_scenario::load(&light_alone_scenario(), "link-accuracy-light.toml", None)
            .unwrap();
    let emu = emulate_alone(&light, &options);
    print_light_excess(&emu, 0, device, "alone");
}

/// Runs one emulation, never two at once: the tests measure the machine, not each other.
fn emulate_alone(
    scenario: &fairstream_scenario::Scenario,
    options: &EmuOptions,
) -> fairstream_emu::EmuReport {
    let stop = AtomicBool::new(false);
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    fairstream_emu::emulate_with(scenario, options, &stop, &mut |_| {}).unwrap()
}

/// The test's scenario with only the light path and its flow.
fn light_alone_scenario() -> String {
    let (head, rest) = SCENARIO.split_once("[[topology.link]]").unwrap();
    let links: Vec<&str> = rest.split("[[topology.link]]").collect();
    let flows: Vec<&str> = SCENARIO.split("[[flow]]").skip(1).collect();
    let head = head.replace(
        r#"nodes = ["a0", "b0", "a1", "b1", "a2", "b2"]"#,
        r#"nodes = ["a1", "b1"]"#,
    );
    let link = links[1].split("[[flow]]").next().unwrap();
    format!("{head}[[topology.link]]{link}[[flow]]{}", flows[1])
}

/// Prints (and checks the sanity of) flow `flow`'s one-way delay excess, the emulator's own
/// overhead on each packet: to the receiving host's kernel (when the packet arrived) and to the
/// receiving thread (when it woke); with its last link's departure error.
fn print_light_excess(
    emu: &fairstream_emu::EmuReport,
    flow: usize,
    device: DeviceKind,
    setting: &str,
) {
    let load = fairstream_emu::run::load_average();
    // Each path is one topology link, two emulated links (there and back): flow `i` crosses the
    // first of path `i`'s.
    let link = &emu.emu["links"][2 * flow];
    let rx = &emu.emu["flows"][flow]["receiver"];
    let excess = &rx["one_way_delay_excess"];
    let app = &rx["one_way_delay_excess_application"];
    let p99 = excess["p99_us"].as_f64().unwrap();
    assert!(excess["packets"].as_u64().unwrap() > 3000, "{excess}");
    assert_eq!(excess["earlier_than_the_links_allow"], 0, "{excess}");
    assert_eq!(
        excess["kernel_stamps"], rx["datagrams_received"],
        "every datagram carries the kernel's receive stamp: {excess}"
    );
    eprintln!(
        "light {setting} ({}, load {load:?}): one-way delay excess p50 {} µs, p90 {} µs, p99 {p99} µs (to the receiving thread: p50 {} µs, p99 {} µs); the link's departure error p50 {} µs, p99 {} µs (issue 21's goal: p99 100 µs, not judged here)",
        device.name(),
        excess["p50_us"],
        excess["p90_us"],
        app["p50_us"],
        app["p99_us"],
        link["departure_error_p50_us"],
        link["departure_error_p99_us"]
    );
}
