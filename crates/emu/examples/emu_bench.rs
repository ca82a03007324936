//! The emulator's speed (docs/PERFORMANCE.md, "The emulator"); a benchmark, not a test:
//!
//! - `speed [SECONDS [RATE]]`: how fast one emulated link forwards 1500-byte packets: one
//!   Linux cubic flow through a 1 ms link of RATE (10 Gbit/s by default, so that the emulator,
//!   not the link model, is the limit); prints Gbit/s and packets/s delivered, the forwarder's CPU per packet and the
//!   departure error;
//! - `paths N [SECONDS]`: N independent 10 Mbit/s dumbbells (RTT 20 ms, one Linux cubic flow
//!   each) at once; prints the departure error's p99 over the bottlenecks and the packets
//!   forwarded late.
//!
//! `cargo run --release -p fairstream-emu --example emu_bench -- speed 10` (as root); the
//! hosts' devices are veth pairs, or TUN devices with `FAIRSTREAM_EMU_DEVICE=tun`.

use std::sync::atomic::AtomicBool;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = fairstream_emu::EmuOptions {
        device: std::env::var("FAIRSTREAM_EMU_DEVICE")
            .map(|d| fairstream_emu::DeviceKind::parse(&d).expect("veth or tun"))
            .unwrap_or_default(),
    };
    if let Err(e) = fairstream_emu::preflight_with(&options) {
        eprintln!("{e}");
        std::process::exit(2);
    }
    let text = match args.first().map(String::as_str) {
        Some("paths") => {
            let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4);
            let secs: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
            paths(n, secs)
        }
        _ => speed(
            args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10),
            args.get(2).map_or("10Gbps", String::as_str),
        ),
    };
    let scenario = fairstream_scenario::load(&text, "bench.toml", None).expect("a valid scenario");
    let stop = AtomicBool::new(false);
    let load = fairstream_emu::run::load_average();
    let r = fairstream_emu::emulate_with(&scenario, &options, &stop, &mut |_| {})
        .expect("the emulation runs");
    let out = &r.output;
    let d = out.duration.as_secs_f64();
    let delivered: u64 = out.flows.iter().map(|f| f.bytes_delivered).sum();
    let packets: u64 = out.flows.iter().map(|f| f.packets_delivered).sum();
    let cpu = r.emu["forwarder_cpu_s"].as_f64().unwrap_or(f64::NAN);
    let read = r.emu["packets_read"].as_u64().unwrap_or(0);
    // The departure errors are the last hops' (the links into a host).
    let last_hops: Vec<&serde_json::Value> = r.emu["links"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter(|l| l["packets"].as_u64().unwrap_or(0) > 0)
                .collect()
        })
        .unwrap_or_default();
    let worst_p99 = last_hops
        .iter()
        .map(|l| l["departure_error_p99_us"].as_f64().unwrap_or(0.0))
        .fold(0.0, f64::max);
    println!(
        "load before {load:?}; {:.3} Gbit/s, {:.0} packets/s delivered over {d:.1} s; forwarder CPU \
         {cpu:.2} s = {:.2} us per packet read ({read} read); packets forwarded late {}; worst \
         last-hop departure error p99 {worst_p99} us; realtime {}; device {} (batch window {} us, \
         dropped before the emulator {}, entered late {})",
        delivered as f64 * 8.0 / d / 1e9,
        packets as f64 / d,
        cpu / read.max(1) as f64 * 1e6,
        r.emu["packets_forwarded_late"],
        r.emu["forwarder_realtime"],
        r.emu["device"],
        r.emu["batch_window_us"],
        r.emu["device_drops"],
        r.emu["entered_late"]["packets"],
    );
    for l in r.emu["links"].as_array().into_iter().flatten() {
        if l["packets"].as_u64().unwrap_or(0) > 0 {
            println!(
                "  {}: {} packets, departure error p50 {} p99 {} p999 {} max {} us",
                l["name"],
                l["packets"],
                l["departure_error_p50_us"],
                l["departure_error_p99_us"],
                l["departure_error_p999_us"],
                l["departure_error_max_us"]
            );
        }
    }
}

fn speed(secs: u64, rate: &str) -> String {
    format!(
        r#"
name = "emu-speed"
duration = "{secs}s"
[topology]
nodes = ["a", "b"]
[[topology.link]]
between = ["a", "b"]
rate = "{rate}"
delay = "1ms"
queue = {{ kind = "droptail", limit = "10000 packets" }}
[[flow]]
protocol = "linux-tcp"
congestion = "cubic"
from = "a"
to = "b"
"#
    )
}

fn paths(n: usize, secs: u64) -> String {
    let mut s = format!(
        "name = \"emu-paths\"\nduration = \"{secs}s\"\n[topology]\nnodes = [{}]\n",
        (0..n)
            .map(|k| format!("\"p{k}_s\", \"p{k}_ra\", \"p{k}_rb\", \"p{k}_d\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for k in 0..n {
        for (a, b, rate, delay, q) in [
            (format!("p{k}_s"), format!("p{k}_ra"), "100Mbps", "1ms", 100),
            (format!("p{k}_ra"), format!("p{k}_rb"), "10Mbps", "8ms", 17),
            (format!("p{k}_rb"), format!("p{k}_d"), "100Mbps", "1ms", 100),
        ] {
            s += &format!(
                "[[topology.link]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{rate}\"\ndelay = \"{delay}\"\n\
                 queue = {{ kind = \"droptail\", limit = \"{q} packets\" }}\n"
            );
        }
    }
    for k in 0..n {
        s += &format!(
            "[[flow]]\nname = \"p{k}\"\nprotocol = \"linux-tcp\"\ncongestion = \"cubic\"\n\
             from = \"p{k}_s\"\nto = \"p{k}_d\"\n"
        );
    }
    s
}
