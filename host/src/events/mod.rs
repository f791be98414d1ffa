//! Events on their way out: the outbox as the relay reads it, the stream encoding of each
//! event, the relay that carries the transactional outbox to the Redis stream, and the
//! retention that takes published events out of the log once they are old. (The
//! catalogue every payload is checked against belongs to the domain: `domain::catalogue`.)

pub mod relay;
pub mod retention;
pub mod stream_record;
