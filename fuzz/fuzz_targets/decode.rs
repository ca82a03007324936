//! Fuzzes `wire::decode`: any bytes decode to a frame or a typed error, never a panic; and a
//! frame that decodes encodes back to a datagram that decodes to the same frame.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() <= 65_536 {
        fairstream_proto::wire::check_decode_property(data);
    }
});
