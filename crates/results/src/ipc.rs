//! Tables as Arrow IPC streams: one table's stream (what crosses from a worker process to the
//! one that asked for a run, and what the run cache keeps of a table), and many runs' streams
//! joined into a few (how a dataset reads a thousand small runs' tables without a thousand
//! reads).

use arrow_array::RecordBatch;
use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow_ipc::{CompressionType, MessageHeader, root_as_message};
use arrow_schema::ArrowError;

fn text(e: ArrowError) -> String {
    e.to_string()
}

/// `batch` as one Arrow IPC stream; with `compressed`, its buffers zstd-compressed (several times
/// smaller for a long series, and read several times faster than Parquet).
pub fn stream(batch: &RecordBatch, compressed: bool) -> Result<Vec<u8>, String> {
    let options = IpcWriteOptions::default()
        .try_with_compression(compressed.then_some(CompressionType::ZSTD))
        .map_err(text)?;
    let mut writer =
        StreamWriter::try_new_with_options(Vec::new(), &batch.schema(), options).map_err(text)?;
    writer.write(batch).map_err(text)?;
    writer.into_inner().map_err(text)
}

/// Streams joined by [`join_streams`]: one stream, and how many rows each of the inputs it holds
/// had, in input order.
#[derive(Debug)]
pub struct Joined {
    /// The joined stream: the inputs' batches one after the other.
    pub stream: Vec<u8>,
    /// Rows of each input, in order (zero for an input with no rows).
    pub rows: Vec<usize>,
}

/// The streams, in order, joined: consecutive streams whose schema messages are the same bytes
/// become one stream (a stream of another schema starts the next), so that a sweep's runs, which
/// share their schemas, are read as one table each. Nothing is decoded: the joined stream is the
/// first one's schema message, then every input's record batch messages as they are (a
/// compressed one stays compressed), then the end-of-stream marker. An input that is not an
/// Arrow IPC stream of record batches is an error naming its position.
pub fn join_streams<'a>(
    streams: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Vec<Joined>, String> {
    let mut out = Vec::new();
    let mut current: Option<(&'a [u8], Joined)> = None;
    for (i, bytes) in streams.into_iter().enumerate() {
        let bad = |e: String| format!("stream {i}: {e}");
        let mut messages = Messages { bytes, at: 0 };
        // The same schema message as the stream before: known good, not parsed again (for a
        // summary table of many columns, that parse was most of the join).
        match &current {
            Some((schema, _)) if bytes.starts_with(schema) => messages.at = schema.len(),
            _ => {
                let schema = match messages.next_message().map_err(bad)? {
                    Some(m) if m.header == MessageHeader::Schema => m.whole,
                    _ => return Err(bad("no schema first".into())),
                };
                out.extend(current.take().map(|(_, done)| end_of_stream(done)));
                let fresh = Joined {
                    stream: schema.to_vec(),
                    rows: Vec::new(),
                };
                current = Some((schema, fresh));
            }
        }
        let (_, joined) = current.as_mut().expect("a stream under way");
        let mut rows = 0;
        while let Some(m) = messages.next_message().map_err(bad)? {
            if m.header != MessageHeader::RecordBatch {
                return Err(bad(format!("a {:?} message among the batches", m.header)));
            }
            rows += m.rows;
            joined.stream.extend_from_slice(m.whole);
        }
        joined.rows.push(rows);
    }
    out.extend(current.map(|(_, done)| end_of_stream(done)));
    Ok(out)
}

/// `joined` with the end-of-stream marker written.
fn end_of_stream(mut joined: Joined) -> Joined {
    joined.stream.extend_from_slice(&END_OF_STREAM);
    joined
}

/// An IPC stream's end: the continuation marker and a zero length.
const END_OF_STREAM: [u8; 8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];

/// One message of a stream: its kind, its rows (a record batch's) and all its bytes (prefix,
/// metadata and body).
struct Message<'a> {
    header: MessageHeader,
    rows: usize,
    whole: &'a [u8],
}

