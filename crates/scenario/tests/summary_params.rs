//! The flow and link summaries carry the parameters the run resolved, as typed values: what a
//! reader would otherwise recover from the scenario's text and a default of its own.

use fairstream_scenario::load;
use fairstream_sim::Simulator;

const SCENARIO: &str = r#"
name = "typed"
duration = "1s"
[topology]
nodes = ["a", "b"]
[[topology.link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "5ms"
schedule = [{ at = "0.5s", rate = "4Mbps" }]
queue = { kind = "tbf", rate = "8Mbps", burst = "10KB", limit = "30KB" }
loss = { per = 0.01 }
[[flow]]
name = "tcp"
protocol = "tcp"
from = "a"
to = "b"
[[flow]]
name = "cbr"
protocol = "cbr"
rate = "1Mbps"
from = "a"
to = "b"
[[flow]]
name = "tfrc"
protocol = "tfrc"
from = "a"
to = "b"
[[flow]]
name = "tfrc-ns2"
protocol = "tfrc"
preset = "ns2"
from = "a"
to = "b"
[[flow]]
name = "vtp"
protocol = "vtp"
from = "a"
to = "b"
"#;

#[test]
fn packet_sizes_and_link_parameters_are_typed_columns() {
    let s = load(SCENARIO, "typed.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let out = Simulator::new(s.network).unwrap().run();
    let sizes: Vec<(&str, u64, u64, u64)> = out
        .flows
        .iter()
        .map(|f| {
            let sum = f.packet.headers.as_bytes() + f.packet.payload().as_bytes();
            assert_eq!(sum, f.packet.size.as_bytes(), "{}", f.name);
            (
                f.name.as_str(),
                f.packet.size.as_bytes(),
                f.packet.headers.as_bytes(),
                f.packet.payload().as_bytes(),
            )
        })
        .collect();
    assert_eq!(
        sizes,
        [
            // ns-2's 1000 B of payload and 40 B of IPv4 + TCP.
            ("tcp", 1040, 40, 1000),
            // IPv4 + UDP.
            ("cbr", 1000, 28, 972),
            // IPv4 + UDP + the wire's 8-byte frame + TFRC's 16 bytes of fields.
            ("tfrc", 1000, 52, 948),
            // ns-2's agent adds its 32-byte header to the packet.
            ("tfrc-ns2", 1032, 32, 1000),
            // IPv4 + UDP + frame + VTP's 12 bytes.
            ("vtp", 1000, 48, 952),
        ]
    );
    let ab = &out.links[0];
    assert_eq!((ab.rate_bps, ab.delay_s, ab.loss_rate), (10e6, 0.005, 0.01));
    assert_eq!(ab.schedule, [(500_000_000, 4_000_000)]);
    assert_eq!(
        (ab.queue_kind, ab.queue_limit_packets, ab.queue_limit_bytes),
        ("tbf", None, Some(30_000))
    );
    let names: Vec<&str> = ab.queue_params.iter().map(|(c, _)| c.name).collect();
    assert_eq!(names, ["tbf_rate_bps", "tbf_burst_bytes"]);
}
