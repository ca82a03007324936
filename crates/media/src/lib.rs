//! The media model: what a streaming application sends, before any transport.
//!
//! - [`frame`]: frame types (I, P, B), frames, and GOP patterns such as `IBBPBBPBB`;
//! - [`trace`]: frame traces: synthetic MPEG-1 GOPs (pattern, frame rate, I/P/B sizes, optional
//!   size noise from a seeded [`RngStream`](fairstream_core::RngStream)) and the errors a trace
//!   can have;
//! - [`csv`]: traces read from CSV files (`time,type,bytes`), with errors naming file and line;
//! - [`ffprobe`]: traces imported from a real video file (frame types, sizes and times) through
//!   FFmpeg's `ffprobe`, with errors naming the file (and saying what to install without it);
//! - [`scale`]: the five media scales of paper 001 (MM_APP / MPEG_APP) and which frames each
//!   scale sends (the paper's Table 2, for both of its GOP patterns), with the rate of each scale;
//! - [`decode`]: which frames are decodable given the I/P/B dependencies and what arrived;
//! - [`encoding`]: multi-rate encodings (levels, each a bit rate and a frame trace);
//! - [`playout`]: a player's playout buffer: start-up buffering, playout, stalls and their
//!   refill, late frames, decodable frames and inter-arrival jitter (paper 000, Section II).
//!
//! Frame sizes are the encoded frame's bytes (the payload a transport carries); times are
//! offsets from the trace's start. Nothing here allocates per packet: endpoints hold a trace
//! and walk it.
//!
//! ```
//! use fairstream_core::RngStream;
//! use fairstream_media::{FrameTrace, SyntheticGop, scale};
//! // Paper 001's example MPEG-1 stream: 30 frame/s, IBBPBBPBB, I 11000 B, P 8000 B, B 2000 B.
//! let trace = FrameTrace::synthetic(&SyntheticGop::paper001(), 1, &mut RngStream::from_seed(1));
//! let rates = scale::scale_rates(&trace);
//! assert_eq!(rates[4].as_bps(), 1_040_000); // all frames: 39 000 B per 0.3 s
//! assert_eq!(rates[0].as_bps(), 293_333); // I frames only
//! ```

pub mod csv;
pub mod decode;
pub mod encoding;
pub mod ffprobe;
pub mod frame;
pub mod playout;
pub mod scale;
pub mod trace;

pub use encoding::{Encoding, EncodingError, Level};
pub use frame::{Frame, FrameType, GopPattern, PatternError};
pub use playout::{PlayState, Playout, PlayoutConfig, PlayoutStats};
pub use trace::{FrameTrace, SyntheticGop, TraceError, TraceProblem};
