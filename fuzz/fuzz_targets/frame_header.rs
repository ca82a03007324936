//! Fuzzes `wire::FrameHeader::decode`, the check a receiver makes before anything else.
#![no_main]

use fairstream_proto::wire::FrameHeader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = FrameHeader::decode(data) {
        assert!(data.len() >= fairstream_proto::wire::FRAME_HEADER_LEN);
        assert_eq!(data[3], h.packet_type as u8);
    }
});