/// The messages of a stream, read from its framing (`0xFFFFFFFF`, the metadata's length, the
/// metadata, the body) up to the end-of-stream marker or the end of the bytes.
struct Messages<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Messages<'a> {
    fn next_message(&mut self) -> Result<Option<Message<'a>>, String> {
        let rest = &self.bytes[self.at..];
        let word = |k: usize| -> Result<i32, String> {
            let b = rest.get(k..k + 4).ok_or("cut short")?;
            Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        if rest.is_empty() {
            return Ok(None);
        }
        // A stream of the format before 0.15 has no continuation marker.
        let (prefix, length) = match word(0)? {
            -1 => (8, word(4)?),
            n => (4, n),
        };
        if length == 0 {
            return Ok(None);
        }
        let length = usize::try_from(length).map_err(|_| "a negative length".to_string())?;
        let meta = rest
            .get(prefix..prefix + length)
            .ok_or("cut short in a message's metadata")?;
        let message = root_as_message(meta).map_err(|e| e.to_string())?;
        let body = usize::try_from(message.bodyLength()).map_err(|_| "a negative body length")?;
        let size = (prefix + length)
            .checked_add(body)
            .filter(|&n| n <= rest.len())
            .ok_or("cut short in a message's body")?;
        let rows = match message.header_as_record_batch() {
            Some(batch) => usize::try_from(batch.length()).map_err(|_| "a negative row count")?,
            None => 0,
        };
        self.at += size;
        Ok(Some(Message {
            header: message.header_type(),
            rows,
            whole: &rest[..size],
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, UInt32Array};
    use arrow_ipc::reader::StreamReader;

    use super::*;

    fn batch(ids: &[u32]) -> RecordBatch {
        let x: Vec<f64> = ids.iter().map(|&i| f64::from(i) / 2.0).collect();
        RecordBatch::try_from_iter([
            ("id", Arc::new(UInt32Array::from(ids.to_vec())) as ArrayRef),
            ("x", Arc::new(Float64Array::from(x)) as ArrayRef),
        ])
        .unwrap()
    }

    fn other(ids: &[u32]) -> RecordBatch {
        RecordBatch::try_from_iter([("id", Arc::new(UInt32Array::from(ids.to_vec())) as ArrayRef)])
            .unwrap()
    }

    fn read(bytes: &[u8]) -> Vec<RecordBatch> {
        StreamReader::try_new(Cursor::new(bytes), None)
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn streams_of_one_schema_join_into_one_in_order() {
        let parts = [batch(&[1, 2]), batch(&[]), batch(&[3])];
        let streams: Vec<Vec<u8>> = parts
            .iter()
            .enumerate()
            .map(|(i, b)| stream(b, i == 2).unwrap()) // a compressed one among them
            .collect();
        let joined = join_streams(streams.iter().map(Vec::as_slice)).unwrap();
        assert_eq!(joined.len(), 1);
        assert_eq!(joined[0].rows, vec![2, 0, 1]);
        let back = read(&joined[0].stream);
        let ids: Vec<u32> = back
            .iter()
            .flat_map(|b| {
                let a = b.column(0).as_any().downcast_ref::<UInt32Array>().unwrap();
                a.values().to_vec()
            })
            .collect();
        assert_eq!(ids, vec![1, 2, 3]);
        assert_eq!(back[0], parts[0]);
    }

    #[test]
    fn a_change_of_schema_starts_another_stream() {
        let streams = [
            stream(&batch(&[1]), false).unwrap(),
            stream(&other(&[2, 3]), false).unwrap(),
            stream(&other(&[4]), false).unwrap(),
            stream(&batch(&[5]), false).unwrap(),
        ];
        let joined = join_streams(streams.iter().map(Vec::as_slice)).unwrap();
        let rows: Vec<Vec<usize>> = joined.iter().map(|j| j.rows.clone()).collect();
        assert_eq!(rows, vec![vec![1], vec![2, 1], vec![1]]);
        assert_eq!(read(&joined[1].stream)[1], other(&[4]));
    }

    #[test]
    fn a_stream_cut_short_or_damaged_is_an_error_or_read_never_a_panic() {
        let good = stream(&batch(&[1, 2, 3]), false).unwrap();
        let packed = stream(&batch(&[4]), true).unwrap();
        // Where its messages end (the schema's, the batch's): a cut there leaves whole messages.
        let mut messages = Messages {
            bytes: &good,
            at: 0,
        };
        let mut ends = Vec::new();
        while messages.next_message().unwrap().is_some() {
            ends.push(messages.at);
        }
        assert_eq!(ends.len(), 2);
        for cut in 0..good.len() {
            match join_streams([packed.as_slice(), &good[..cut]]) {
                Ok(_) => assert!(cut > 0 && ends.contains(&cut), "cut at {cut} read"),
                Err(e) => {
                    assert!(e.starts_with("stream 1:"), "{e}");
                    assert!(!ends.contains(&cut), "cut at {cut}: {e}");
                }
            }
        }
        for at in 0..good.len() {
            for flip in [0x01, 0x80, 0xFF] {
                let mut bad = good.clone();
                bad[at] ^= flip;
                let _ = join_streams([bad.as_slice(), good.as_slice()]);
            }
        }
    }

    #[test]
    fn no_streams_join_into_none_and_garbage_is_named() {
        assert!(join_streams(std::iter::empty()).unwrap().is_empty());
        let good = stream(&batch(&[1]), false).unwrap();
        let err = join_streams([good.as_slice(), b"PAR1 not a stream".as_slice()]).unwrap_err();
        assert!(err.starts_with("stream 1:"), "{err}");
    }
}
