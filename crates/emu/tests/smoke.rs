//! Smoke: a CBR flow through one emulated link.
use std::sync::atomic::AtomicBool;

#[test]
fn cbr_through_one_link() {
    if let Err(e) = fairstream_emu::preflight() {
        eprintln!("skipped: {e}");
        return;
    }
    let text = r#"
name = "smoke"
duration = "3s"
[topology]
nodes = ["a", "b"]
[[topology.link]]
between = ["a", "b"]
rate = "100Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = "100 packets" }
[[flow]]
protocol = "cbr"
from = "a"
to = "b"
rate = "20Mbps"
packet_size = "1500B"
"#;
    let s = fairstream_scenario::load(text, "smoke.toml", None).unwrap();
    let stop = AtomicBool::new(false);
    let r = fairstream_emu::emulate(&s, &stop, &mut |l| eprintln!("{l:?}")).unwrap();
    eprintln!("{}", serde_json::to_string_pretty(&r.emu).unwrap());
    eprintln!("{:?}", r.output.flows);
}
