//! ATM ABR (paper 003's cure; PROTOCOLS.md §7): the pieces that do not depend on how the
//! simulator carries cells, each a sans-IO state machine or pure arithmetic.
//!
//! - [`cell`]: the 53-byte cell, resource-management (RM) cell fields, AAL5 segmentation
//!   arithmetic and a reassembler that delivers a PDU only when every one of its cells arrived;
//! - [`source`]: the ABR source end system (TM 4.0 §5.10.4, simplified as in §7.2): ACR, in-rate
//!   forward RM cells (Nrm, Mrm, Trm), the ADTF and CRM/CDF rules, backward RM processing, and
//!   the destination's turn-around;
//! - [`erica`]: the ERICA explicit-rate computation of one switch output port (§7.1), basic and
//!   complete variants.
//!
//! Carrying cells through the simulator (virtual circuits at the hosts, ERICA at the ports, the
//! `abr-*` reproductions) is the remaining part of issue 10 and builds on these.

pub mod cell;
pub mod erica;
pub mod source;

pub use cell::{AAL5_TRAILER, CELL_PAYLOAD, CELL_SIZE, Reassembler, RmCell, RmDirection};
pub use erica::{Erica, EricaParams, EricaVariant};
pub use source::{AbrParams, AbrParamsError, AbrSource, CellKind, turn_around};
