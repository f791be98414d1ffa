//! Events: the machine-readable catalogue every payload is checked against, and the relay
//! that carries the transactional outbox to the Redis stream.

pub mod catalogue;
pub mod relay;
pub mod stream_record;
