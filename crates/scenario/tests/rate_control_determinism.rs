//! The rate-based protocols are deterministic too: TFRC, TFRC Wireless (ZigZag), MULTFRC and
//! VTP sharing a lossy RED bottleneck with random starts and random ties give bit-identical
//! results for one seed and different ones for another.

use fairstream_records::RunOutput;
use fairstream_scenario::load;
use fairstream_sim::Simulator;

const SCENARIO: &str = r#"name = "rate-control-determinism"
duration = "20s"
[topology]
kind = "dumbbell"
hosts = 4
access = { rate = "100Mbps", delay = "5ms" }
bottleneck = { rate = "8Mbps", delay = "20ms", queue = { kind = "red" }, loss = { kind = "bernoulli", per = "1%" } }
[[flow]]
protocol = "tfrc"
from = "left0"
to = "right0"
start = { uniform = ["0s", "1s"] }
[[flow]]
protocol = "tfrc-wireless"
lda = "zigzag"
from = "left1"
to = "right1"
start = { uniform = ["0s", "1s"] }
[[flow]]
protocol = "multfrc"
from = "left2"
to = "right2"
start = { uniform = ["0s", "1s"] }
[[flow]]
protocol = "vtp"
from = "left3"
to = "right3"
start = { uniform = ["0s", "1s"] }
[record]
metrics = true
[engine]
ties = "random"
"#;

fn run(seed: Option<u64>) -> RunOutput {
    Simulator::new(load(SCENARIO, "det.toml", seed).unwrap().network)
        .unwrap()
        .run()
}

fn fingerprint(o: &RunOutput) -> (u64, Vec<u64>, Vec<u64>, Vec<&'static str>) {
    (
        o.events,
        o.flow_series.bytes_delivered.clone(),
        o.metrics.value.iter().map(|x| x.to_bits()).collect(),
        o.metrics.metric.clone(),
    )
}

#[test]
fn same_seed_same_bits_other_seed_other_results() {
    let (a, b) = (run(None), run(None));
    assert!(
        a.events > 50_000,
        "too small to mean anything: {}",
        a.events
    );
    for name in ["p", "achieved_rate", "n", "spike"] {
        assert!(a.metrics.metric.contains(&name), "no {name} records");
    }
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let c = run(Some(99));
    assert_ne!(fingerprint(&a).1, fingerprint(&c).1);
}
