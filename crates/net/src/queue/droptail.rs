//! Drop-tail FIFO with a limit in packets or bytes.
