//! Tables as Arrow IPC streams: one table's stream (what crosses from a worker process to the
//! one that asked for a run, and what the run cache keeps of a table), and many runs' streams
//! joined into a few (how a dataset reads a thousand small runs' tables without a thousand
//! reads).

use std::io::Cursor;

use arrow_array::RecordBatch;
use arrow_ipc::CompressionType;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow_schema::{ArrowError, SchemaRef};

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

/// Streams joined by [`join_streams`]: one uncompressed stream, and how many rows each of the
/// inputs it holds had, in input order.
#[derive(Debug)]
pub struct Joined {
    /// The joined stream: the inputs' batches one after the other.
    pub stream: Vec<u8>,
    /// Rows of each input, in order (zero for an input with no rows).
    pub rows: Vec<usize>,
}

/// The streams, in order, joined: consecutive streams of the same schema become one stream (a
/// stream of another schema starts the next), so that a sweep's runs, which share their
/// schemas, are read as one table each. Compressed inputs are read too; the output is not
/// compressed (it is read at once, in memory). An input that is not an Arrow IPC stream is an
/// error naming its position.
pub fn join_streams<'a>(
    streams: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Vec<Joined>, String> {
    let mut out = Vec::new();
    let mut current: Option<(SchemaRef, StreamWriter<Vec<u8>>, Vec<usize>)> = None;
    for (i, bytes) in streams.into_iter().enumerate() {
        let bad = |e: ArrowError| format!("stream {i}: {e}");
        let reader = StreamReader::try_new(Cursor::new(bytes), None).map_err(bad)?;
        let schema = reader.schema();
        let (_, writer, rows) = match current.take() {
            Some(same) if same.0 == schema => current.insert(same),
            other => {
                if let Some(done) = other {
                    out.push(finish(done)?);
                }
                let writer = StreamWriter::try_new(Vec::new(), &schema).map_err(bad)?;
                current.insert((schema, writer, Vec::new()))
            }
        };
        let mut n = 0;
        for batch in reader {
            let batch = batch.map_err(bad)?;
            n += batch.num_rows();
            writer.write(&batch).map_err(bad)?;
        }
        rows.push(n);
    }
    if let Some(done) = current {
        out.push(finish(done)?);
    }
    Ok(out)
}

/// A joined stream, ended.
fn finish(
    (_, writer, rows): (SchemaRef, StreamWriter<Vec<u8>>, Vec<usize>),
) -> Result<Joined, String> {
    Ok(Joined {
        stream: writer.into_inner().map_err(text)?,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, UInt32Array};

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
    fn no_streams_join_into_none_and_garbage_is_named() {
        assert!(join_streams(std::iter::empty()).unwrap().is_empty());
        let good = stream(&batch(&[1]), false).unwrap();
        let err = join_streams([good.as_slice(), b"PAR1 not a stream".as_slice()]).unwrap_err();
        assert!(err.starts_with("stream 1:"), "{err}");
    }
}
