//! AAL5 on bytes: segmentation of a PDU into 48-byte cell payloads and reassembly with the
//! trailer's checks (ITU-T I.363.5).
//!
//! The simulator carries cells without their bytes (the count arithmetic of [`super::cell`]
//! decides whether a PDU arrived whole); this module is the same framing on real bytes, so that
//! the arithmetic is checked against what AAL5 does: the PDU, padding to a multiple of 48 with the
//! 8-byte trailer (CPCS-UU 0, CPI 0, a 16-bit length, a CRC-32 over everything before it), cut
//! into cells, the last marked end-of-PDU. The reassembler gathers cell payloads until an
//! end-of-PDU cell, then checks the length and the CRC: a PDU that lost a cell fails one of them
//! and is discarded whole.

use crc::{CRC_32_BZIP2, Crc};

use super::cell::{AAL5_TRAILER, CELL_PAYLOAD, cells_for_pdu};

/// AAL5's CRC-32: the generator of I.363.5, bits most significant first, preset to ones and
/// complemented (the parameters known as CRC-32/BZIP2).
const AAL5_CRC: Crc<u32> = Crc::<u32>::new(&CRC_32_BZIP2);

/// Most bytes of an AAL5 PDU (the trailer's length field is 16 bits).
pub const MAX_PDU: usize = 65_535;

/// One cell's payload and its end-of-PDU mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellPayload {
    /// The 48 bytes.
    pub bytes: [u8; CELL_PAYLOAD as usize],
    /// Whether it is the PDU's last cell.
    pub end: bool,
}

/// Why a PDU cannot be segmented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("an AAL5 PDU holds at most {MAX_PDU} bytes, not {0}")]
pub struct PduTooLong(pub usize);

/// Cuts `pdu` into the cell payloads that carry it: ⌈(len + 8) / 48⌉ of them.
pub fn segment(pdu: &[u8]) -> Result<Vec<CellPayload>, PduTooLong> {
    let len = u16::try_from(pdu.len()).map_err(|_| PduTooLong(pdu.len()))?;
    let cells = cells_for_pdu(pdu.len() as u64) as usize;
    let mut frame = vec![0u8; cells * CELL_PAYLOAD as usize];
    frame[..pdu.len()].copy_from_slice(pdu);
    let trailer = frame.len() - AAL5_TRAILER as usize;
    // CPCS-UU and CPI stay 0.
    frame[trailer + 2..trailer + 4].copy_from_slice(&len.to_be_bytes());
    let crc = AAL5_CRC.checksum(&frame[..trailer + 4]);
    frame[trailer + 4..].copy_from_slice(&crc.to_be_bytes());
    Ok(frame
        .chunks_exact(CELL_PAYLOAD as usize)
        .enumerate()
        .map(|(i, chunk)| CellPayload {
            bytes: chunk.try_into().expect("chunks of 48"),
            end: i + 1 == cells,
        })
        .collect())
}

/// What the reassembler made of an end-of-PDU cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reassembled {
    /// The PDU, byte for byte.
    Pdu(Vec<u8>),
    /// The cells gathered did not pass the trailer's checks (a cell was lost, or the cells of
    /// two PDUs ran together when an end-of-PDU cell was lost): discarded.
    Discarded,
}

/// Reassembles one virtual circuit's PDUs from its cell payloads, in order. Holds at most one
/// PDU's worth of cells: a run of cells longer than the largest PDU is discarded as it grows.
#[derive(Clone, Debug, Default)]
pub struct ByteReassembler {
    frame: Vec<u8>,
    overflowed: bool,
}

impl ByteReassembler {
    /// Most payload bytes a PDU's cells can hold.
    const MAX_FRAME: usize =
        (MAX_PDU + AAL5_TRAILER as usize).div_ceil(CELL_PAYLOAD as usize) * CELL_PAYLOAD as usize;

    /// A cell arrived; returns what its PDU came to if it ends one.
    pub fn push(&mut self, cell: &CellPayload) -> Option<Reassembled> {
        if self.frame.len() + cell.bytes.len() > Self::MAX_FRAME {
            self.overflowed = true;
            self.frame.clear();
        }
        self.frame.extend_from_slice(&cell.bytes);
        if !cell.end {
            return None;
        }
        let frame = std::mem::take(&mut self.frame);
        let overflowed = std::mem::take(&mut self.overflowed);
        Some(Self::check(&frame, overflowed))
    }

