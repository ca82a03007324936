//! The fuzz targets' bounded run inside the test suite (stable toolchain): the minimised
//! corpora in `fuzz/corpus/` replayed through the decoders, then 300 000 mutations of them
//! and random datagrams, each checked with the fuzz target's own property.

use std::path::Path;

use fairstream_core::RngStream;
use fairstream_proto::wire::{FrameHeader, PacketType, check_decode_property, decode};

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("reads"))
        .collect()
}

/// A copy of `seed` with a few random bytes changed, cut or appended.
fn mutate(seed: &[u8], rng: &mut RngStream) -> Vec<u8> {
    let mut d = seed.to_vec();
    for _ in 0..1 + rng.next_u64() % 4 {
        let r = rng.next_u64();
        match r % 4 {
            0 if !d.is_empty() => {
                let i = (r >> 8) as usize % d.len();
                d[i] = (r >> 32) as u8;
            }
            1 if !d.is_empty() => d.truncate((r >> 8) as usize % d.len()),
            2 => d.push((r >> 8) as u8),
            _ => d.extend_from_slice(&(r >> 16).to_be_bytes()[..(r >> 8) as usize % 8]),
        }
    }
    d
}

#[test]
fn decode_corpus_and_300k_mutations_keep_the_property() {
    let seeds = corpus("decode");
    for t in PacketType::ALL {
        assert!(
            seeds
                .iter()
                .any(|s| s.get(3) == Some(&(t as u8)) && decode(s).is_ok()),
            "the corpus holds a valid datagram of type {t:?}"
        );
    }
    seeds.iter().for_each(|s| check_decode_property(s));
    let mut rng = RngStream::from_seed(11);
    let mut decoded = 0u32;
    for i in 0..300_000u64 {
        let d = if i % 10 == 0 {
            let len = rng.next_u64() as usize % 64;
            (0..len).map(|_| rng.next_u64() as u8).collect()
        } else {
            mutate(&seeds[(i as usize) % seeds.len()], &mut rng)
        };
        check_decode_property(&d);
        decoded += u32::from(decode(&d).is_ok());
    }
    // The mutations must reach past the header checks, or the run proves little.
    assert!(decoded > 10_000, "only {decoded} mutated datagrams decoded");
}

#[test]
fn frame_header_corpus_and_mutations_decode_or_fail_cleanly() {
    let seeds = corpus("frame_header");
    let mut rng = RngStream::from_seed(12);
    for i in 0..100_000usize {
        let d = mutate(&seeds[i % seeds.len()], &mut rng);
        if let Ok(h) = FrameHeader::decode(&d) {
            assert_eq!(d[3], h.packet_type as u8);
        }
    }
}
