//! A pcap capture is written to its file as the run goes, not held until the end: half-way
//! through a run the file already holds most of what was captured so far, and what the run
//! returns is that file, which goes away when the output is dropped.

use fairstream_core::{Bitrate, DataSize, Duration, Instant, LinkId};
use fairstream_proto::ProtocolConfig;
use fairstream_proto::cbr::CbrConfig;
use fairstream_sim::{FlowSpec, LinkSpec, Network, Simulator};

#[test]
fn captures_grow_on_disk_during_the_run() {
    let dir = std::env::temp_dir().join(format!("fairstream-capture-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut net = Network::new(Duration::from_secs(2), 1);
    let a = net.add_node("a");
    let b = net.add_node("b");
    net.add_link(LinkSpec::new(
        a,
        b,
        Bitrate::mbps(10),
        Duration::from_millis(5),
    ));
    let cbr = CbrConfig {
        rate: Bitrate::mbps(8).into(),
        packet_size: DataSize::bytes(1000),
        ..Default::default()
    };
    net.add_flow(FlowSpec::new("udp", a, b, ProtocolConfig::Cbr(cbr)))
        .expect("a and b are joined");
    net.record.pcap.push(LinkId(0));
    let mut sim = Simulator::with_capture_dir(net, &dir).unwrap();
    let files = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    };
    sim.run_until(Instant::from_nanos(1_000_000_000));
    let during = files();
    assert_eq!(during.len(), 1, "{during:?}");
    // 1000 packets a second of 16 + 28 bytes each: most of 44 kB are on disk already.
    let half = std::fs::metadata(&during[0]).unwrap().len();
    assert!(half > 30_000, "{half} bytes on disk half-way");
    let out = sim.run();
    let (link, file) = &out.pcaps[0];
    assert_eq!(link, "a->b");
    let whole = std::fs::metadata(file.path()).unwrap().len();
    assert_eq!(whole, 24 + 2001 * (16 + 28), "packets at 0, 1 ms, …, 2 s");
    assert!(whole > half);
    drop(out);
    assert!(files().is_empty(), "the capture is removed with the output");
    std::fs::remove_dir(&dir).unwrap();
}
