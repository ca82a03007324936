//! The forwarder allocates nothing per packet in steady state: a counting global allocator
//! watches `forward::Core` carry a flow's packets (a CBR overload through a drop-tail
//! bottleneck, with Bernoulli loss on the way, and ACK-sized packets back) after a warm-up, on
//! logical time, with no device: what the I/O loop does per packet, minus the system calls.
//!
//! It counts the allocations of the test's own thread only: a process-wide count (as
//! `stats_alloc`'s) also sees the test harness's threads, and once saw 4 allocations of theirs
//! under nextest on a loaded machine.
#![allow(
    unsafe_code,
    reason = "a global allocator is an unsafe impl; it only counts and forwards to System"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use fairstream_core::{Duration, Instant};
use fairstream_emu::forward::{Arrivals, Core};
use fairstream_emu::plan::{FlowPlan, Plan};

thread_local! {
    /// Allocations and reallocations made by this thread.
    static MINE: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// The system allocator, counting each thread's allocations.
struct PerThread;

// SAFETY: every call is forwarded unchanged to `System`; the counters are thread-local cells
// initialised without allocating.
unsafe impl GlobalAlloc for PerThread {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        MINE.with(|c| c.set((c.get().0 + 1, c.get().1)));
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is System's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        MINE.with(|c| c.set((c.get().0, c.get().1 + 1)));
        // SAFETY: the caller's contract is System's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: PerThread = PerThread;

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
    // Batches of 32 packets, and of 512: a stable sort would take its scratch room from the
    // stack for the first and from the heap for the second; the forwarder's sort must do
    // neither.
    for per_ms in [1, 16] {
        let (counts, delivered) = allocations_in_steady_state(per_ms);
        assert!(delivered > 4000, "packets went through: {delivered}");
        assert_eq!(
            counts,
            (0, 0),
            "(allocations, reallocations) over {delivered} packets, read {} at a time",
            32 * per_ms
        );
    }
}

/// (allocations, reallocations) of this thread while `Core` carries 400 batches after a
/// warm-up of 200, and the packets delivered meanwhile: 1500-byte packets at `per_ms` a
/// millisecond into 10 Mbit/s, an ACK back for each, read in batches of 16 ms as a forwarder
/// with stamped devices reads them (every packet of the batch read in the reverse of the order
/// it left its host, and put in order).
fn allocations_in_steady_state(per_ms: u64) -> ((u64, u64), u64) {
    let scenario = fairstream_scenario::load(SCENARIO, "alloc.toml", None).unwrap();
    let plan = Plan::new(&scenario).unwrap();
    let mut core = Core::new(&plan);
    let (data, back) = (FlowPlan::recv_port(0), FlowPlan::send_port(0));
    let mut delivered = 0u64;
    let mut t = Instant::ZERO;
    const BATCH: u64 = 16;
    let each = BATCH * per_ms;
    let mut arrivals = Arrivals::with_capacity(2 * each as usize);
    let mut step = |core: &mut Core, t: Instant, delivered: &mut u64| {
        let now = || t + Duration::from_millis(BATCH);
        let mut deliver = |_host: u32, _bytes: &[u8]| {
            *delivered += 1;
            true
        };
        for k in (0..each).rev() {
            let left = t + Duration::from_micros(k * 1000 / per_ms);
            let (slot, buf) = core.slot();
            packet(buf, 52, data, back);
            arrivals.push(1, slot, 52, left + Duration::from_micros(5));
            let (slot, buf) = core.slot();
            packet(buf, 1500, back, data);
            arrivals.push(0, slot, 1500, left);
        }
        core.ingest_all(&mut arrivals, &now, &mut deliver);
        core.process_due(now(), &now, &mut deliver);
    };
    let gap = Duration::from_millis(BATCH);
    for _ in 0..200 {
        step(&mut core, t, &mut delivered);
        t += gap;
    }
    let before = delivered;
    let before_counts = MINE.with(Cell::get);
    for _ in 0..200 {
        step(&mut core, t, &mut delivered);
        t += gap;
    }
    let after_counts = MINE.with(Cell::get);
    (
        (
            after_counts.0 - before_counts.0,
            after_counts.1 - before_counts.1,
        ),
        delivered - before,
    )
}
