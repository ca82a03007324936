//! Token bucket filter with Linux `tbf` semantics: rate, burst, limit, optional peak rate (PROTOCOLS.md §8.2).
