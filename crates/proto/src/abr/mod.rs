//! ATM ABR (paper 003's cure; PROTOCOLS.md §7): the pieces that do not depend on how the
//! simulator carries cells, each a sans-IO state machine or pure arithmetic.
//!
//! - [`cell`]: the 53-byte cell, resource-management (RM) cell fields, AAL5 segmentation
//!   arithmetic and a reassembler that delivers a PDU only when every one of its cells arrived;
//! - [`source`]: the ABR source end system (TM 4.0 §5.10.4, simplified as in §7.2): ACR, in-rate
//!   forward RM cells (Nrm, Mrm, Trm), the ADTF and CRM/CDF rules, backward RM processing, and
//!   the destination's turn-around;
//! - [`erica`]: the ERICA explicit-rate computation of one switch output port (§7.1), basic and
//!   complete variants (the simulator's port discipline around it is in `fairstream-net`);
//! - [`vc`]: a flow carried on ABR virtual circuits: the end systems that segment the wrapped
//!   endpoint's packets into cells, pace them at ACR and reassemble what arrives;
//! - [`aal5`]: AAL5 segmentation and reassembly on real bytes, with the trailer's length and
//!   CRC-32, against which the simulator's counting is checked.

pub mod aal5;
pub mod cell;
pub mod erica;
pub mod metrics;
pub mod source;
pub mod vc;

pub use cell::{
    AAL5_TRAILER, CELL_PAYLOAD, CELL_SIZE, CellBody, CellHeader, Reassembler, RmCell, RmDirection,
    backward_rm, cells_for_pdu, vc_id,
};
pub use erica::{Erica, EricaParams, EricaVariant};
pub use source::{AbrParams, AbrParamsError, AbrSource, CellKind, turn_around};
pub use vc::{AbrFlowConfig, AbrVc, PduStore};
