//! Packet error models of a lossy link: none, Bernoulli packet error rate, Gilbert-Elliott.
