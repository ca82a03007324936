//! The forwarder allocates nothing per packet in steady state: a counting global allocator
//! (`stats_alloc`) watches `forward::Core` carry a flow's packets (a CBR overload through a
//! drop-tail bottleneck, with Bernoulli loss on the way, and ACK-sized packets back) after a
//! warm-up, on logical time, with no device: what the I/O loop does per packet, minus the
//! system calls.

use std::alloc::System;

use fairstream_core::{Duration, Instant};
use fairstream_emu::forward::Core;
use fairstream_emu::plan::{FlowPlan, Plan};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const SCENARIO: &str = r#"
name = "alloc"
duration = "10s"
[topology]
kind = "dumbbell"
hosts = 1
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "red", limit = "50 packets" }, loss = { kind = "bernoulli", per = 0.01 } }
[[flow]]
protocol = "linux-tcp"
from = "left0"
to = "right0"
"#;

fn packet(buf: &mut [u8], len: usize, sport: u16, dport: u16) {
    buf[..len].fill(0);
    buf[0] = 0x45;
    buf[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    buf[9] = 6;
    buf[20..22].copy_from_slice(&sport.to_be_bytes());
    buf[22..24].copy_from_slice(&dport.to_be_bytes());
}

#[test]
fn the_forwarder_allocates_nothing_per_packet_in_steady_state() {
    let scenario = fairstream_scenario::load(SCENARIO, "alloc.toml", None).unwrap();
    let plan = Plan::new(&scenario).unwrap();
    let mut core = Core::new(&plan);
    let (data, back) = (FlowPlan::recv_port(0), FlowPlan::send_port(0));
    let mut delivered = 0u64;
    let mut t = Instant::ZERO;
    // 12 Mbit/s of 1500-byte packets into 10 Mbit/s (1 ms apart), an ACK back for each.
    let step = |core: &mut Core, t: Instant, delivered: &mut u64| {
        let now = || t;
        let mut deliver = |_host: u32, _bytes: &[u8]| {
            *delivered += 1;
            true
        };
        core.process_due(t, &now, &mut deliver);
        let (slot, buf) = core.slot();
        packet(buf, 1500, back, data);
        core.ingest(0, slot, 1500, t);
        let (slot, buf) = core.slot();
        packet(buf, 52, data, back);
        core.ingest(1, slot, 52, t);
    };
    let gap = Duration::from_micros(1000);
    for _ in 0..3000 {
        step(&mut core, t, &mut delivered);
        t += gap;
    }
    let before = delivered;
    let region = Region::new(GLOBAL);
    for _ in 0..3000 {
        step(&mut core, t, &mut delivered);
        t += gap;
    }
    let stats = region.change();
    assert!(
        delivered - before > 4000,
        "packets went through: {}",
        delivered - before
    );
    assert_eq!(
        (stats.allocations, stats.reallocations),
        (0, 0),
        "{stats:?} over {} packets",
        delivered - before
    );
}