    fn check(frame: &[u8], overflowed: bool) -> Reassembled {
        let trailer = frame.len() - AAL5_TRAILER as usize;
        let len = usize::from(u16::from_be_bytes([frame[trailer + 2], frame[trailer + 3]]));
        let crc = u32::from_be_bytes([
            frame[trailer + 4],
            frame[trailer + 5],
            frame[trailer + 6],
            frame[trailer + 7],
        ]);
        let cells = frame.len() / CELL_PAYLOAD as usize;
        let whole = !overflowed
            && cells as u64 == cells_for_pdu(len as u64)
            && AAL5_CRC.checksum(&frame[..trailer + 4]) == crc;
        if whole {
            Reassembled::Pdu(frame[..len].to_vec())
        } else {
            Reassembled::Discarded
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abr::Reassembler;

    fn pdu(n: usize, salt: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt))
            .collect()
    }

    #[test]
    fn the_crc_is_aal5s() {
        // The check value of the CRC-32/BZIP2 parameters (over "123456789").
        assert_eq!(AAL5_CRC.checksum(b"123456789"), 0xFC89_1918);
    }

    #[test]
    fn a_pdu_of_any_size_takes_the_right_cells_and_comes_back_byte_exact() {
        let mut r = ByteReassembler::default();
        for n in (1..=3000).chain([9000, MAX_PDU]) {
            let bytes = pdu(n, n as u8);
            let cells = segment(&bytes).unwrap();
            assert_eq!(cells.len() as u64, cells_for_pdu(n as u64), "{n}");
            assert!(cells[..cells.len() - 1].iter().all(|c| !c.end), "{n}");
            let mut out = None;
            for c in &cells {
                assert!(out.is_none(), "{n}: delivered before its last cell");
                out = r.push(c);
            }
            assert_eq!(out, Some(Reassembled::Pdu(bytes)), "{n}");
        }
        assert_eq!(segment(&vec![0; MAX_PDU + 1]), Err(PduTooLong(MAX_PDU + 1)));
    }

    /// Carries PDUs of `sizes` losing the cells whose overall index is in `lost`, through the
    /// byte reassembler and through the simulator's counting one; both must agree.
    fn carry(sizes: &[usize], lost: &[usize]) -> Vec<bool> {
        let mut bytes = ByteReassembler::default();
        let mut counting = Reassembler::default();
        let mut index = 0;
        let mut out = Vec::new();
        for (k, &n) in sizes.iter().enumerate() {
            let data = pdu(n, k as u8);
            for c in segment(&data).unwrap() {
                let dropped = lost.contains(&index);
                index += 1;
                if dropped {
                    continue;
                }
                let got = bytes.push(&c);
                if c.end {
                    let counted = counting.on_end_of_pdu(n as u64);
                    let whole = got == Some(Reassembled::Pdu(data.clone()));
                    assert!(whole || got == Some(Reassembled::Discarded));
                    assert_eq!(whole, counted, "PDU {k} of {n} B");
                    out.push(whole);
                } else {
                    counting.on_cell();
                }
            }
        }
        out
    }

    #[test]
    fn one_lost_cell_loses_exactly_its_packet() {
        // 1500 B (32 cells), 40 B (1 cell), 100 B (3 cells), 1500 B (32 cells).
        let sizes = [1500, 40, 100, 1500];
        assert_eq!(carry(&sizes, &[]), vec![true; 4]);
        for lost in [0, 5, 30] {
            assert_eq!(carry(&sizes, &[lost]), vec![false, true, true, true]);
        }
        assert_eq!(carry(&sizes, &[32]), vec![true, true, true]);
        assert_eq!(carry(&sizes, &[33]), vec![true, true, false, true]);
        assert_eq!(carry(&sizes, &[36 + 31]), vec![true, true, true]);
        // Losing an end-of-PDU cell runs its PDU into the next: both are lost.
        assert_eq!(carry(&sizes, &[31]), vec![false, true, true]);
    }

    #[test]
    fn every_single_lost_cell_of_a_mixed_run_loses_at_most_its_pdus() {
        let sizes: Vec<usize> = (0..12).map(|k| 1 + k * 211).collect();
        let total: usize = sizes
            .iter()
            .map(|&n| cells_for_pdu(n as u64) as usize)
            .sum();
        for lost in 0..total {
            let delivered = carry(&sizes, &[lost]);
            let missing = sizes.len() - delivered.iter().filter(|&&d| d).count();
            // One PDU, or two when the lost cell ended one.
            assert!(
                (1..=2).contains(&missing),
                "cell {lost}: {missing} PDUs lost"
            );
        }
    }
}
