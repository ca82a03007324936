//! RED (Floyd & Jacobson 1993) as in ns-2 `Queue/RED`, with gentle mode (PROTOCOLS.md §8.1).
