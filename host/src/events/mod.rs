//! Events on their way out: the outbox as the relay reads it, the stream encoding of each
//! event, and the relay that carries the transactional outbox to the Redis stream. (The
//! catalogue every payload is checked against belongs to the domain: `domain::catalogue`.)

pub mod outbox;
pub mod relay;
pub mod stream_record;
